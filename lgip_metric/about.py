"""What LGIP says about itself wherever it is published: the citation, homepage, code and license.

Imported by the ``evaluate`` module, which ships it beside ``lgip_metric.py`` and runs without the
rest of the package on the Hub; so ``VERSION``, ``CITATION``, ``REPO_ID`` and ``HOMEPAGE`` are copies of
``lgip_dataset.about``'s (their home, which the dataset card cites), tested equal to them and to
the metric card's version and citation.
"""
VERSION = "0.2.0"
CITATION = """@misc{lee2025lgip,
  title  = {Language-Guided Invariance Probing of Vision-Language Models},
  author = {Lee, Jae Joong},
  year   = {2025},
  note   = {Department of Computer Science, Purdue University}
}"""
REPO_ID = "lgip-benchmark/lgip"  # the dataset repo and the evaluate module's Space (publish.py stamps its --repo-id)
HOMEPAGE = f"https://huggingface.co/datasets/{REPO_ID}"
CODEBASE_URLS = [f"https://huggingface.co/spaces/{REPO_ID}"]  # the evaluate module's own Space
LICENSE = "apache-2.0"  # the code (setup.py); the dataset card states the data's licenses
