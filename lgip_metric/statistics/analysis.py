"""Per-example analysis (the scalable-analysis paper): which caption and edit features go with
large flip gaps or large invariance errors.

Outcomes per row: ``gap`` = s(I,c) - s(I,c†) for flips, ``inv_error`` = |s(I,c) - s(I,c')| for
paraphrases. Features: ``caption_length`` (words), ``log_word_freq`` (mean log count of the
caption's words among the dataset's own human captions), ``edit_position`` (span_start / caption
characters, flips with a span), ``supercategory`` of the swapped noun and ``same_supercategory``
of original and replacement (object flips; from the perturbation lexicon), ``type``.

Tests: Pearson and Spearman for numeric features; Welch's t-test for binary features and
one-vs-rest for each level of a categorical one. Every test needs ``min_support`` rows (in each
group for t-tests) from at least two images.

Rows are not independent: one image carries several captions and each caption several variants.
So every test is also run as an OLS regression of the outcome on the feature (on ranks for
Spearman, on the group indicator for t-tests) with standard errors clustered by image
(``statsmodels``, ``cov_type="cluster"``, t with images - 1 degrees of freedom). ``p`` is that
cluster-robust p-value; ``p_naive`` is the textbook one (``scipy.stats``), which treats every row
as independent and is shown beside it. The ``p`` values are corrected together by
Benjamini-Hochberg (``scipy.stats.false_discovery_control``) into q-values.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.stats
import statsmodels.api as sm

from lgip_dataset.ngram import by_word_frequency, words

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


SCORE_COLUMNS = ("row_id", "image_id", "caption_id", "kind", "type", "caption", "s_original", "s_variant")


def check_scores(scores: pd.DataFrame, where: str) -> None:
    """Refuse a score table the analysis would misread (DataError naming ``where``, the column and a row):
    a missing column of ``SCORE_COLUMNS``, a score that is not a finite number, rows of one image, or a row whose ``kind``
    contradicts the declared kind of its ``type`` (an object flip marked paraphrase would count as an
    invariance error)."""
    from lgip_dataset.errors import DataError
    from lgip_metric import stats

    missing = [c for c in SCORE_COLUMNS if c not in scores]
    if missing:
        raise DataError(f"{where}: no column {', '.join(map(repr, missing))}; the analysis reads a score file of "
                        f"`lgip score` ({', '.join(SCORE_COLUMNS)})")
    for column in ("s_original", "s_variant"):
        values = scores[column]
        if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
            raise DataError(f"{where}: {column} holds {values.dtype} values, not numbers; score the dataset again "
                            "with `lgip score`")
        bad = ~np.isfinite(values.to_numpy(dtype=float))
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise DataError(f"{where}: {column} of row {scores['row_id'].iloc[first]!r} is {values.iloc[first]} "
                            f"({int(bad.sum())} such rows); every score must be a finite number: score the dataset "
                            "again with `lgip score`")
    if scores["image_id"].nunique() < 2:
        raise DataError(f"{where}: every row is of one image ({scores['image_id'].iloc[0]}); the tests cluster rows "
                        "by image and need rows of at least two images")
    declared = scores["type"].map(stats.DECLARED_TYPES)
    wrong = (declared.notna() & (declared != scores["kind"])).to_numpy()
    if wrong.any():
        first = int(np.flatnonzero(wrong)[0])
        raise DataError(f"{where}: row {scores['row_id'].iloc[first]!r} has kind {scores['kind'].iloc[first]!r} but "
                        f"type {scores['type'].iloc[first]!r}, which is a {declared.iloc[first]} ({int(wrong.sum())} such "
                        "rows); a type's rows all have its kind: fix the kind column or score the dataset again")


def features(scores: pd.DataFrame, spans: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per score row: the outcome (``gap`` or ``inv_error``) and every feature.

    ``spans`` (the dataset's ``pairs`` rows: ``row_id``, ``original``, ``replacement``,
    ``span_start``) supplies the edit's words and position; without it those features are NaN.
    """
    frame = scores.copy()
    if spans is not None:
        frame = frame.merge(spans[["row_id", "original", "replacement", "span_start"]], on="row_id", how="left")
    for column, dtype in (("original", object), ("replacement", object), ("span_start", float)):
        if column not in frame:
            frame[column] = pd.Series(np.nan, index=frame.index, dtype=dtype)
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


