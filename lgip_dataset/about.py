"""LGIP's version, how it is cited and where its dataset lives: the one home of these facts.

``lgip --version``, ``setup.py`` (which reads this file), ``lgip_build.json`` and the dataset card,
and ``results.json`` take the version from here; CHANGELOG.md's newest release is it. The dataset card
cites this entry; the ``evaluate`` module ships a copy of all three in its own ``about.py`` (it runs
standalone on the Hub, without this package), tested equal to this one, and its card names the version.
"""
VERSION = "0.2.0"
CITATION = """@misc{lee2025lgip,
  title  = {Language-Guided Invariance Probing of Vision-Language Models},
  author = {Lee, Jae Joong},
  year   = {2025},
  note   = {Department of Computer Science, Purdue University}
}"""
HOMEPAGE = "https://huggingface.co/datasets/lgip-benchmark/lgip"
