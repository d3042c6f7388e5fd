"""The LGIP dataset contract: config names, columns and their `datasets.Features`.

A built LGIP folder (and the Hub dataset) has three configs, each with one split, ``test``:

``images``    one row per image, stored once: ``image_id`` plus the JPEG bytes (``Image()``).
``captions``  one row per human caption, with its paraphrases and flips as nested lists; rows
              reference images by ``image_id``.
``pairs``     the flat analysis view: one row per (caption, variant). This is what the scoring
              engine reads and what ``score`` files are keyed by (``variant_id``).
``groups``    (optional) EqBen/Winoground-style 2x2 groups: two images whose human captions differ
              by exactly one flipped word, e.g. image A "a red bus ..." and image B "a blue bus ...".
``plausibility`` (optional) one row per hard flip (``hard_object``/``hard_color``/``hard_count``),
              keyed by ``variant_id``: the figures its replacement was chosen by. A separate config,
              so folders built before it load unchanged.
``validated`` (optional) the ``pairs`` rows that ``lgip evaluate --validated`` scores
              (:func:`lgip_dataset.judging.validated`), written when a label store gave any flip labels.

``kind`` says which statistic a variant feeds: ``paraphrase`` (E_inv) or ``flip`` (E_sens, PR).
``type`` is the label statistics are broken down by: the registered family that made the variant
(``template``, ``marker``, ``object``, ``color``, ``count``, ...) or, for a flip imported by
``lgip build --from sugarcrepe``, its probe set's subset (``sugarcrepe_replace_obj``, ...). The
registry's ``variant_types()`` gives every type its kind and group (``core``, ``hard``, ``extended``,
``imported``).

Folders built before ``type`` was a variant's only label also hold a ``family`` column in ``pairs``
and field in the ``captions`` variant lists (a copy of ``type``, or ``sugarcrepe`` for imported
flips): :data:`RETIRED_FIELDS`. They load as written, and nothing reads them. Folders built before
0.2.0 lack the :data:`ADDED_FIELDS`: ``images.converted_from`` (the ``"<format> <mode>"`` of an image
stored as its 8-bit rendering, :func:`lgip_dataset.files.images.rendered`; null for an image stored as its
file is) and ``captions.caption_source`` (the source's text of a caption the build cleaned,
:func:`lgip_dataset.sources.coco.normalise_caption`; null where only whitespace changed); folders built before
label stores lack ``pairs.judged`` (a flip's blind labels from a label store, :mod:`lgip_dataset.judging`: the
labels, their judges and the majority label; null for a flip nobody labelled, and for a paraphrase).
They load as written.
"""
from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import datasets

SPLIT = "test"
IMAGES, CAPTIONS, PAIRS, GROUPS = "images", "captions", "pairs", "groups"
PLAUSIBILITY, VALIDATED = "plausibility", "validated"
CONFIGS = (IMAGES, CAPTIONS, PAIRS)
# written when the build mines 2x2 groups / makes hard flips / applies labels to a flip
OPTIONAL_CONFIGS = (GROUPS, PLAUSIBILITY, VALIDATED)
DEFAULT_CONFIG = PAIRS

PARAPHRASE, FLIP = "paraphrase", "flip"
KINDS = (PARAPHRASE, FLIP)
CORE_FLIP_TYPES = ("object", "color", "count")

RETIRED_FIELDS = ("family",)  # variant fields of older folders that readers ignore (see above)
ADDED_FIELDS = ("converted_from", "caption_source", "judged")  # columns that older folders lack (see above)
FEATURE_NAMES = ("IMAGE_FEATURES", "VARIANT_FEATURES", "CAPTION_FEATURES", "PAIR_FEATURES", "GROUP_FEATURES",
                 "PLAUSIBILITY_FEATURES", "FEATURES")  # built on first use: importing ``datasets`` takes a second


