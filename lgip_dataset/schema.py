"""The LGIP dataset contract: config names, columns and their `datasets.Features`.

A built LGIP folder (and the Hub dataset) has three configs, each with one split, ``test``:

``images``    one row per image, stored once: ``image_id`` plus the JPEG bytes (``Image()``).
``captions``  one row per human caption, with its paraphrases and flips as nested lists; rows
              reference images by ``image_id``.
``pairs``     the flat analysis view: one row per (caption, variant). This is what the scoring
              engine reads and what ``score`` files are keyed by (``variant_id``).

``kind`` says which statistic a variant feeds: ``paraphrase`` (E_inv) or ``flip`` (E_sens, PR).
``family`` names the generator that made it (``template``, ``marker``, ``object``, ``color``,
``count``, ...) and ``type`` the label statistics are broken down by (for flips the flip type).
"""
from __future__ import annotations

import datasets

SPLIT = "test"
IMAGES, CAPTIONS, PAIRS = "images", "captions", "pairs"
CONFIGS = (IMAGES, CAPTIONS, PAIRS)
DEFAULT_CONFIG = PAIRS

PARAPHRASE, FLIP = "paraphrase", "flip"
KINDS = (PARAPHRASE, FLIP)
CORE_FLIP_TYPES = ("object", "color", "count")

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
    }
)

VARIANT_FEATURES = {
    "variant_id": datasets.Value("string"),
    "text": datasets.Value("string"),
    "kind": datasets.Value("string"),
    "family": datasets.Value("string"),
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
    }
)

FEATURES = {IMAGES: IMAGE_FEATURES, CAPTIONS: CAPTION_FEATURES, PAIRS: PAIR_FEATURES}

# Columns of a score file (``scores.parquet``) written by the scoring engine: one row per
# ``pairs`` row, in the same order.
SCORE_COLUMNS = (
    "row_id",
    "image_id",
    "caption_id",
    "variant_id",
    "kind",
    "family",
    "type",
    "caption",
    "variant",
    "s_original",
    "s_variant",
)
