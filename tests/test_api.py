"""The library API (``lgip_metric.score`` / ``evaluate_model`` / ``write_report``): the example of docs/api.md
runs as written, objects pass along in memory and each output file is written once and never read back."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from lgip_metric import api
from lgip_metric.results.provenance import Provenance
from lgip_metric.results.record import load_results

REPO = Path(__file__).resolve().parents[1]


def api_example() -> str:
    """The Python block after ``<!-- api-example -->`` in docs/api.md."""
    text = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- api-example -->\n```python\n(.*?)```", text, re.S)
    assert match, "docs/api.md lost its <!-- api-example --> block"
    return match.group(1)


def test_the_api_example_runs_as_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LGIP_CACHE_DIR", str(tmp_path / "cache"))
    exec(compile(api_example(), "docs/api.md", "exec"), {})
    printed = capsys.readouterr().out.split()
    assert float(printed[0]) == json.loads((tmp_path / "runs/tiny/results.json").read_text())["metrics"]["PR"]
    assert printed[1] == "open_clip:lgip-tiny-clip"
    assert (tmp_path / "runs/tiny/report/report.md").stat().st_size > 0


def test_evaluate_model_reads_no_file_it_wrote_and_hands_back_what_it_wrote(tmp_path, monkeypatch):
    out = tmp_path / "run"
    reads = []
    real_read_parquet, real_read_table = pd.read_parquet, pq.read_table
    monkeypatch.setattr(pd, "read_parquet", lambda path, *a, **k: reads.append(str(path)) or real_read_parquet(path, *a, **k))
    monkeypatch.setattr(pq, "read_table", lambda path, *a, **k: reads.append(str(path)) or real_read_table(path, *a, **k))
    results = api.evaluate_model("tiny-clip", out, limit=300, bootstrap=50, cache_dir="none", num_workers=0,
                                 progress=False)
    api.write_report(results, out / "report")
    assert not [path for path in reads if Path(path).resolve().parent == out.resolve()]
    monkeypatch.undo()

    loaded = load_results(out)
    assert loaded.data == results.data  # what the caller holds is what results.json says
    assert results.frame.equals(pd.read_parquet(out / "scores.parquet"))  # the table in memory is the file
    assert isinstance(results.provenance, Provenance)
    assert results.provenance.to_dict() == json.loads((out / "provenance.json").read_text())
    assert loaded.data["model"] == results.provenance.model_block()  # derived from the one record
    assert loaded.data["dataset"] == results.provenance.dataset


def test_score_returns_the_table_and_the_provenance_it_wrote(tmp_path):
    run = api.score("tiny-clip", tmp_path / "s", limit=50, cache_dir="none", num_workers=0, progress=False)
    assert run.frame.equals(pd.read_parquet(run.scores_path))
    assert list(run.frame.dtypes) == list(pd.read_parquet(run.scores_path).dtypes)
    assert run.provenance == Provenance.from_dict(json.loads(run.provenance_path.read_text()))


def test_a_score_table_with_an_undeclared_type_is_refused_unless_named(tmp_path):
    from lgip_metric import stats
    from lgip_metric.statistics import score_table

    frame = pd.DataFrame({"s_original": [0.3, 0.3, 0.2], "s_variant": [0.29, 0.1, 0.25],
                          "kind": ["paraphrase", "flip", "flip"], "type": ["template", "my_flip", "object"],
                          "caption_id": ["c1", "c1", "c2"], "image_id": [1, 1, 2]})
    with pytest.raises(stats.LGIPInputError, match="unknown variant type.*my_flip"):
        score_table.statistics(frame, bootstrap=0)
    assert score_table.statistics(frame, extra_types=["my_flip"], bootstrap=0)["per_type"]["my_flip"]["PR"] == 1.0


def test_import_lgip_metric_and_its_api_do_not_import_torch():
    code = ("import sys, lgip_metric\nfrom lgip_metric import evaluate_model, score, write_report, Provenance\n"
            "assert 'torch' not in sys.modules, sorted(m for m in sys.modules if m.startswith('torch'))")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


def test_results_written_before_the_provenance_record_still_load_with_one():
    old = load_results(REPO / "tests" / "fixtures" / "results-v1")
    assert old.provenance.model_id == old.data["model"]["model_id"] == "open_clip:lgip-tiny-clip"
    assert old.provenance.model_block() == old.data["model"]  # the v1 model block is the record's view
    assert old.provenance.to_dict() == old.data["provenance"]
