"""The names the statistics speak in: the two kinds of variant, the declared variant types and their
groups, the metrics of each kind and the averaging labels; part of :mod:`lgip_metric.stats`."""
from __future__ import annotations

from .variant_types import VARIANT_TYPES

PARAPHRASE, FLIP = "paraphrase", "flip"
KINDS = (PARAPHRASE, FLIP)
# The variant types LGIP's perturbation engine emits, with the kind (statistic) each feeds, from the
# table generated from the family registry (variant_types.py; see builders/derive_variant_types.py).
DECLARED_TYPES = {name: entry["kind"] for name, entry in VARIANT_TYPES.items()}
CORE_TYPES = tuple(name for name, entry in VARIANT_TYPES.items() if entry["group"] == "core")  # Table 1
HARD_TYPES = tuple(name for name, entry in VARIANT_TYPES.items() if entry["group"] == "hard")  # its own block
NWAY_TYPES = tuple(name for name, entry in VARIANT_TYPES.items() if entry["scoring"] == "nway")  # also n-way
HARD = "hard"  # the result's key of the hard flips' headline block
METRICS = {PARAPHRASE: ("E_inv",), FLIP: ("E_sens", "PR")}
NWAY = "nway_accuracy"
AVERAGING = {
    "base_pair": "mean over base (image, caption) pairs of the mean over their variants",
    "pair_level": "pair-level mean: every (image, caption, variant) row weighted equally",
}
