"""What LGIP says about itself wherever it is published: the citation, homepage, code and license.

Imported by the ``evaluate`` module (which ships it beside ``lgip_metric.py``), by the dataset card
and checked against the metric card, so the three never cite LGIP differently.
"""
CITATION = """@misc{lee2025lgip,
  title  = {Language-Guided Invariance Probing of Vision-Language Models},
  author = {Lee, Jae Joong},
  year   = {2025},
  note   = {Department of Computer Science, Purdue University}
}"""
HOMEPAGE = "https://huggingface.co/datasets/lgip-benchmark/lgip"
CODEBASE_URLS = ["https://huggingface.co/spaces/lgip-benchmark/lgip"]  # the evaluate module's own Space
LICENSE = "apache-2.0"  # the code (setup.py); the dataset card states the data's licenses
