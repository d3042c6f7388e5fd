"""The Space: named API endpoints with named outputs, one model's failure beside the others' results, and the
Leaderboard over a sweep's run folders. The app is built with ``build_demo()`` and its events called as the
server calls them (no server is launched)."""
from __future__ import annotations

import re

import gradio as gr
import pytest

from helpers.models import other_tiny_model
from helpers.space import TINY, import_space_app
from lgip_dataset import SAMPLE_DIR, schema
from lgip_dataset.files.hub_io import load_config
from lgip_metric import sweep
from lgip_metric.results.record import load_results
from lgip_metric.statistics import reference
from lgip_metric.testing import make_tiny_openclip

ENDPOINTS = {"/sample", "/probe", "/leaderboard", "/run"}


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    """A local open_clip folder whose weights file cannot be read."""
    folder = tmp_path_factory.mktemp("broken")
    name = make_tiny_openclip(folder)
    (folder / "open_clip_model.safetensors").write_bytes(b"not weights")
    return name


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A sweep's --out: two tiny models on the sample's first rows, through the library."""
    root = tmp_path_factory.mktemp("runs")
    done = sweep.evaluate_models([TINY, other_tiny_model(root / "other")], root / "out", limit=60, bootstrap=10,
                                 num_workers=0, device="cpu", cache_dir="none", progress=False)
    assert not done.failed
    return root / "out"


@pytest.fixture(scope="module")
def demo(broken, runs, tmp_path_factory):
    """The app with the tiny model and the broken one allowed, and the runs folder named by the environment
    (as on a Space), built once."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LGIP_SPACE_RUNS", str(runs))
        return import_space_app().build_demo(extra_models=[TINY, broken],
                                             results_dir=tmp_path_factory.mktemp("results"))


def event(demo: gr.Blocks, api_name: str):
    """The function an API endpoint of ``demo`` calls."""
    return next(fn.fn for fn in demo.fns.values() if fn.api_name == api_name)


def test_every_endpoint_and_its_outputs_have_meaningful_names(demo):
    info = demo.get_api_info()
    assert set(info["named_endpoints"]) == ENDPOINTS and not info["unnamed_endpoints"]
    for name, endpoint in info["named_endpoints"].items():
        labels = [p["label"] for p in endpoint["parameters"]] + [r["label"] for r in endpoint["returns"]]
        assert all(labels) and not [label for label in labels if re.fullmatch(r"value_\d+", label)], (name, labels)
    assert "Per-model summary" in [r["label"] for r in info["named_endpoints"]["/probe"]["returns"]]


def test_a_model_that_cannot_load_is_shown_beside_the_others_results(demo, broken):
    probe = event(demo, "probe")
    image = load_config(SAMPLE_DIR, schema.IMAGES)[0]["image"].convert("RGB")
    variants, summary, chart, table = probe(image, "Two dogs playing with a red frisbee.", [broken, TINY], 0,
                                            ["core"])
    assert variants and chart is not None
    assert set(table["model"]) == {f"{TINY} (random weights: numbers are meaningless)"}
    assert f"| {TINY} (random weights" in summary  # the working model's row stays
    assert f"❌ **{broken}** could not be scored: Model {broken!r} could not be loaded" in summary
    with pytest.raises(gr.Error, match="could not be loaded"):  # nothing to show: the error alone
        probe(image, "Two dogs playing with a red frisbee.", [broken], 0, ["core"])


def test_the_leaderboard_shows_a_runs_folder_beside_the_papers_rows(demo, runs):
    notes, table, plot = event(demo, "leaderboard")()
    measured = table[table.source == "measured"]
    labels = {load_results(folder).label for folder in runs.iterdir() if folder.is_dir()}
    assert set(measured.model) == labels and len(labels) == 2
    assert (table.source == reference.LABEL).sum() == len(reference.table1())
    assert list(measured.PR) == sorted(measured.PR, reverse=True) and "PR 95% CI" in table.columns
    assert "2 measured model(s)" in notes and plot.suffix == ".png"
