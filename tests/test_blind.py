"""Blind baselines: the Kneser-Ney bigram LM by hand, cross-fitting, blind PR nesting, balancing."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from lgip_dataset.ngram import BigramKN, words
from lgip_metric.statistics import blind
from lgip_dataset.ngram import TrigramKN


def test_kneser_ney_bigram_matches_a_hand_computation():
    lm = BigramKN().fit(["A b.", "a C"])
    # bigrams <s>a:2 ab:1 b</s>:1 ac:1 c</s>:1 (5 types); continuation a:1 b:1 c:1 </s>:2; |V| = 4 + unknown
    p_cont = {"a": 0.25 / 5 + 0.75 * 4 / 5 / 5, "</s>": 1.25 / 5 + 0.75 * 4 / 5 / 5, "zebra": 0.75 * 4 / 5 / 5}
    assert lm.continuation_prob("a") == pytest.approx(0.17) == pytest.approx(p_cont["a"])
    assert lm.continuation_prob("</s>") == pytest.approx(0.37)
    assert lm.continuation_prob("zebra") == pytest.approx(0.12)
    assert lm.prob("a", "<s>") == pytest.approx(1.25 / 2 + 0.75 * 1 / 2 * 0.17)
    assert lm.prob("b", "a") == pytest.approx(0.25 / 2 + 0.75 * 2 / 2 * 0.17)
    assert lm.prob("</s>", "b") == pytest.approx(0.25 + 0.75 * 0.37)
    assert lm.prob("a", "b") == pytest.approx(0.75 * 0.17)  # unseen bigram: back-off mass only
    assert lm.prob("zebra", "never-seen") == pytest.approx(0.12)  # unseen history: the lower order
    assert lm.logprob("a b") == pytest.approx(math.log(0.68875 * 0.2525 * 0.5275))
    assert lm.logprob("a b") > lm.logprob("b a")
    for history in ("<s>", "a", "b"):  # a distribution over the vocabulary plus the unknown word
        assert sum(lm.prob(w, history) for w in ("a", "b", "c", "</s>", "zebra")) == pytest.approx(1.0)
    assert words("Two dogs' toys, on a mat.") == ["two", "dogs", "toys", "on", "a", "mat"]
    assert BigramKN().fit([]).logprob("anything at all") == 0.0


def rows_frame(seed: int, n_images: int = 30) -> pd.DataFrame:
    """Score rows with texts: captions from a small vocabulary, flips of three types, paraphrases."""
    rng = np.random.default_rng(seed)
    nouns, colors = ["dog", "cat", "man", "bus", "car"], ["red", "blue", "green"]
    records = []
    for image in range(n_images):
        for c in range(int(rng.integers(1, 4))):
            noun, color = nouns[int(rng.integers(5))], colors[int(rng.integers(3))]
            caption = f"a {color} {noun} on the street"
            caption_id = f"{image}-{c}"
            s = float(rng.uniform(0.2, 0.4))
            variants = [("paraphrase", "template", f"a photo of {caption}")]
            variants += [("flip", "object", caption.replace(noun, n)) for n in nouns if n != noun][: int(rng.integers(0, 4))]
            variants += [("flip", "color", caption.replace(color, k)) for k in colors if k != color][: int(rng.integers(0, 3))]
            variants += [("flip", "negation", caption.replace("on", "not on"))] * int(rng.integers(0, 2))
            for v, (kind, type_, text) in enumerate(variants):
                records.append({"row_id": f"{caption_id}-{v}", "image_id": 100 + image, "caption_id": caption_id,
                                "kind": kind, "type": type_, "caption": caption, "variant": text, "s_original": s,
                                "s_variant": round(s + float(rng.normal(0, 0.03)), 2), "t_sim": float(rng.uniform(0.9, 1))})
    return pd.DataFrame(records)


def test_lm_scores_are_cross_fitted_by_image():
    rows = rows_frame(0)
    original, variant = blind.lm_scores(rows)
    folds = blind.image_folds(rows["image_id"].to_numpy())
    assert set(folds) == {0, 1}
    assert (blind.image_folds(rows["image_id"].to_numpy()[::-1]) == folds[::-1]).all()  # a function of the id
    models = [BigramKN().fit(rows.loc[folds == f].drop_duplicates("caption_id")["caption"]) for f in (0, 1)]
    for i in range(len(rows)):
        model = models[1 - folds[i]]  # never the model that saw this image's captions
        assert original[i] == pytest.approx(model.logprob(rows["caption"].iat[i]))
        assert variant[i] == pytest.approx(model.logprob(rows["variant"].iat[i]))


def blind_pr_loop(rows: pd.DataFrame, lm_original, lm_variant, type_: str) -> float:
    """Mean over base pairs of the mean over their flips of the type of 1[LM(c) > LM(c†)]."""
    per_pair: dict = {}
    for i, row in enumerate(rows.itertuples()):
        if row.kind == "flip" and row.type == type_:
            per_pair.setdefault((row.image_id, row.caption_id), []).append(lm_original[i] > lm_variant[i])
    return sum(sum(v) / len(v) for v in per_pair.values()) / len(per_pair)


@pytest.mark.parametrize("seed", range(3))
def test_blind_positive_rate_has_the_nesting_of_pr(seed):
    rows = rows_frame(seed)
    lm_original, lm_variant = blind.lm_scores(rows)
    rates = blind.positive_rates(rows, lm_original, lm_variant, bootstrap=0)
    for type_ in ("object", "color", "negation"):
        assert rates["per_type"][type_]["PR"] == pytest.approx(blind_pr_loop(rows, lm_original, lm_variant, type_))
    assert rates["headline_types"] == ["object", "color"]  # negation is reported per type only


def test_balancing_puts_the_lm_at_chance_is_seeded_and_order_free():
    rows = rows_frame(1, n_images=60)
    lm_original, lm_variant = blind.lm_scores(rows)
    keep, counts = blind.balance(rows, lm_original, lm_variant, seed=3)
    assert keep[(rows["kind"] == "paraphrase").to_numpy()].all()
    for type_, c in counts.items():
        kept = keep & (rows["type"] == type_).to_numpy()
        assert c["kept"] == kept.sum() <= 2 * min(c["lm_prefers_original"], c["lm_prefers_flip"])
        assert c["lm_prefers_original"] + c["lm_prefers_flip"] + c["ties"] == c["flips"]
        assert not rows.loc[kept, ["image_id", "caption_id"]].duplicated().any()  # one flip per base pair
        if c["kept"]:
            assert (lm_original[kept] > lm_variant[kept]).mean() == 0.5  # the blind LM sits at chance, row level
            kept_rows = rows.loc[kept].reset_index(drop=True)
            nested = blind_pr_loop(kept_rows, lm_original[kept], lm_variant[kept], type_)
            assert nested == 0.5  # and caption-nested, as PR is computed
    assert counts["object"]["kept"] > 0 and counts["color"]["kept"] > 0
    order = np.random.default_rng(0).permutation(len(rows))
    shuffled, _ = blind.balance(rows.iloc[order].reset_index(drop=True), lm_original[order], lm_variant[order], seed=3)
    assert (shuffled == keep[order]).all()
    other, _ = blind.balance(rows, lm_original, lm_variant, seed=4)
    assert (other != keep).any()


def test_blind_report_blocks():
    rows = rows_frame(2, n_images=40)
    report = blind.blind_report(rows, balance_seed=0, bootstrap=50)
    assert "cross-fitted" in report["lm"]["scorer"]
    assert set(report["lm"]["blind"]["per_type"]) == {"object", "color", "negation"}
    assert report["balanced"]["model"]["per_type"]["object"]["counts"]["variant_rows"] == report["balanced"]["counts"]["object"]["kept"]
    similarity = report["text_similarity"]["per_type"]["object"]
    flips = rows[rows["type"] == "object"]
    assert similarity["mean"] == pytest.approx(flips["t_sim"].mean())
    assert similarity["share_collapsed"] == pytest.approx((flips["t_sim"] > blind.COLLAPSE).mean())
    assert "text_similarity" not in blind.blind_report(rows.drop(columns="t_sim"), bootstrap=0)  # old score files


def test_kneser_ney_trigram_matches_a_hand_computation():
    """Corpus "a b", "a c": P(b | <s> a) = 0.25/2 + 0.75 * 2/2 * P2(b | a), P2(b | a) = 0.25/2 +
    0.75 * 2/2 * P1(b), P1(b) = 0.25/5 + 0.75 * 4/5 / 5 (5 distinct bigrams, 4 continued words)."""
    lm = TrigramKN().fit(["a b", "a c"])
    p1 = 0.25 / 5 + 0.75 * 4 / 5 / 5
    p2 = 0.25 / 2 + 0.75 * p1
    assert lm.prob("b", "<s>", "a") == pytest.approx(0.25 / 2 + 0.75 * p2)
    assert lm.prob("b", "x", "a") == pytest.approx(p2)  # unseen history: the next order alone
    assert lm.logprob("A b.") == pytest.approx(sum(math.log(lm.prob(w, u, v)) for u, v, w in
                                                   [("<s>", "<s>", "a"), ("<s>", "a", "b"), ("a", "b", "</s>")]))
    seen = ["a", "b", "c", "</s>"]  # with the unknown word's share, a distribution over the vocabulary
    unknown = lm.prob("zzz", "<s>", "a")
    assert sum(lm.prob(w, "<s>", "a") for w in seen) + unknown == pytest.approx(1.0)


def test_the_trigram_is_cross_fitted_and_reported_beside_the_bigram_with_the_hard_block():
    rows = rows_frame(3, n_images=40)
    hard = rows[rows["type"] == "object"].assign(type="hard_object", row_id=lambda f: f["row_id"] + "h")
    rows = pd.concat([rows, hard], ignore_index=True)
    original, variant = blind.lm_scores(rows, TrigramKN)
    folds = blind.image_folds(rows["image_id"].to_numpy())
    for f in (0, 1):
        model = TrigramKN().fit(rows.loc[folds != f].drop_duplicates("caption_id")["caption"])
        scored = rows.loc[folds == f]
        assert np.allclose(original[folds == f], [model.logprob(t) for t in scored["caption"]])
    report = blind.blind_report(rows, bootstrap=0)
    assert "trigram" in report["trigram"]["scorer"] and "hard_object" in report["trigram"]["blind"]["per_type"]
    for scorer in ("lm", "trigram"):
        block = report[scorer]["blind"]
        assert block["headline_types"] == ["object", "color"]  # Table 1 stays on the paper's flips
        assert block["hard"]["PR"] == block["per_type"]["hard_object"]["PR"]  # the only hard type here
    assert "hard" not in blind.blind_report(rows[rows["type"] != "hard_object"], bootstrap=0)["lm"]["blind"]