@lru_cache(maxsize=1)
def _features() -> dict:
    """Every config's ``datasets.Features`` (and ``FEATURES``, config -> features), built once, on first use."""
    import datasets

    IMAGE_FEATURES = datasets.Features(
        {
            "image_id": datasets.Value("int64"),
            "image": datasets.Image(),
            "file_name": datasets.Value("string"),
            "width": datasets.Value("int32"),
            "height": datasets.Value("int32"),
            "license": datasets.Value("string"),
            "license_url": datasets.Value("string"),
            "flickr_url": datasets.Value("string"),
            "converted_from": datasets.Value("string"),  # "<format> <mode>" of an image stored as its 8-bit rendering
        }
    )

    VARIANT_FEATURES = {
        "variant_id": datasets.Value("string"),
        "text": datasets.Value("string"),
        "kind": datasets.Value("string"),
        "type": datasets.Value("string"),
        "original": datasets.Value("string"),
        "replacement": datasets.Value("string"),
        "span_start": datasets.Value("int32"),
        "span_end": datasets.Value("int32"),
    }

    CAPTION_FEATURES = datasets.Features(
        {
            "caption_id": datasets.Value("string"),
            "image_id": datasets.Value("int64"),
            "caption": datasets.Value("string"),
            "caption_source": datasets.Value("string"),  # the source's text where the build cleaned more than whitespace
            "paraphrases": datasets.List(VARIANT_FEATURES),
            "flips": datasets.List(VARIANT_FEATURES),
        }
    )

    PAIR_FEATURES = datasets.Features(
        {
            "row_id": datasets.Value("string"),
            "caption_id": datasets.Value("string"),
            "image_id": datasets.Value("int64"),
            "caption": datasets.Value("string"),
            **{k: v for k, v in VARIANT_FEATURES.items() if k != "text"},
            "variant": datasets.Value("string"),
            "judged": {  # a flip's blind labels (null: none); ``majority`` is lgip_dataset.judging.majority's
                "labels": datasets.List(datasets.Value("string")),
                "judges": datasets.List(datasets.Value("string")),
                "majority": datasets.Value("string"),
            },
        }
    )

    GROUP_FEATURES = datasets.Features(
        {
            "group_id": datasets.Value("string"),
            "type": datasets.Value("string"),
            "image_a": datasets.Value("int64"),
            "image_b": datasets.Value("int64"),
            "caption_a_id": datasets.Value("string"),
            "caption_b_id": datasets.Value("string"),
            "caption_a": datasets.Value("string"),
            "caption_b": datasets.Value("string"),
            "word_a": datasets.Value("string"),
            "word_b": datasets.Value("string"),
            "span_start": datasets.Value("int32"),
        }
    )

    PLAUSIBILITY_FEATURES = datasets.Features(
        {
            "variant_id": datasets.Value("string"),
            "caption_id": datasets.Value("string"),
            "image_id": datasets.Value("int64"),
            "type": datasets.Value("string"),
            "lm_delta": datasets.Value("float64"),  # log P(flip) - log P(caption), bigram KN of the other folds
            "context_fit": datasets.Value("float64"),  # share of the context words that take the replacement
            "typicality": datasets.Value("float64"),  # log P(caption words | replacement) - log P(... | original)
            "candidates": datasets.Value("int32"),  # the site's candidates that fit their context
            "context": datasets.List(datasets.Value("string")),  # the context words (keys) the fit was measured on
            "trigram_delta": datasets.Value("float64"),  # the same by the trigram KN, which the set's choice balances
            "fold": datasets.Value("int32"),  # the caption's image fold; its statistics came from the other folds
        }
    )

    FEATURES = {IMAGES: IMAGE_FEATURES, CAPTIONS: CAPTION_FEATURES, PAIRS: PAIR_FEATURES, GROUPS: GROUP_FEATURES,
                PLAUSIBILITY: PLAUSIBILITY_FEATURES, VALIDATED: PAIR_FEATURES}
    return {name: value for name, value in locals().items() if name in FEATURE_NAMES}


def __getattr__(name: str):
    """The features (:data:`FEATURE_NAMES`), built when first asked for (PEP 562), so that a reader of the
    config names alone (the scoring engine) never imports ``datasets``."""
    if name in FEATURE_NAMES:
        globals().update(_features())
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def loads_as_written(stored: datasets.Features, config: str) -> bool:
    """Whether a shard of ``config`` with the ``stored`` features is of this contract: its features less
    :data:`RETIRED_FIELDS` are the contract's, less those :data:`ADDED_FIELDS` a folder built before them lacks."""
    import datasets

    current = without_retired(stored)
    contract = _features()["FEATURES"][config]
    return set(contract) - set(current) <= set(ADDED_FIELDS) and current == datasets.Features(
        {name: feature for name, feature in contract.items() if name in current})


def without_retired(features: datasets.Features) -> datasets.Features:
    """``features`` less the :data:`RETIRED_FIELDS`, at the top level and inside nested variant lists."""
    import datasets

    def current(feature):
        if isinstance(feature, datasets.List):
            return datasets.List(current(feature.feature))
        if isinstance(feature, dict):
            return {name: current(f) for name, f in feature.items() if name not in RETIRED_FIELDS}
        return feature
    return datasets.Features(current(dict(features)))

# Columns of a score file (``scores.parquet``) written by the scoring engine: one row per
# ``pairs`` row, in the same order. ``t_sim`` = cos(f_text(caption), f_text(variant)), the model's
# text-only similarity (a blind baseline); score files written before it existed lack it.
SCORE_COLUMNS = (
    "row_id",
    "image_id",
    "caption_id",
    "variant_id",
    "kind",
    "type",
    "caption",
    "variant",
    "s_original",
    "s_variant",
    "t_sim",
)
SCORE_VALUES = ("s_original", "s_variant", "t_sim")  # the computed columns; the rest come from ``pairs``

# Columns of ``groups_scores.parquet`` (written when the dataset has a ``groups`` config): one row
# per group with the four similarities s(image, caption) of its 2x2 design.
GROUP_SCORE_COLUMNS = (
    "group_id", "type", "image_a", "image_b", "caption_a_id", "caption_b_id",
    "s_a_ca", "s_a_cb", "s_b_ca", "s_b_cb",
)
