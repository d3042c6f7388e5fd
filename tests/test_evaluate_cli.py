"""`lgip evaluate` then `lgip report` on the embedded sample, end to end, with tiny random-weight models."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from lgip_dataset import SAMPLE_DIR, __version__
from helpers.models import other_tiny_model
from lgip_metric import stats
from lgip_metric.results import record as results
from lgip_metric.statistics import score_table
from lgip_metric.cli import main as lgip

LIMIT = "400"  # the first sample rows: every kind and several images, seconds on a CPU


def evaluate(model: str, out: Path, cache: Path, *extra: str) -> dict:
    code = lgip(["evaluate", "--model", model, "--out", str(out), "--cache-dir", str(cache), "--device", "cpu",
                 "--num-workers", "0", "--limit", LIMIT, "--no-progress", "--bootstrap", "200", *extra])
    assert code == 0
    return json.loads((out / results.RESULTS_FILE).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("evaluate")
    cache = root / "cache"
    first = evaluate("random:tiny-clip", root / "a", cache)
    rerun = evaluate("random:tiny-clip", root / "a", cache)
    other = evaluate(other_tiny_model(root / "model-b"), root / "b", cache)
    return root, first, rerun, other


def test_evaluate_writes_results_with_statistics_provenance_and_a_report(runs, capsys):
    root, first, _, _ = runs
    assert first["format"] == results.FORMAT and first["averaging"] == "base_pair"
    assert first["model"]["random_weights"] is True and "[random weights]" in first["model"]["label"]
    assert first["dataset"]["source"] == str(SAMPLE_DIR) and len(first["dataset"]["fingerprint"]) == 16
    assert first["provenance"]["counts"]["scored_rows"] == int(LIMIT)
    s = first["statistics"]
    for metric in ("E_inv", "E_sens", "PR"):
        assert s["intervals"][metric][0] <= s[metric] <= s["intervals"][metric][1]
        assert s["counts"][metric]["images"] >= 2
    assert {"object", "template"} <= set(s["per_type"])
    # the statistics are those of the written score file
    rows = score_table.stats_inputs(pd.read_parquet(root / "a" / first["scores"]))
    assert s == stats.lgip_statistics(**rows, bootstrap=200)
    report = root / "a" / "report"
    for name in ("table1.md", "table1.csv", "table2.md", "table2.csv", "frontier.png", "frontier.svg",
                 "qualitative.md", "report.md"):
        assert (report / name).stat().st_size > 0
    assert "[random weights]" in (report / "table1.md").read_text(encoding="utf-8")


def test_rerun_takes_every_embedding_from_the_cache(runs):
    _, first, rerun, _ = runs
    counts = rerun["provenance"]["counts"]
    assert counts["encoded_images"] == 0 and counts["encoded_texts"] == 0
    assert counts["cached_images"] == first["provenance"]["counts"]["encoded_images"] > 0
    assert rerun["statistics"] == first["statistics"]


def test_report_of_two_models_with_paper_reference(runs, capsys):
    root, _, _, other = runs
    out = root / "report"
    assert lgip(["report", str(root / "a" / "results.json"), str(root / "b"), "--out", str(out),
                 "--paper-reference"]) == 0
    table1 = (out / "table1.md").read_text(encoding="utf-8")
    assert other["model"]["label"] in table1 and "paper (quoted)" in table1
    comparison = (out / "comparison.md").read_text(encoding="utf-8")
    assert f"({LIMIT} rows)" in comparison and "McNemar" in comparison
    page = (out / "qualitative.md").read_text(encoding="utf-8")
    assert "flips the two models order differently" in page and "could not be read" not in page
    thumbnails = list((out / "qualitative").glob("*.jpg"))
    assert thumbnails and all(f"qualitative/{t.name}" in page for t in thumbnails)
    assert (out / "frontier.png").read_bytes()[:4] == b"\x89PNG"


def test_report_refuses_results_of_different_row_subsets(runs, tmp_path, capsys):
    root, *_ = runs
    shorter = json.loads((root / "b" / "results.json").read_text(encoding="utf-8"))
    shorter["provenance"]["counts"]["rows"] = 100
    (tmp_path / "results.json").write_text(json.dumps(shorter), encoding="utf-8")
    assert lgip(["report", str(root / "a"), str(tmp_path), "--out", str(tmp_path / "r")]) == 2
    assert "scored different rows" in capsys.readouterr().err


def test_pair_level_flag_is_carried_into_results_and_report(runs):
    root, first, *_ = runs
    pair_level = evaluate("random:tiny-clip", root / "pl", root / "cache", "--pair-level", "--bootstrap", "0")
    assert pair_level["averaging"] == "pair_level" and "intervals" not in pair_level["statistics"]
    assert pair_level["provenance"]["counts"]["encoded_texts"] == 0
    assert pair_level["statistics"]["counts"] == first["statistics"]["counts"]
    assert "Averaging: **pair_level**" in (root / "pl" / "report" / "table1.md").read_text(encoding="utf-8")


def test_results_carry_flat_metrics_code_version_and_run_settings(runs):
    _, first, *_ = runs
    assert first["version"] == results.VERSION == 2
    s = first["statistics"]
    assert {name: first["metrics"][name] for name in ("E_inv", "E_sens", "PR")} == {m: s[m] for m in ("E_inv", "E_sens", "PR")}
    assert first["metrics"]["PR/object"] == s["per_type"]["object"]["PR"]
    assert first["metrics"]["E_inv/template"] == s["per_type"]["template"]["E_inv"]
    assert len(first["metrics"]) == 3 + sum(len(stats.METRICS[b["kind"]]) for b in s["per_type"].values())
    assert set(first["higher_is_better"]) == set(first["metrics"])
    assert first["higher_is_better"]["E_inv/marker"] is False and first["higher_is_better"]["PR/color"] is True
    assert first["lgip_version"] == __version__
    assert first["git_hash"] is None or len(first["git_hash"]) == 40
    assert first["settings"] == {"limit": int(LIMIT), "batch_size": 64, "precision": "fp32", "device": "cpu",
                                 "num_workers": 0, "validated": False, "bootstrap": 200, "seed": 0, "confidence": 0.95,
                                 "pair_level": False}


def test_git_hash_is_the_checkouts_commit_or_none(monkeypatch):
    import subprocess

    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(results.__file__).parent, capture_output=True,
                          text=True)
    assert results.git_hash() == (head.stdout.strip() if head.returncode == 0 else None)
    monkeypatch.setenv("PATH", "")  # no git at all: the package was installed, not checked out
    assert results.git_hash() is None


FIXTURE_V1 = Path(__file__).parent / "fixtures" / "results-v1"  # written by lgip 0.1.0 before format version 2


def test_report_still_reads_version_1_results(tmp_path, capsys):
    old = results.load_results(FIXTURE_V1)
    assert old.data["version"] == 1 and "metrics" not in old.data
    assert old.metrics["PR"] == old.statistics["PR"] and old.metrics["PR/count"] == old.statistics["per_type"]["count"]["PR"]
    assert lgip(["report", str(FIXTURE_V1), "--out", str(tmp_path / "r")]) == 0
    table = (tmp_path / "r" / "table1.md").read_text(encoding="utf-8")
    assert f"| {old.statistics['PR']:.4f} [" in table
    bad = tmp_path / "v9.json"
    bad.write_text(json.dumps({**old.data, "version": 9}), encoding="utf-8")
    assert lgip(["report", str(bad), "--out", str(tmp_path / "r9")]) == 2
    assert "results version 9; this lgip reads versions 1, 2" in capsys.readouterr().err
