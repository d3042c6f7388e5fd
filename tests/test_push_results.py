"""``lgip push-results``: model-index entries through huggingface_hub's card helpers, offline, on local cards."""
from __future__ import annotations

import json
from pathlib import Path

import huggingface_hub
import pytest
import yaml
from huggingface_hub import EvalResult, ModelCard
from huggingface_hub.repocard_data import model_index_to_eval_results

from helpers.results_fixture import FIXTURE, edited_fixture
from lgip_metric.cli import main as lgip
from lgip_metric.results.record import load_results

DATASET = ["--dataset-id", "org/lgip"]
EXISTING = """---
license: mit
model-index:
- name: my-clip
  results:
  - task: {type: zero-shot-image-classification}
    dataset: {name: ImageNet, type: imagenet-1k, split: validation}
    metrics:
    - {type: accuracy, value: 0.68}
---

# my-clip

Words the card already had.
"""


def expected(results_dir: Path) -> dict[str, float]:
    """What a card should carry, read straight from results.json: every flat metric, the hard block as
    ``<metric>/hard``, and each figure's interval as ``<name>_ci_low`` / ``<name>_ci_high``."""
    data = json.loads((results_dir / "results.json").read_text(encoding="utf-8"))
    statistics = data["statistics"]
    figures = dict(load_results(results_dir).metrics)
    figures.update({f"{m}/hard": statistics["hard"][m] for m in ("E_sens", "PR") if "hard" in statistics})
    for name in list(figures):
        metric, _, part = name.partition("/")
        block = statistics if not part else statistics[part] if part == "hard" else statistics["per_type"][part]
        if metric in (block.get("intervals") or {}):
            figures[f"{name}_ci_low"], figures[f"{name}_ci_high"] = block["intervals"][metric]
    return figures


def pushed(card_path: Path) -> dict[str, float]:
    """``metric type: value`` of the LGIP entries in a card."""
    card = ModelCard.load(card_path)
    return {r.metric_type: r.metric_value for r in card.data.eval_results if r.dataset_type == "org/lgip"}


def test_dry_run_prints_the_yaml_and_writes_nothing(tmp_path, capsys):
    assert lgip(["push-results", str(FIXTURE), "--repo", str(tmp_path), *DATASET, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("dry run: nothing written") and not list(tmp_path.iterdir())
    header = out[out.index("model-index:"):out.index("\ndry run")]
    name, entries = model_index_to_eval_results(yaml.safe_load(header)["model-index"])
    results = load_results(FIXTURE)
    assert name == results.data["model"]["model_id"]
    assert {e.metric_type: e.metric_value for e in entries} == expected(FIXTURE)  # every figure, exactly
    assert results.metrics.items() <= expected(FIXTURE).items() and "PR_ci_low" in expected(FIXTURE)
    assert {(e.dataset_type, e.dataset_config, e.dataset_split, e.metric_config) for e in entries} == {
        ("org/lgip", "pairs", "test", "base_pair")}
    assert "random weights" in out


def test_writes_a_local_card_keeping_what_it_had_and_updating_on_rerun(tmp_path, capsys):
    (tmp_path / "README.md").write_text(EXISTING, encoding="utf-8")
    assert lgip(["push-results", str(FIXTURE), "--repo", str(tmp_path), *DATASET]) == 0
    card = ModelCard.load(tmp_path / "README.md")
    assert "Words the card already had." in card.text and card.data.license == "mit"
    assert card.data.model_name == "my-clip"  # the card's own name is kept
    assert any(r.dataset_type == "imagenet-1k" and r.metric_value == 0.68 for r in card.data.eval_results)
    assert pushed(tmp_path / "README.md") == expected(FIXTURE)
    # a rerun with new numbers updates the same entries instead of adding a second set
    rerun = edited_fixture(tmp_path / "rerun", lambda data: data["statistics"].update(PR=0.5))
    assert lgip(["push-results", str(rerun), "--repo", str(tmp_path / "README.md"), *DATASET]) == 0
    card = ModelCard.load(tmp_path / "README.md")
    assert pushed(tmp_path / "README.md")["PR"] == 0.5
    assert len(card.data.eval_results) == 1 + len(expected(FIXTURE))


def test_a_folder_without_a_card_gets_one(tmp_path, capsys):
    assert lgip(["push-results", str(FIXTURE), "--repo", str(tmp_path), *DATASET]) == 0
    assert pushed(tmp_path / "README.md") == expected(FIXTURE)


@pytest.fixture
def real_weights(tmp_path) -> Path:
    """The fixture as if scored with real weights (the Hub refuses random-weight numbers)."""
    return edited_fixture(tmp_path / "real", lambda data: data["model"].update(random_weights=False))


def test_hub_path_uses_metadata_update(real_weights, monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(huggingface_hub, "metadata_update", lambda repo, metadata, **kw: calls.append((repo, metadata, kw))
                        or "https://huggingface.co/org/model/commit/fake")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    assert lgip(["push-results", str(real_weights), "--repo", "org/model", *DATASET]) == 2
    assert "set HF_TOKEN" in capsys.readouterr().err and not calls
    monkeypatch.setenv("HF_TOKEN", "token")
    assert lgip(["push-results", str(real_weights), "--repo", "org/model", *DATASET]) == 0
    [(repo, metadata, kwargs)] = calls
    _, entries = model_index_to_eval_results(metadata["model-index"])
    assert repo == "org/model" and kwargs["overwrite"] is True and kwargs["token"] == "token"
    assert all(isinstance(e, EvalResult) for e in entries) and len(entries) == len(expected(real_weights))


def test_refusals(tmp_path, capsys):
    assert lgip(["push-results", str(FIXTURE), "--repo", "org/model", *DATASET]) == 2
    assert "made with random weights" in capsys.readouterr().err
    local = edited_fixture(tmp_path / "local",  # scored on a local dataset folder
                           lambda data: data["dataset"].update(source=str(tmp_path)))
    assert lgip(["push-results", str(local), "--repo", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "pass --dataset-id with the Hub id of that dataset" in err and "Traceback" not in err
    assert not (tmp_path / "README.md").exists()
