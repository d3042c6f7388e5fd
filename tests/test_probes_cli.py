"""`lgip evaluate` + `lgip report` end to end on a small dataset holding new families and 2x2 groups.

The dataset is the embedded sample's first images with added scramble/negation/syntactic rows and a
hand-made ``groups`` config (schema.GROUP_FEATURES), scored by the tiny random-weight model.
"""
from __future__ import annotations

import json
import shutil

import datasets
import numpy as np
import pandas as pd
import pytest
from helpers.groups import loop_scores

from lgip_dataset import SAMPLE_DIR, schema
from lgip_metric.cli import main as lgip
from lgip_metric import stats


N_IMAGES = 8


def _write(folder, config: str, frame: pd.DataFrame) -> None:
    shutil.rmtree(folder / config, ignore_errors=True)
    (folder / config).mkdir(parents=True)
    data = datasets.Dataset.from_pandas(frame[list(schema.FEATURES[config])], features=schema.FEATURES[config],
                                        preserve_index=False)
    data.to_parquet(str(folder / config / f"{schema.SPLIT}-00000-of-00001.parquet"))


def _new_family_rows(pairs: pd.DataFrame) -> pd.DataFrame:
    """Scrambles (2 per type), a negation and a syntactic paraphrase of every base caption."""
    base = pairs.drop_duplicates("caption_id")
    rows = []
    for row in base.itertuples(index=False):
        words = row.caption.rstrip(".").split()
        variants = [("flip", "scramble_all", " ".join(words[::-1])), ("flip", "scramble_all", " ".join(words[1:] + words[:1])),
                    ("flip", "scramble_content", " ".join(sorted(words))), ("flip", "negation", f"There is no {row.caption}"),
                    ("paraphrase", "syntactic", f"{row.caption.rstrip('.')}, as the picture shows.")]
        for v, (kind, type_, text) in enumerate(variants):
            rows.append({**row._asdict(), "row_id": f"{row.caption_id}-x{v}", "variant_id": f"{row.caption_id}-x{v}",
                         "kind": kind, "type": type_, "variant": text})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("probes")
    folder = root / "data"
    shutil.copytree(SAMPLE_DIR, folder)
    pairs = pd.read_parquet(next((SAMPLE_DIR / schema.PAIRS).glob("*.parquet")))
    pairs = pairs[pairs["image_id"].isin(sorted(pairs["image_id"].unique())[:N_IMAGES])]
    pairs = pd.concat([pairs, _new_family_rows(pairs)], ignore_index=True)
    _write(folder, schema.PAIRS, pairs)
    base = pairs.drop_duplicates("image_id")[["image_id", "caption_id", "caption"]].to_dict("records")
    flip = pairs[pairs["kind"] == "flip"].iloc[0]
    groups = [{"group_id": f"g{i}", "type": "color" if i % 2 else "object", "image_a": a["image_id"],
               "image_b": b["image_id"], "caption_a_id": a["caption_id"], "caption_b_id": b["caption_id"],
               "caption_a": a["caption"], "caption_b": b["caption"], "word_a": "x", "word_b": "y", "span_start": 0}
              for i, (a, b) in enumerate(zip(base[:-1], base[1:]))]
    # a degenerate group on one image whose caption B is a flip of caption A: its four scores are pairs scores
    groups.append({**groups[0], "group_id": "same", "image_a": flip["image_id"], "image_b": flip["image_id"],
                   "caption_a_id": flip["caption_id"], "caption_b_id": flip["variant_id"],
                   "caption_a": flip["caption"], "caption_b": flip["variant"]})
    _write(folder, schema.GROUPS, pd.DataFrame(groups))
    out = root / "out"
    assert lgip(["evaluate", "--model", "random:tiny-clip", "--dataset", str(folder), "--out", str(out),
                 "--cache-dir", str(root / "cache"), "--device", "cpu", "--num-workers", "0", "--no-progress",
                 "--bootstrap", "50"]) == 0
    return out, flip, json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_new_families_are_per_type_and_the_headline_stays_core(run):
    out, _, result = run
    s = result["statistics"]
    assert s["headline_types"]["paraphrase"] == ["template", "marker"]
    assert s["headline_types"]["flip"] == ["object", "color", "count"]  # Table 1: the paper's families only
    assert set(s["headline_types"]) <= {"paraphrase", "flip", "hard"}  # the hard flips, when present, have their own block
    assert set(s["headline_types"].get("hard", [])) <= set(stats.HARD_TYPES)
    assert {"scramble_all", "scramble_content", "negation", "syntactic"} <= set(s["per_type"])
    scores = pd.read_parquet(out / "scores.parquet")
    core = scores[scores["type"].isin(stats.CORE_TYPES)]
    core_only = stats.lgip_statistics(core["s_original"], core["s_variant"], core["kind"], core["type"],
                                      core["caption_id"], core["image_id"], bootstrap=0)
    assert s["PR"] == pytest.approx(core_only["PR"]) and s["E_inv"] == pytest.approx(core_only["E_inv"])
    for type_ in ("scramble_all", "scramble_content"):
        rows = scores[scores["type"] == type_]
        wins = [g["s_original"].iloc[0] > g["s_variant"].max() for _, g in rows.groupby(["image_id", "caption_id"])]
        assert s["per_type"][type_][stats.NWAY] == pytest.approx(np.mean(wins))