def clustered_p(outcome, regressor, clusters) -> float:
    """p-value of the slope of ``outcome ~ 1 + regressor`` by OLS with standard errors clustered by
    ``clusters`` (statsmodels' cluster-robust sandwich, t with clusters - 1 degrees of freedom)."""
    design = sm.add_constant(np.asarray(regressor, dtype=float), has_constant="add")
    groups = pd.factorize(np.asarray(clusters))[0]
    fit = sm.OLS(np.asarray(outcome, dtype=float), design).fit(
        cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    return float(fit.pvalues[1])


def _test(outcome: str, feature: str, level, test: str, data: pd.DataFrame, regression, result, effect) -> dict:
    """One table row: the naive ``result`` of scipy and the clustered p of ``regression`` = (y, x)."""
    return {"outcome": outcome, "feature": feature, "level": level, "test": test, "n": len(data),
            "images": int(data["image_id"].nunique()), "statistic": float(result.statistic), "effect": float(effect),
            "p_naive": float(result.pvalue), "p": clustered_p(*regression, data["image_id"])}


def _welch(outcome: str, feature: str, level, data: pd.DataFrame, inside: pd.Series, min_support: int):
    a, b = data.loc[inside, outcome], data.loc[~inside, outcome]
    if min(len(a), len(b)) < min_support or data["image_id"].nunique() < 2:  # one cluster: no clustered p
        return None
    result = scipy.stats.ttest_ind(a, b, equal_var=False)
    return {**_test(outcome, feature, level, "welch_t", data, (data[outcome], inside), result, a.mean() - b.mean()),
            "n_group": len(a), "n_rest": len(b)}


def association_tests(frame: pd.DataFrame, min_support: int = MIN_SUPPORT) -> pd.DataFrame:
    """Every test with enough support, ranked by BH q-value (of the clustered p) then |effect|."""
    rows = []
    for kind, outcome in OUTCOMES.items():
        part = frame[frame["kind"] == kind]
        for feature in NUMERIC:
            data = part[[outcome, feature, "image_id"]].dropna()
            if (len(data) < min_support or data["image_id"].nunique() < 2 or data[feature].nunique() < 2
                    or data[outcome].nunique() < 2):
                continue
            for test, function, regression in (
                ("pearson", scipy.stats.pearsonr, (data[outcome], data[feature])),
                ("spearman", scipy.stats.spearmanr, (data[outcome].rank(), data[feature].rank())),
            ):
                result = function(data[feature], data[outcome])
                rows.append(_test(outcome, feature, "", test, data, regression, result, result.statistic))
        for feature in BINARY:
            data = part[[outcome, feature, "image_id"]].dropna()
            rows.append(_welch(outcome, feature, True, data, data[feature].astype(bool), min_support))
        for feature in CATEGORICAL:
            data = part[[outcome, feature, "image_id"]].dropna()
            for level in sorted(data[feature].unique()):
                rows.append(_welch(outcome, feature, level, data, data[feature] == level, min_support))
    table = pd.DataFrame([r for r in rows if r is not None and r["images"] >= 2 and np.isfinite(r["p"])])
    if table.empty:
        raise ValueError(f"no test has the minimum support of {min_support} rows from two images; lower --min-support")
    table["q"] = scipy.stats.false_discovery_control(table["p"].to_numpy(), method="bh")
    order = np.lexsort((-table["effect"].abs().to_numpy(), table["q"].to_numpy()))
    return table.iloc[order].reset_index(drop=True)
