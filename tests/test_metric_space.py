"""The metric module's own Space (``lgip_metric/app.py``), served on localhost and driven through
gradio_client; and the same app in the Hub layout ``publish.py`` stages (``<name>.py`` beside it)."""
from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import evaluate
import numpy as np
import pandas as pd
import pytest
from gradio_client import Client, handle_file

REPO = Path(__file__).resolve().parents[1]
METRIC_DIR = REPO / "lgip_metric"

pytestmark = pytest.mark.slow


def import_app(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def metric_app():
    return import_app(METRIC_DIR / "app.py", "lgip_metric_space_app")


@pytest.fixture(scope="module")
def client(metric_app):
    demo = metric_app.build_demo()
    demo.queue().launch(prevent_thread_lock=True, server_name="127.0.0.1", quiet=True)
    yield Client(demo.local_url, verbose=False)
    demo.close()


@pytest.fixture
def example(metric_app) -> pd.DataFrame:
    return metric_app.EXAMPLE.copy()


def compute(client, path, pair_level=False, bootstrap=0, seed=0):
    return client.predict(handle_file(str(path)), pair_level, bootstrap, seed, api_name="/compute")


def test_the_app_does_not_break_evaluate_load(monkeypatch, example):
    assert (METRIC_DIR / "app.py").is_file()
    monkeypatch.chdir(REPO)
    metric = evaluate.load("lgip_metric")
    assert metric.name == "lgip" and metric.compute(**example.to_dict("list"), bootstrap=0)["PR"] == pytest.approx(0.75)


def test_csv_json_and_score_file_columns_give_the_metric(client, example, tmp_path):
    reference = evaluate.load(str(METRIC_DIR)).compute(**example.to_dict("list"), bootstrap=0)
    csv, records = tmp_path / "scores.csv", tmp_path / "scores.json"
    example.to_csv(csv, index=False)
    example.to_json(records, orient="records")
    renamed = tmp_path / "engine_columns.jsonl"
    example.rename(columns={"original_scores": "s_original", "variant_scores": "s_variant", "variant_kinds": "kind",
                            "variant_types": "type", "caption_ids": "caption_id", "image_ids": "image_id"}).to_json(
        renamed, orient="records", lines=True)
    for path in (csv, records, renamed):
        headline, per_type, raw = compute(client, path)
        assert raw["E_inv"] == pytest.approx(reference["E_inv"]) and raw["PR"] == pytest.approx(0.75)
        assert "| E_sens | 0.0450 |" in headline and "| PR | 0.7500 | — | 2 | 3 | 2 |" in headline
        table = pd.DataFrame(per_type["data"], columns=per_type["headers"])
        assert table.set_index("type").loc["object", "PR"] == 1.0


def test_intervals_and_pair_level(client, example, tmp_path):
    path = tmp_path / "scores.csv"
    example.to_csv(path, index=False)
    headline, _, raw = compute(client, path, pair_level=True, bootstrap=200, seed=1)
    assert raw["averaging"] == "pair_level" and raw["bootstrap"]["resamples"] == 200
    assert raw["PR"] == pytest.approx(2 / 3) and re.search(r"\| PR \| 0\.6667 \| \[", headline)


BAD = {
    "missing column": (lambda f: f.drop(columns="image_ids"), ".csv", r"lacks the column\(s\) image_ids"),
    "NaN score": (lambda f: f.assign(variant_scores=[0.3, np.nan, 0.3, 0.3, 0.3]), ".csv",
                  r"variant_scores has 1 NaN/inf value\(s\); the first is row 1"),
    "unknown type": (lambda f: f.assign(variant_types=["template", "object", "color", "marker", "size"]), ".csv",
                     r"unknown variant type\(s\) \['size'\]"),
    "not a table": (None, ".json", r"could not be read as JSON"),
    "wrong file type": (None, ".txt", r"Invalid file type"),
}


def test_scores_of_one_kind_give_their_statistics_and_say_why_the_others_are_absent(client, example, tmp_path):
    path = tmp_path / "paraphrases.csv"
    example[example.variant_kinds == "paraphrase"].to_csv(path, index=False)
    headline, _, raw = compute(client, path)
    assert raw["E_inv"] == pytest.approx(0.005) and raw["PR"] is None
    assert "| PR | — | the flip set is empty" in headline


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_bad_scores_get_a_clear_message(case, client, example, tmp_path):
    change, suffix, message = BAD[case]
    path = tmp_path / f"scores{suffix}"
    if change is None:
        path.write_text("this is { not a table")
    else:
        change(example).to_csv(path, index=False)
    with pytest.raises(Exception, match=message):
        compute(client, path)
    example.to_csv(tmp_path / "good.csv", index=False)
    assert compute(client, tmp_path / "good.csv")[2]["PR"] == pytest.approx(0.75)  # still serving


def test_bootstrap_out_of_range_is_refused(client, example, tmp_path):
    example.to_csv(tmp_path / "good.csv", index=False)
    with pytest.raises(Exception, match=r"Bootstrap resamples must be between 0 and 10,000"):
        compute(client, tmp_path / "good.csv", bootstrap=10**6)


def test_the_app_runs_in_the_hub_layout(tmp_path, monkeypatch):
    """On the Hub the module script is named after the Space (evaluate fetches NAME.py)."""
    space = tmp_path / "app"
    space.mkdir()
    statistics = [p.name for p in METRIC_DIR.glob("stats*.py")]  # the statistics and each of their files
    for name in ("app.py", *statistics, "about.py", "variant_types.py", "README.md", "requirements.txt"):
        shutil.copy(METRIC_DIR / name, space / name)
    shutil.copy(METRIC_DIR / "lgip_metric.py", space / "lgip.py")
    monkeypatch.setenv("SPACE_ID", "someone/lgip")
    app = import_app(space / "app.py", "lgip_metric_space_hub_layout")
    assert app.module_script() == space / "lgip.py"
    assert app.build_demo() is not None
