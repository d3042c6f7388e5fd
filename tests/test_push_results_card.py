"""``lgip push-results`` (issue 51): the hard flips' block and every interval reach the model-index; a dry
run to a Hub id with random-weight results prints them and names the local-folder way; a folder without
a card gets a real one, not huggingface_hub's blank template."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from huggingface_hub import ModelCard
from huggingface_hub.repocard_data import model_index_to_eval_results

from helpers.results_fixture import FIXTURE, edited_fixture
from lgip_metric.cli import main as lgip

DATASET = ["--dataset-id", "org/lgip"]
HARD = {"kind": "flip", "E_sens": 0.0123, "PR": 0.5625,  # figures no other block of the fixture holds
        "counts": {m: {"base_pairs": 16, "variant_rows": 40, "images": 6} for m in ("E_sens", "PR")},
        "intervals": {"E_sens": [-0.0081, 0.0311], "PR": [0.4375, 0.6875]}}


@pytest.fixture
def with_hard(tmp_path) -> Path:
    """The fixture with a hard flips' block, as `lgip evaluate` writes it on a build with hard flips."""
    return edited_fixture(tmp_path / "hard", lambda data: data["statistics"].update(hard=HARD))


def printed_entries(out: str) -> dict:
    """``metric type: EvalResult`` of the model-index YAML a run printed, read back by huggingface_hub."""
    header = out[out.index("model-index:"):]
    header = header[:header.index("\n\n")]
    _, entries = model_index_to_eval_results(yaml.safe_load(header)["model-index"])
    return {e.metric_type: e for e in entries}


def test_the_model_index_holds_the_hard_block_and_every_interval(with_hard, capsys):
    assert lgip(["push-results", str(with_hard), "--repo", "card/", *DATASET, "--dry-run"]) == 0
    entries = printed_entries(capsys.readouterr().out)
    statistics = json.loads((with_hard / "results.json").read_text(encoding="utf-8"))["statistics"]
    assert entries["PR/hard"].metric_value == HARD["PR"] and entries["E_sens/hard"].metric_value == HARD["E_sens"]
    assert entries["PR/hard"].metric_name == "LGIP PR (hard flips)"
    assert [entries["PR/hard_ci_low"].metric_value, entries["PR/hard_ci_high"].metric_value] == HARD["intervals"]["PR"]
    for metric in ("E_inv", "E_sens", "PR"):  # the headline intervals
        assert [entries[f"{metric}_ci_low"].metric_value, entries[f"{metric}_ci_high"].metric_value] == \
            statistics["intervals"][metric]
    object_pr = statistics["per_type"]["object"]["intervals"]["PR"]
    assert [entries["PR/object_ci_low"].metric_value, entries["PR/object_ci_high"].metric_value] == object_pr
    low = entries["PR_ci_low"]
    assert low.metric_name == "LGIP PR, 95% interval, low"
    assert low.metric_args == statistics["bootstrap"] and low.metric_args["unit"] == "image"
    assert entries["PR"].metric_args is None  # a figure itself carries no bootstrap arguments
    assert {e.dataset_type for e in entries.values()} == {"org/lgip"}


def test_a_dry_run_to_a_hub_id_with_random_weights_prints_the_yaml_and_names_the_local_way(capsys):
    assert lgip(["push-results", str(FIXTURE), "--repo", "org/model", *DATASET, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "PR_ci_high" in printed_entries(out)
    assert "meaningless" in out and "pass --repo a local folder" in out
    assert out.rstrip().endswith("dry run: nothing written")
    # a real push of random weights stays refused, with the same way out
    assert lgip(["push-results", str(FIXTURE), "--repo", "org/model", *DATASET]) == 2
    err = capsys.readouterr().err
    assert "made with random weights" in err and "pass --repo a local folder" in err and "Traceback" not in err


def test_a_folder_without_a_card_gets_a_real_card(with_hard, tmp_path, capsys):
    folder = tmp_path / "card"  # a folder that does not exist yet is made, not taken for the card's file name
    assert lgip(["push-results", str(with_hard), "--repo", str(folder), *DATASET]) == 0
    assert "a new model card" in capsys.readouterr().out
    card = ModelCard.load(folder / "README.md")
    assert card.text.lstrip().startswith("# open_clip:lgip-tiny-clip")  # the model's name
    assert "LGIP (Language-Guided Invariance Probing)" in card.text  # what LGIP is
    assert "https://huggingface.co/datasets/org/lgip" in card.text and card.data.datasets == ["org/lgip"]
    assert "meaningless" in card.text  # random weights say so in the card too
    assert "| PR/hard | 0.5625 | [0.4375, 0.6875] |" in card.text
    assert "[More Information Needed]" not in card.text  # not huggingface_hub's blank template
    results = {r.metric_type: r.metric_value for r in card.data.eval_results}
    assert results["PR/hard"] == HARD["PR"] and results["E_sens/hard_ci_low"] == HARD["intervals"]["E_sens"][0]
    # a second push updates that card in place, keeping its words
    assert lgip(["push-results", str(with_hard), "--repo", str(folder), *DATASET]) == 0
    again = ModelCard.load(folder / "README.md")
    assert again.text == card.text and len(again.data.eval_results) == len(card.data.eval_results)
