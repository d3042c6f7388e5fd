"""Per-example analysis (the scalable-analysis paper): which caption and edit features go with
large flip gaps or large invariance errors.

Outcomes per row: ``gap`` = s(I,c) - s(I,c†) for flips, ``inv_error`` = |s(I,c) - s(I,c')| for
paraphrases. Features: ``caption_length`` (words), ``log_word_freq`` (mean log count of the
caption's words among the dataset's own human captions), ``edit_position`` (span_start / caption
characters, flips with a span), ``supercategory`` of the swapped noun and ``same_supercategory``
of original and replacement (object flips; from the perturbation lexicon), ``type``.

Tests (``scipy.stats``): Pearson and Spearman for numeric features; Welch's t-test for binary
features and one-vs-rest for each level of a categorical one. Every test needs ``min_support``
rows (in each group for t-tests). p-values are corrected together by Benjamini-Hochberg
(``scipy.stats.false_discovery_control``) into q-values.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.stats

from lgip_metric.ngram import by_word_frequency, words

NUMERIC = ("caption_length", "log_word_freq", "edit_position")
BINARY = ("same_supercategory",)
CATEGORICAL = ("type", "supercategory")
OUTCOMES = {"flip": "gap", "paraphrase": "inv_error"}
MIN_SUPPORT = 30


def _noun_supercategory():
    """Lookup: lower-cased noun text -> COCO supercategory (the lexicon's object groups)."""
    from lgip_dataset.perturb.lexicon import load_lexicon

    lexicon = load_lexicon()
    return {" ".join(form): lexicon.groups[noun.group].supercategory
            for form, noun in lexicon.noun_forms.items() if noun is not None}


def features(scores: pd.DataFrame, spans: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per score row: the outcome (``gap`` or ``inv_error``) and every feature.

    ``spans`` (the dataset's ``pairs`` rows: ``row_id``, ``original``, ``replacement``,
    ``span_start``) supplies the edit's words and position; without it those features are NaN.
    """
    frame = scores.copy()
    if spans is not None:
        frame = frame.merge(spans[["row_id", "original", "replacement", "span_start"]], on="row_id", how="left")
    for column in ("original", "replacement", "span_start"):
        if column not in frame:
            frame[column] = np.nan
    diff = frame["s_original"] - frame["s_variant"]
    frame["gap"] = diff.where(frame["kind"] == "flip")
    frame["inv_error"] = diff.abs().where(frame["kind"] == "paraphrase")
    counts = by_word_frequency(frame.drop_duplicates("caption_id")["caption"])
    tokens = frame["caption"].map(words)
    frame["caption_length"] = tokens.map(len)
    frame["log_word_freq"] = tokens.map(lambda ws: float(np.mean([np.log(counts[w]) for w in ws])) if ws else np.nan)
    frame["edit_position"] = frame["span_start"] / frame["caption"].str.len()
    lookup = _noun_supercategory()
    is_object = frame["type"] == "object"
    for column, word in (("supercategory", "original"), ("replacement_supercategory", "replacement")):
        frame[column] = frame[word].where(is_object).str.lower().map(lookup)
    known = frame["supercategory"].notna() & frame["replacement_supercategory"].notna()
    frame["same_supercategory"] = (frame["supercategory"] == frame["replacement_supercategory"]).where(known)
    return frame


def _welch(outcome: str, feature: str, level, values: pd.Series, inside: pd.Series, min_support: int):
    a, b = values[inside], values[~inside]
    if min(len(a), len(b)) < min_support:
        return None
    result = scipy.stats.ttest_ind(a, b, equal_var=False)
    return {"outcome": outcome, "feature": feature, "level": level, "test": "welch_t", "n": len(a) + len(b),
            "n_group": len(a), "n_rest": len(b), "statistic": float(result.statistic),
            "effect": float(a.mean() - b.mean()), "p": float(result.pvalue)}


def association_tests(frame: pd.DataFrame, min_support: int = MIN_SUPPORT) -> pd.DataFrame:
    """Every test with enough support, ranked by BH q-value then |effect|."""
    rows = []
    for kind, outcome in OUTCOMES.items():
        part = frame[frame["kind"] == kind]
        for feature in NUMERIC:
            data = part[[outcome, feature]].dropna()
            if len(data) < min_support or data[feature].nunique() < 2 or data[outcome].nunique() < 2:
                continue
            for test, function in (("pearson", scipy.stats.pearsonr), ("spearman", scipy.stats.spearmanr)):
                result = function(data[feature], data[outcome])
                rows.append({"outcome": outcome, "feature": feature, "level": "", "test": test, "n": len(data),
                             "statistic": float(result.statistic), "effect": float(result.statistic),
                             "p": float(result.pvalue)})
        for feature in BINARY:
            data = part[[outcome, feature]].dropna()
            rows.append(_welch(outcome, feature, True, data[outcome], data[feature].astype(bool), min_support))
        for feature in CATEGORICAL:
            data = part[[outcome, feature]].dropna()
            for level in sorted(data[feature].unique()):
                rows.append(_welch(outcome, feature, level, data[outcome], data[feature] == level, min_support))
    table = pd.DataFrame([r for r in rows if r is not None and np.isfinite(r["p"])])
    if table.empty:
        raise ValueError(f"no test has the minimum support of {min_support} rows; lower --min-support")
    table["q"] = scipy.stats.false_discovery_control(table["p"].to_numpy(), method="bh")
    order = np.lexsort((-table["effect"].abs().to_numpy(), table["q"].to_numpy()))
    return table.iloc[order].reset_index(drop=True)