def test_blind_rows_and_text_similarity_are_in_results_and_report(run):
    out, _, result = run
    blind = result["blind"]
    assert set(blind["lm"]["blind"]["per_type"]) >= {"object", "negation", "scramble_all"}
    assert "cross-fitted" in blind["lm"]["scorer"]
    assert blind["text_similarity"]["per_type"]["object"]["rows"] > 0
    scores = pd.read_parquet(out / "scores.parquet")
    assert tuple(scores.columns) == schema.SCORE_COLUMNS and scores["t_sim"].between(-1.0001, 1.0001).all()
    same = scores[scores["caption"] == scores["variant"]]
    assert np.allclose(same["t_sim"], 1.0)  # identical texts (if any) have similarity 1
    report = out / "report"
    assert "n-gram LM, cross-fitted" in (report / "table2.md").read_text(encoding="utf-8")
    for name, needle in (("blind.md", "blind LM PR"), ("nway.md", "scramble_all"), ("groups.md", "group ↑")):
        assert needle in (report / name).read_text(encoding="utf-8")
    assert "Word-order scrambles" in (report / "report.md").read_text(encoding="utf-8")


def test_groups_are_scored_with_the_pairs_embeddings_and_scored_by_the_definition(run):
    out, flip, result = run
    groups = pd.read_parquet(out / "groups_scores.parquet")
    assert tuple(groups.columns) == schema.GROUP_SCORE_COLUMNS and len(groups) == N_IMAGES
    scores = pd.read_parquet(out / "scores.parquet").set_index("row_id")
    same = groups.set_index("group_id").loc["same"]
    row = scores.loc[flip["row_id"]]
    assert same["s_a_ca"] == pytest.approx(row["s_original"]) and same["s_b_ca"] == pytest.approx(row["s_original"])
    assert same["s_a_cb"] == pytest.approx(row["s_variant"]) and same["s_b_cb"] == pytest.approx(row["s_variant"])
    originals = scores.groupby("caption_id")["s_original"].first()
    real = groups[groups["group_id"] != "same"]
    assert np.allclose(real["s_a_ca"], originals[real["caption_a_id"]]) and np.allclose(real["s_b_cb"], originals[real["caption_b_id"]])
    expected = np.array([loop_scores(tuple(v)) for v in groups[["s_a_ca", "s_a_cb", "s_b_ca", "s_b_cb"]].to_numpy()])
    for k, name in enumerate(("text", "image", "group")):
        assert result["groups"][name] == pytest.approx(expected[:, k].mean())
    assert result["groups"]["groups"] == N_IMAGES
    assert result["provenance"]["counts"]["groups"] == N_IMAGES


def test_analyze_writes_ranked_tests_and_plots(run, tmp_path):
    out, _, _ = run
    assert lgip(["analyze", str(out), "--out", str(tmp_path / "analysis"), "--min-support", "5"]) == 0
    tests = pd.read_csv(tmp_path / "analysis" / "tests.csv")
    assert {"gap", "inv_error"} <= set(tests["outcome"]) and (tests["n"] >= 5).all()
    assert {"welch_t", "pearson", "spearman"} <= set(tests["test"])
    assert tests["p"].between(0, 1).all() and tests["p_naive"].between(0, 1).all() and (tests["images"] >= 2).all()
    assert "| p (clustered) | p (naive) |" in (tmp_path / "analysis" / "tests.md").read_text(encoding="utf-8")
    for name in ("tests.md", "effects.png", "outcomes_by_type.png", "features.parquet"):
        assert (tmp_path / "analysis" / name).stat().st_size > 0


def test_rescoring_a_folder_without_groups_drops_stale_group_scores(run, tmp_path):
    out, _, _ = run
    reused = tmp_path / "reused"
    shutil.copytree(out, reused)
    assert (reused / "groups_scores.parquet").exists()
    assert lgip(["score", "--model", "random:tiny-clip", "--out", str(reused), "--limit", "40", "--device", "cpu",
                 "--num-workers", "0", "--no-progress"]) == 0
    assert not (reused / "groups_scores.parquet").exists()
