"""LGIP statistics in pure NumPy: E_inv, E_sens and PR with counts and image-bootstrap intervals.

This file imports nothing but NumPy, so `evaluate` can copy it beside ``lgip_metric.py`` when the
metric is loaded from a folder or from the Hub.

Definitions, as in the LGIP paper (Lee). For one base pair (image I, caption c) and its variants::

    E_inv  = mean over (I,c) [ mean over paraphrases c'  |s(I,c) - s(I,c')| ]
    E_sens = mean over (I,c) [ mean over flips c†       s(I,c) - s(I,c†)   ]
    PR     = mean over (I,c) [ mean over flips c†       1[s(I,c) > s(I,c†)] ]   (a tie is not positive)

The outer mean runs over the base pairs with at least one variant of that kind (or type). With
``pair_level=True`` every variant row weighs the same instead; outputs carry the label
``averaging: "base_pair" | "pair_level"``. Intervals are percentile intervals of a cluster
bootstrap that resamples images (all captions and variants of an image move together).

Headline vs per type: the global E_inv/E_sens/PR (the paper's Table 1) average over the paper's
core types only (``CORE_TYPES``: template/marker paraphrases, object/color/count flips), so they
stay comparable with the paper whatever other families a dataset holds; every type, core or not,
is reported in ``per_type``. A kind with no core type present falls back to all its types; the
result's ``headline_types`` names the types each headline kind averages over. The hard flips
(``HARD_TYPES``, plausible in context) have a headline block of their own, ``result["hard"]``
(E_sens, PR over the hard types present; ``headline_types["hard"]`` names them), beside Table 1.

n-way scoring (SNARE) for the word-order scrambles (``NWAY_TYPES``): per base pair,
``1[s(I,c) > max over its scrambles of that type s(I,c~)]`` (a tie fails), averaged over the base
pairs with at least one scramble of that type (``nway_accuracy``, always base-pair averaged).

Pipeline: ``summarize`` (rows -> per base pair sums; summaries of disjoint row sets ``merge``)
-> ``statistics`` (point estimates, counts, intervals). ``compare`` does the paired comparison
of two models scored on the same rows (paired bootstrap and McNemar's exact test).

The code lives in ``stats_*`` files beside this one, one job each: checking and encoding the inputs
(:mod:`~lgip_metric.stats_inputs`, in the names of :mod:`~lgip_metric.stats_names`; the ids' checks and codes in
:mod:`~lgip_metric.stats_ids`), the per base pair sums (:mod:`~lgip_metric.stats_sums`), the per-image
sums and the bootstrap (:mod:`~lgip_metric.stats_bootstrap`), the result's shape
(:mod:`~lgip_metric.stats_result`) and the paired comparison (:mod:`~lgip_metric.stats_paired`); this
module holds the entry points and gives every public name of them. All are pure NumPy and import one
another relatively, so ``evaluate`` copies them beside ``lgip_metric.py``, which names each of them.
"""
from __future__ import annotations

from .stats_bootstrap import interval, multiplicities, per_image, replicates, resample_images
from .stats_inputs import MAX_ABS_SCORE, LGIPInputError, SharedCaptionWarning, score_array
from .stats_names import (AVERAGING, CORE_TYPES, DECLARED_TYPES, FLIP, HARD, HARD_TYPES, KINDS, METRICS, NWAY, NWAY_TYPES,
                          PARAPHRASE)
from .stats_paired import compare, mcnemar_exact
from .stats_result import absent_statistics, bootstrap_info, check_both_kinds, check_options, empty_result, interval_label, place
from .stats_sums import Summary, hard_columns, headline_columns, merge, summarize

__all__ = ["AVERAGING", "CORE_TYPES", "DECLARED_TYPES", "FLIP", "HARD", "HARD_TYPES", "KINDS", "MAX_ABS_SCORE", "METRICS",
           "NWAY", "NWAY_TYPES", "PARAPHRASE", "LGIPInputError", "SharedCaptionWarning", "Summary", "check_options",
           "compare", "hard_columns", "headline_columns", "interval_label", "lgip_statistics", "mcnemar_exact", "merge", "resample_images",
           "score_array", "statistics", "summarize"]


def statistics(
    summary: Summary,
    *,
    pair_level: bool = False,
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    require_both_kinds: bool = True,
) -> dict:
    """E_inv, E_sens, PR globally and per type, with counts and (if ``bootstrap``) intervals.

    Returns a JSON-ready dict: ``averaging`` (``"base_pair"`` or ``"pair_level"``), the three
    metrics, ``counts`` (per metric: ``base_pairs``, ``variant_rows``, ``images``), ``intervals``
    (per metric: ``[low, high]``), ``per_type`` (the same per type, with its ``kind``) and
    ``bootstrap`` (resamples, seed, confidence, unit "image").

    A kind without rows is an error unless ``require_both_kinds=False`` (flips alone, paraphrases
    alone, one caption with no word to flip): then its metrics are None, with no counts or
    intervals, and ``absent`` names each of them with the reason.
    """
    check_options(bootstrap, confidence)
    if require_both_kinds:
        check_both_kinds(summary)
    absent = absent_statistics(summary)
    resamples = multiplicities(len(summary.image_keys), bootstrap, seed) if bootstrap else None  # drawn meanwhile
    columns, numerators, denominators, which, support = per_image(summary, pair_level)
    values = numerators.sum(axis=0) / denominators.sum(axis=0)[which]
    intervals = (interval(replicates(numerators, denominators, which, resamples, bootstrap), confidence)
                 if bootstrap else None)
    result = empty_result(columns, ("counts", "intervals") if bootstrap else ("counts",), pair_level)
    for j, ((type_, _, metric), (image_pairs, image_rows)) in enumerate(zip(columns, support)):
        block = place(result, type_)
        block[metric] = float(values[j])
        block["counts"][metric] = {
            "base_pairs": int(image_pairs.sum()),
            "variant_rows": int(image_rows.sum()),
            "images": int((image_pairs > 0).sum()),
        }
        if intervals is not None:
            block["intervals"][metric] = [float(intervals[j, 0]), float(intervals[j, 1])]
    result["headline_types"] = {kind: [summary.strata[i][0] for i in headline_columns(summary.strata, kind)]
                                for kind in KINDS}
    if hard := hard_columns(summary.strata):
        result["headline_types"][HARD] = [summary.strata[i][0] for i in hard]
    result["bootstrap"] = bootstrap_info(bootstrap, seed, confidence)
    if absent:
        result["absent"] = absent
    return result


def lgip_statistics(
    original_scores,
    variant_scores,
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
    require_both_kinds: bool = True,
) -> dict:
    """``statistics(summarize(...))``: the LGIP statistics of one model straight from its rows
    (``require_both_kinds=False``, as the ``evaluate`` module passes: flips alone, or paraphrases alone, are
    enough, the others named in ``absent``; see ``statistics``)."""
    summary = summarize(original_scores, variant_scores, variant_kinds, variant_types, caption_ids, image_ids,
                        extra_types=extra_types)
    return statistics(summary, pair_level=pair_level, bootstrap=bootstrap, seed=seed, confidence=confidence,
                      require_both_kinds=require_both_kinds)
