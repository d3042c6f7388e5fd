"""Per-example analysis: features by hand, the tests against scipy, Benjamini-Hochberg by hand."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from lgip_metric.statistics.analysis import association_tests, clustered_p, features


def bh_by_hand(p):
    """q_(i) = min over j >= i of p_(j) * m / j, in the input order."""
    p = np.asarray(p, dtype=float)
    order = np.argsort(p)
    m = len(p)
    q_sorted = [min(p[order[j]] * m / (j + 1) for j in range(i, m)) for i in range(m)]
    q = np.empty(m)
    q[order] = np.minimum(q_sorted, 1.0)
    return q


def clustered_p_by_hand(y, x, clusters) -> float:
    """Slope p of y ~ 1 + x with the CR1 cluster sandwich: (X'X)^-1 (sum_g X_g'u_g u_g'X_g) (X'X)^-1
    times G/(G-1) * (N-1)/(N-2), against t with G-1 degrees of freedom."""
    y = np.asarray(y, dtype=float)
    X = np.column_stack([np.ones(len(y)), np.asarray(x, dtype=float)])
    bread = np.linalg.inv(X.T @ X)
    beta = bread @ X.T @ y
    u = y - X @ beta
    clusters = np.asarray(clusters)
    groups = np.unique(clusters)
    meat = sum(np.outer(X[clusters == g].T @ u[clusters == g], X[clusters == g].T @ u[clusters == g]) for g in groups)
    n, g = len(y), len(groups)
    cov = bread @ meat @ bread * g / (g - 1) * (n - 1) / (n - 2)
    return float(2 * scipy.stats.t.sf(abs(beta[1] / np.sqrt(cov[1, 1])), g - 1))


def test_clustered_inference_is_wider_when_an_image_repeats_its_rows():
    """Ten images with unrelated x and y, each repeated 20 times with tiny noise: the naive test sees 200
    rows and a chance correlation of the ten images as overwhelming; the clustered one sees ten images."""
    rng = np.random.default_rng(0)
    image_x, image_y = rng.normal(size=10), rng.normal(size=10)
    images = np.repeat(np.arange(10), 20)
    x, y = image_x[images] + rng.normal(0, 0.05, 200), image_y[images] + rng.normal(0, 0.05, 200)
    naive = scipy.stats.pearsonr(x, y).pvalue
    clustered = clustered_p(y, x, images)
    assert clustered == pytest.approx(clustered_p_by_hand(y, x, images))
    assert naive < 1e-12 and clustered > 0.1


def test_features_without_spans_are_nan():
    scores, _ = frame(8)
    f = features(scores)
    for column in ("original", "replacement", "span_start", "edit_position", "supercategory", "same_supercategory"):
        assert f[column].isna().all(), column
    assert f["caption_length"].notna().all() and f["gap"].notna().sum() == 4


def test_bh_hand_example():
    assert bh_by_hand([0.01, 0.04, 0.03, 0.20]) == pytest.approx([0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.20])
    assert scipy.stats.false_discovery_control([0.01, 0.04, 0.03, 0.20]) == pytest.approx(bh_by_hand([0.01, 0.04, 0.03, 0.20]))


def frame(n: int = 200, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    rows, spans = [], []
    for i in range(n):
        length = int(rng.integers(4, 12))
        caption = " ".join(["a", "dog"] + ["word"] * (length - 2))
        kind = "flip" if i % 2 else "paraphrase"
        replacement = "cat" if i % 4 == 1 else "car"
        s = 0.3
        delta = 0.01 * length + rng.normal(0, 0.02) + (0.03 if replacement == "cat" else 0.0)
        rows.append({"row_id": f"r{i}", "image_id": i // 5, "caption_id": f"c{i}", "kind": kind,
                     "type": "object" if kind == "flip" else "template", "caption": caption,
                     "variant": caption.replace("dog", replacement), "s_original": s, "s_variant": s - delta})
        spans.append({"row_id": f"r{i}", "original": "dog" if kind == "flip" else None,
                      "replacement": replacement if kind == "flip" else None, "span_start": 2 if kind == "flip" else None})
    return pd.DataFrame(rows), pd.DataFrame(spans)


def test_features_by_hand():
    scores, spans = frame(8)
    f = features(scores, spans).set_index("row_id")
    assert f.loc["r1", "caption_length"] == len(scores.loc[1, "caption"].split())
    assert f.loc["r1", "edit_position"] == pytest.approx(2 / len(scores.loc[1, "caption"]))
    assert f.loc["r1", "supercategory"] == "animal" and f.loc["r1", "same_supercategory"] == True  # noqa: E712 dog->cat
    assert f.loc["r3", "same_supercategory"] == False  # noqa: E712  dog -> car
    assert np.isnan(f.loc["r0", "gap"]) and f.loc["r0", "inv_error"] > 0
    # every caption word's count among the 8 captions: "a" 8, "dog" 8, "word" total
    words = " ".join(scores["caption"]).split()
    counts = {w: words.count(w) for w in set(words)}
    first = scores.loc[0, "caption"].split()
    assert f.loc["r0", "log_word_freq"] == pytest.approx(np.mean([np.log(counts[w]) for w in first]))


def test_tests_match_scipy_and_bh():
    scores, spans = frame()
    f = features(scores, spans)
    table = association_tests(f, min_support=30)
    flips = f[f["kind"] == "flip"]
    row = table[(table["feature"] == "caption_length") & (table["test"] == "pearson") & (table["outcome"] == "gap")].iloc[0]
    expected = scipy.stats.pearsonr(flips["caption_length"], flips["gap"])
    assert row["statistic"] == pytest.approx(expected.statistic) and row["p_naive"] == pytest.approx(expected.pvalue)
    assert row["p"] == pytest.approx(clustered_p_by_hand(flips["gap"], flips["caption_length"], flips["image_id"]))
    assert row["images"] == flips["image_id"].nunique() == 40
    row = table[(table["feature"] == "caption_length") & (table["test"] == "spearman") & (table["outcome"] == "gap")].iloc[0]
    assert row["p_naive"] == pytest.approx(scipy.stats.spearmanr(flips["caption_length"], flips["gap"]).pvalue)
    assert row["p"] == pytest.approx(clustered_p_by_hand(flips["gap"].rank(), flips["caption_length"].rank(),
                                                         flips["image_id"]))
    row = table[table["feature"] == "same_supercategory"].iloc[0]
    same = flips["same_supercategory"].astype(bool)
    expected = scipy.stats.ttest_ind(flips.loc[same, "gap"], flips.loc[~same, "gap"], equal_var=False)
    assert row["p_naive"] == pytest.approx(expected.pvalue) and row["effect"] == pytest.approx(
        flips.loc[same, "gap"].mean() - flips.loc[~same, "gap"].mean())
    assert row["p"] == pytest.approx(clustered_p_by_hand(flips["gap"], same, flips["image_id"]))
    assert table["q"].to_numpy() == pytest.approx(bh_by_hand(table["p"]))  # BH over the clustered p-values
    assert (np.diff(table["q"].to_numpy()) >= 0).all()  # ranked by q
    assert not (table["feature"] == "type").any()  # a single type per kind: no one-vs-rest groups
    with pytest.raises(ValueError, match="minimum support"):
        association_tests(f, min_support=10_000)
