"""LGIP, text side: perturbation engine, COCO readers, dataset schema and materialisation.

``SAMPLE_DIR`` is the embedded sample: a Hub-layout LGIP folder built from CC BY / CC BY-SA
COCO val2017 images, loadable offline with ``datasets.load_dataset(str(SAMPLE_DIR), "pairs")``.
"""
from pathlib import Path

from lgip_dataset.about import VERSION as __version__

SAMPLE_DIR = Path(__file__).resolve().parent / "sample"
