"""The metric's pages run as written: the harness of docs/metric.md (a model object feeding ``evaluate.load`` by
``add_batch`` / ``compute``) gives ``evaluate_model``'s figures on the same object, and the card's "How to Use"
block runs with its inputs defined."""
from __future__ import annotations

import re

import pytest

from helpers.paths import REPO
from lgip_metric import stats

HARNESS_SKIP = "tests/test_metric_harness.py runs it"


def python_block_after(text: str, heading_or_comment: str) -> str:
    """The first ```python block after ``heading_or_comment`` in ``text``."""
    start = text.index(heading_or_comment)
    match = re.compile(r"```python\n(.*?)```", re.S).search(text, start)
    assert match, f"no python block after {heading_or_comment!r}"
    return match.group(1)


def test_the_harness_example_equals_lgip_evaluate_on_the_same_model_object(tmp_path, monkeypatch, capsys):
    code = python_block_after((REPO / "docs" / "metric.md").read_text(encoding="utf-8"), HARNESS_SKIP)
    assert len(code.splitlines()) <= 40 and "evaluate.load(str(METRIC_PATH))" in code and "add_batch" in code
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LGIP_CACHE_DIR", str(tmp_path / "cache"))
    names: dict = {}
    exec(compile(code, "docs/metric.md", "exec"), names)
    mine, engine = names["mine"], names["engine"].statistics
    printed = re.findall(r"(\w+): harness (\S+), lgip evaluate (\S+)", capsys.readouterr().out)
    assert [name for name, _, _ in printed] == ["E_inv", "E_sens", "PR"]
    assert all(harness == evaluated for _, harness, evaluated in printed)  # the figures the page shows
    for name in ("E_inv", "E_sens"):
        assert mine[name] == pytest.approx(engine[name], abs=1e-7)
    assert mine["PR"] == engine["PR"] and mine["counts"] == engine["counts"]
    assert names["engine"].provenance.held["source"] == "user-supplied object"
    assert mine["bootstrap"] == engine["bootstrap"] and engine["bootstrap"]["resamples"] == 100


def test_the_metric_card_how_to_use_runs_as_written(tmp_path, monkeypatch, capsys):
    card = (REPO / "lgip_metric" / "README.md").read_text(encoding="utf-8")
    code = python_block_after(card, "## How to Use")
    monkeypatch.chdir(tmp_path)  # the module loads by METRIC_PATH from any directory
    names: dict = {}
    exec(compile(code, "lgip_metric/README.md", "exec"), names)
    expected = stats.lgip_statistics(**names["rows"])
    e_inv, e_sens, pr, *interval = capsys.readouterr().out.replace("[", " ").replace("]", " ").replace(",", " ").split()
    assert [float(e_inv), float(e_sens), float(pr)] == [expected["E_inv"], expected["E_sens"], expected["PR"]]
    assert [float(x) for x in interval] == expected["intervals"]["PR"]
