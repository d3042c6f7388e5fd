"""How LGIP is cited and where its dataset lives: the one home of these facts.

The dataset card cites this entry; the ``evaluate`` module ships a copy in its own ``about.py``
(it runs standalone on the Hub, without this package), tested equal to this one.
"""
CITATION = """@misc{lee2025lgip,
  title  = {Language-Guided Invariance Probing of Vision-Language Models},
  author = {Lee, Jae Joong},
  year   = {2025},
  note   = {Department of Computer Science, Purdue University}
}"""
HOMEPAGE = "https://huggingface.co/datasets/lgip-benchmark/lgip"
