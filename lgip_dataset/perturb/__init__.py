"""The LGIP perturbation engine: meaning-preserving paraphrases and object/color/count flips.

    from lgip_dataset.perturb import Perturber
    result = Perturber(k_same=6, k_diff=6).perturb("Two dogs playing in the snow.", seed=0)

It may import the top-level modules of :mod:`lgip_dataset` (``errors``, the n-gram LMs) and nothing else of the
package: the readers, the choice of flips, judging and the build sit above it.
"""
from lgip_dataset.perturb.lexicon import LEXICON_VERSION
from lgip_dataset.perturb.perturber import MAX_CAPTION_CHARS, Perturber
from lgip_dataset.perturb.variant import PerturbResult, Variant

__all__ = ["LEXICON_VERSION", "MAX_CAPTION_CHARS", "PerturbResult", "Perturber", "Variant"]
