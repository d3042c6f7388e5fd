"""LGIP's version, how it is cited and the Hub id it is published under: the one home of these facts.

``lgip --version``, ``setup.py`` (which reads this file), ``lgip_build.json`` and the dataset card,
and ``results.json`` take the version from here; CHANGELOG.md's newest release is it. The dataset card
cites this entry; the ``evaluate`` module ships a copy of them in its own ``about.py`` (it runs
standalone on the Hub, without this package), tested equal to this one, and its card names the version.
"""
VERSION = "0.2.0"
CITATION = """@misc{lee2025lgip,
  title  = {Language-Guided Invariance Probing of Vision-Language Models},
  author = {Lee, Jae Joong},
  year   = {2025},
  note   = {Department of Computer Science, Purdue University}
}"""
# The Hub id LGIP is published under: the dataset repo (``load_dataset(REPO_ID, "pairs")``) and the
# Space of the ``evaluate`` module (``evaluate.load(REPO_ID)``) share it. ``builders/publish.py --repo-id``
# publishes under another id and stamps that one into every card it uploads.
REPO_ID = "lgip-benchmark/lgip"
HOMEPAGE = f"https://huggingface.co/datasets/{REPO_ID}"
