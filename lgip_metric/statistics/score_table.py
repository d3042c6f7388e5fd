"""The one adapter from a score table (``scores.parquet``'s columns) to the statistics' inputs.

Every caller that computes LGIP statistics from score rows (``lgip evaluate``, the blind baselines,
the report's paired comparisons) goes through :func:`stats_inputs`. Variant types are checked
against the declared ones (``stats.DECLARED_TYPES``); types of a user's own perturbations are
accepted only when named in ``extra_types``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from lgip_metric import stats

LABELS = {"kind": "variant_kinds", "type": "variant_types", "caption_id": "caption_ids", "image_id": "image_ids"}
SCORES = {"s_original": "original_scores", "s_variant": "variant_scores"}
STATS_COLUMNS = (*SCORES, *LABELS)  # the score-table columns the statistics read


def labels(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """``variant_kinds``, ``variant_types``, ``caption_ids``, ``image_ids`` of a score table."""
    return {argument: frame[column].to_numpy() for column, argument in LABELS.items()}


def stats_inputs(frame: pd.DataFrame, original=None, variant=None) -> dict[str, np.ndarray]:
    """The keyword arguments of ``stats.lgip_statistics`` for the rows of ``frame``: its
    ``s_original``/``s_variant`` columns, or the scores of another scorer of the same rows
    (``original``/``variant``, e.g. a language model's)."""
    return {"original_scores": frame["s_original"].to_numpy() if original is None else np.asarray(original),
            "variant_scores": frame["s_variant"].to_numpy() if variant is None else np.asarray(variant),
            **labels(frame)}


def statistics(frame: pd.DataFrame, original=None, variant=None, *, extra_types=(), **options) -> dict:
    """``stats.lgip_statistics`` of the rows of ``frame`` (``options``: pair_level, bootstrap, seed, confidence)."""
    return stats.lgip_statistics(**stats_inputs(frame, original, variant), extra_types=extra_types, **options)
