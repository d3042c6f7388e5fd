"""The shape of a statistics result: options checked, the empty result with its blocks in reading order,
the block a number goes into, the bootstrap record; part of :mod:`lgip_metric.stats`."""
from __future__ import annotations

import numpy as np

from .stats_inputs import LGIPInputError
from .stats_names import FLIP, HARD, KINDS, METRICS, PARAPHRASE
from .stats_sums import Summary


MAX_BOOTSTRAP = 100_000  # resamples; 10,000 already pin a 95% interval's ends, and each costs memory per column


def check_options(bootstrap: int, confidence: float) -> None:
    """Refuse a number of resamples that is not a whole number from 0 to :data:`MAX_BOOTSTRAP` (a boolean
    included), or a coverage outside (0, 1)."""
    number = (int, float, np.integer, np.floating)
    whole = isinstance(bootstrap, number) and not isinstance(bootstrap, bool) and float(bootstrap).is_integer()
    if not whole or not 0 <= bootstrap <= MAX_BOOTSTRAP:
        raise LGIPInputError(f"bootstrap must be a whole number of resamples from 0 to {MAX_BOOTSTRAP:,}, got {bootstrap!r}")
    if isinstance(confidence, bool) or not isinstance(confidence, number) or not 0.0 < confidence < 1.0:
        raise LGIPInputError(f"confidence must be a number in (0, 1), got {confidence!r}")


def interval_label(confidence: float) -> str:
    """How an interval of coverage ``confidence`` is named: ``"95% CI"``, ``"90% CI"``, ``"97.5% CI"``."""
    return f"{confidence * 100:g}% CI"


def absent_statistics(summary: Summary) -> dict[str, str]:
    """The headline statistics a summary cannot give (its rows hold no variant of their kind), each with the reason;
    {} when it has rows of both kinds."""
    present = {summary.strata[i][1] for i in np.flatnonzero(np.bincount(summary.cell_stratum))}  # cells have rows
    return {metric: f"the {kind} set is empty: no row has kind {kind!r}, so {' and '.join(METRICS[kind])} cannot be "
                    "computed"
            for kind in (FLIP, PARAPHRASE) if kind not in present for metric in METRICS[kind]}


def check_both_kinds(summary: Summary) -> None:
    """Refuse a summary without rows of each kind (one of E_inv and E_sens/PR could not be computed)."""
    absent = absent_statistics(summary)
    if absent:
        raise LGIPInputError(next(iter(absent.values())))


def bootstrap_info(bootstrap: int, seed: int, confidence: float) -> dict:
    """The result's ``bootstrap`` record: resamples, seed, coverage, unit and method."""
    return {"resamples": int(bootstrap), "seed": int(seed), "confidence": float(confidence),
            "unit": "image", "method": "percentile"}


def empty_block(kinds, extra: tuple[str, ...]) -> dict:
    """An empty block with its keys in reading order: metrics, then ``extra`` sub-dicts."""
    return {**dict.fromkeys(m for kind in kinds for m in METRICS[kind]), **{key: {} for key in extra}}


def empty_result(columns: list, extra: tuple[str, ...], pair_level: bool) -> dict:
    """The empty result for ``columns``: label, global block, then one block per type."""
    result = {"averaging": "pair_level" if pair_level else "base_pair", **empty_block(KINDS, extra)}
    if any(type_ == (HARD,) for type_, _, _ in columns):
        result[HARD] = empty_block([FLIP], extra)
    result["per_type"] = {}
    for type_, kind, _ in columns:
        if isinstance(type_, str):
            result["per_type"].setdefault(type_, {"kind": kind, **empty_block([kind], extra)})
    return result


def place(result: dict, type_: str | None) -> dict:
    """The block of the global result (type None), of the hard flips (``(HARD,)``) or of one type."""
    if type_ is None:
        return result
    return result[HARD] if type_ == (HARD,) else result["per_type"][type_]
