"""What LGIP says about itself wherever it is published: the citation, homepage, code and license.

Imported by the ``evaluate`` module, which ships it beside ``lgip_metric.py`` and runs without the
rest of the package on the Hub; so ``VERSION``, ``CITATION`` and ``HOMEPAGE`` are copies of
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
HOMEPAGE = "https://huggingface.co/datasets/lgip-benchmark/lgip"
CODEBASE_URLS = ["https://huggingface.co/spaces/lgip-benchmark/lgip"]  # the evaluate module's own Space
LICENSE = "apache-2.0"  # the code (setup.py); the dataset card states the data's licenses
