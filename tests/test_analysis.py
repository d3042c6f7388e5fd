"""Per-example analysis: features by hand, the tests against scipy, Benjamini-Hochberg by hand."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from lgip_metric.analysis import association_tests, features


def bh_by_hand(p):
    """q_(i) = min over j >= i of p_(j) * m / j, in the input order."""
    p = np.asarray(p, dtype=float)
    order = np.argsort(p)
    m = len(p)
    q_sorted = [min(p[order[j]] * m / (j + 1) for j in range(i, m)) for i in range(m)]
    q = np.empty(m)
    q[order] = np.minimum(q_sorted, 1.0)
    return q


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
        rows.append({"row_id": f"r{i}", "image_id": i, "caption_id": f"c{i}", "kind": kind,
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
    assert row["statistic"] == pytest.approx(expected.statistic) and row["p"] == pytest.approx(expected.pvalue)
    row = table[(table["feature"] == "caption_length") & (table["test"] == "spearman") & (table["outcome"] == "gap")].iloc[0]
    assert row["p"] == pytest.approx(scipy.stats.spearmanr(flips["caption_length"], flips["gap"]).pvalue)
    row = table[table["feature"] == "same_supercategory"].iloc[0]
    same = flips["same_supercategory"].astype(bool)
    expected = scipy.stats.ttest_ind(flips.loc[same, "gap"], flips.loc[~same, "gap"], equal_var=False)
    assert row["p"] == pytest.approx(expected.pvalue) and row["effect"] == pytest.approx(
        flips.loc[same, "gap"].mean() - flips.loc[~same, "gap"].mean())
    assert table["q"].to_numpy() == pytest.approx(bh_by_hand(table["p"]))
    assert (np.diff(table["q"].to_numpy()) >= 0).all()  # ranked by q
    assert not (table["feature"] == "type").any()  # a single type per kind: no one-vs-rest groups
    with pytest.raises(ValueError, match="minimum support"):
        association_tests(f, min_support=10_000)
