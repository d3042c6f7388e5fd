"""The one adapter from a score table (``scores.parquet``'s columns) to the statistics' inputs.

Every caller that computes LGIP statistics from score rows (``lgip evaluate``, the blind baselines,
the report's paired comparisons) goes through :func:`stats_inputs`; a harness of a user's own goes
through :func:`metric_inputs` (``lgip_metric.metric_inputs``), which takes the table in any form a
run leaves it. Variant types are checked against the declared ones (``stats.DECLARED_TYPES``); types
of a user's own perturbations are accepted only when named in ``extra_types``.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from lgip_dataset.errors import DataError
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


def metric_inputs(scores) -> dict[str, np.ndarray]:
    """The ``evaluate`` module's inputs (``original_scores``, ``variant_scores``, ``variant_kinds``,
    ``variant_types``, ``caption_ids``, ``image_ids``, one entry per row) of a score table: a DataFrame or
    Arrow table with ``scores.parquet``'s columns, the path of a ``scores.parquet`` or of the run folder
    holding it, or what :func:`~lgip_metric.score` / :func:`~lgip_metric.evaluate_model` returned.

    Pass them to ``evaluate.load(str(METRIC_PATH)).compute(**inputs)`` (or ``add_batch``), or to
    ``lgip_metric.stats.lgip_statistics(**inputs)``: both give the statistics ``lgip evaluate`` gives."""
    frame, where = _score_frame(scores)
    missing = [column for column in STATS_COLUMNS if column not in frame]
    if missing:
        raise DataError(f"{where} lacks the score column(s) {', '.join(missing)}: a score table has the columns of "
                        f"scores.parquet ({', '.join(STATS_COLUMNS)}, ...), as `lgip score` writes it")
    return stats_inputs(frame)


def _score_frame(scores) -> tuple[pd.DataFrame, str]:
    """The score table of what :func:`metric_inputs` takes, and how to name it in a message."""
    if isinstance(scores, pd.DataFrame):
        return scores, "the score table"
    if isinstance(scores, pa.Table):
        return scores.to_pandas(), "the score table"
    if isinstance(scores, (str, Path)):
        path = Path(scores)
        path = path / "scores.parquet" if path.is_dir() else path
        try:
            names = pq.read_schema(path).names
            return pd.read_parquet(path, columns=[c for c in names if c in STATS_COLUMNS]), str(path)
        except FileNotFoundError:
            raise DataError(f"{path} not found: give a scores.parquet, the run folder holding one, or a DataFrame "
                            "of its columns") from None
        except (pa.ArrowInvalid, OSError) as err:
            raise DataError(f"{path} is not a readable parquet file ({err}); give the scores.parquet `lgip score` "
                            "wrote") from None
    if isinstance(getattr(scores, "frame", None), pd.DataFrame):
        return scores.frame, f"the score table of {type(scores).__name__}"
    if hasattr(scores, "read_scores"):  # Results loaded from a results.json: its score file beside it
        scores.check_scores()
        return scores.read_scores(list(STATS_COLUMNS)), str(scores.scores_path)
    raise DataError(f"metric_inputs takes a score table (DataFrame, Arrow table, scores.parquet or its folder, "
                    f"ScoreRun or Results), got {type(scores).__name__}")
