"""The paired comparison of two models scored on the same rows: differences with paired image-bootstrap
intervals and McNemar's exact test; part of :mod:`lgip_metric.stats`."""
from __future__ import annotations

import numpy as np

from .stats_bootstrap import interval, multiplicities, per_image, replicates
from .stats_inputs import encode
from .stats_names import FLIP
from .stats_result import bootstrap_info, check_options, check_both_kinds, empty_result, place
from .stats_sums import aggregate, headline_columns


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value: binomial test of ``a_only`` of ``a_only + b_only`` at 1/2.

    Equals ``scipy.stats.binomtest(a_only, a_only + b_only, 0.5).pvalue``; computed in log space.
    """
    n, k = int(a_only) + int(b_only), min(int(a_only), int(b_only))
    if n == 0 or 2 * k == n:
        return 1.0
    i = np.arange(1, k + 1, dtype=np.float64)
    log_pmf = np.concatenate([[0.0], np.cumsum(np.log(n - i + 1) - np.log(i))]) - n * np.log(2.0)
    top = log_pmf.max()
    return float(min(1.0, 2.0 * np.exp(top + np.log(np.exp(log_pmf - top).sum()))))


def _mcnemar(positive_a: np.ndarray, positive_b: np.ndarray) -> dict:
    a_only = int((positive_a & ~positive_b).sum())
    b_only = int((~positive_a & positive_b).sum())
    return {
        "both": int((positive_a & positive_b).sum()),
        "a_only": a_only,
        "b_only": b_only,
        "neither": int((~positive_a & ~positive_b).sum()),
        "p_value": mcnemar_exact(a_only, b_only),
    }


def compare(
    original_scores_a,
    variant_scores_a,
    original_scores_b,
    variant_scores_b,
    variant_kinds,
    variant_types,
    caption_ids,
    image_ids,
    *,
    extra_types=(),
    pair_level: bool = False,
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict:
    """Model A minus model B on the same rows: differences with paired image-bootstrap intervals.

    Both models' replicates use the same resampled images. ``mcnemar`` tests whether the two
    models order original-vs-flip differently (exact binomial McNemar on the discordant flip
    rows; rows are treated as independent, which clustering by image makes optimistic - prefer
    the bootstrap interval of the PR difference), on the headline flip types and per flip type.
    """
    check_options(bootstrap, confidence)
    scores, rows = encode(
        {"original_scores_a": original_scores_a, "variant_scores_a": variant_scores_a,
         "original_scores_b": original_scores_b, "variant_scores_b": variant_scores_b},
        variant_kinds, variant_types, caption_ids, image_ids, extra_types,
    )
    a = aggregate(rows, scores["original_scores_a"], scores["variant_scores_a"])
    b = aggregate(rows, scores["original_scores_b"], scores["variant_scores_b"])
    check_both_kinds(a)
    resamples = multiplicities(len(a.image_keys), bootstrap, seed) if bootstrap else None  # drawn meanwhile
    columns, num_a, den, which, _ = per_image(a, pair_level)
    _, num_b, _, _, _ = per_image(b, pair_level)
    value_a, value_b = (num.sum(axis=0) / den.sum(axis=0)[which] for num in (num_a, num_b))
    intervals = None
    if bootstrap:
        reps = replicates(np.hstack([num_a, num_b]), den, np.concatenate([which, which]), resamples, bootstrap)
        intervals = interval(reps[:, : len(columns)] - reps[:, len(columns) :], confidence)
    result = empty_result(columns, (), pair_level)
    for j, (type_, _, metric) in enumerate(columns):
        entry = {"a": float(value_a[j]), "b": float(value_b[j]), "difference": float(value_a[j] - value_b[j])}
        if intervals is not None:
            entry["interval"] = [float(intervals[j, 0]), float(intervals[j, 1])]
        place(result, type_)[metric] = entry
    flips = np.isin(rows.stratum, headline_columns(rows.strata, FLIP))
    pos_a = scores["original_scores_a"] > scores["variant_scores_a"]
    pos_b = scores["original_scores_b"] > scores["variant_scores_b"]
    result["mcnemar"] = {"test": "exact binomial McNemar, two-sided", **_mcnemar(pos_a[flips], pos_b[flips])}
    for code, (type_, kind) in enumerate(rows.strata):
        if kind == FLIP:
            mask = rows.stratum == code
            result["per_type"][type_]["mcnemar"] = _mcnemar(pos_a[mask], pos_b[mask])
    result["bootstrap"] = bootstrap_info(bootstrap, seed, confidence)
    return result
