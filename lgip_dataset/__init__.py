"""LGIP, text side: perturbation engine, readers, the choice of flips, judging, dataset schema and the build.

One sub-package per job, each importing only those of a lower order (docs/architecture.md's rooms): :mod:`.files` (a
built folder's files, atomic writes, locks), :mod:`.records` (shipped measured figures), :mod:`.perturb` (the
perturbation engine), :mod:`.sources` (readers of a build's inputs), :mod:`.selection` (the choice of hard flips and its
text-only instruments), :mod:`.judging` (blind judging), :mod:`.writing` (the build's folder and card, the export) and
:mod:`.commands` (the text-side subcommands); the modules beside them are package-wide.

``SAMPLE_DIR`` is the embedded sample: a Hub-layout LGIP folder built from CC BY / CC BY-SA
COCO val2017 images, loadable offline with ``datasets.load_dataset(str(SAMPLE_DIR), "pairs")``.
"""
from pathlib import Path

from lgip_dataset import moved, old_names
from lgip_dataset.about import VERSION as __version__

SAMPLE_DIR = Path(__file__).resolve().parent / "sample"
old_names.install(moved.MOVED)  # modules that moved into sub-packages after 0.2.0 still import by their old names
