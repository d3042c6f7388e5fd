"""The `evaluate` module: evaluate.load + compute, its doctests, its card, and bad input."""
from __future__ import annotations

import doctest
import json
import math
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import evaluate
import pytest

from lgip_metric import lgip_metric as module
from lgip_metric import stats
from lgip_metric.statistics import reference
from helpers.stats_rows import FIELDS, random_rows

REPO = Path(__file__).resolve().parents[1]
METRIC_DIR = REPO / "lgip_metric"


@pytest.fixture(scope="module")
def lgip():
    return evaluate.load(str(METRIC_DIR))


def dataset_rows(seed: int, **kwargs) -> dict:
    """Random rows typed like the dataset: string caption ids, integer image ids."""
    data = random_rows(seed, int_ids=True, **kwargs)
    return {**data, "caption_ids": [f"cap{c}" for c in data["caption_ids"]]}


@pytest.mark.parametrize("pair_level", [False, True])
def test_compute_equals_the_statistics_module(lgip, pair_level):
    data = dataset_rows(5)
    got = lgip.compute(**data, bootstrap=100, seed=3, pair_level=pair_level)
    assert got == stats.lgip_statistics(**data, bootstrap=100, seed=3, pair_level=pair_level)
    assert got["averaging"] == ("pair_level" if pair_level else "base_pair")


def test_add_batch_then_compute(lgip):
    data = dataset_rows(6)
    half = len(data["caption_ids"]) // 2
    lgip.add_batch(**{f: data[f][:half] for f in FIELDS})
    lgip.add_batch(**{f: data[f][half:] for f in FIELDS})
    assert lgip.compute(bootstrap=0) == stats.lgip_statistics(**data, bootstrap=0)


def test_module_docstring_examples_run_as_doctests(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # the examples load the module by lgip_metric.METRIC_PATH, from anywhere
    outcome = doctest.testmod(module, verbose=False, raise_on_error=False)
    assert outcome.attempted >= 8 and outcome.failed == 0


def test_metric_card_examples_run(monkeypatch, lgip):
    """Every ```python block with >>> prompts in the card's Examples runs as a doctest."""
    card = (METRIC_DIR / "README.md").read_text(encoding="utf-8")
    examples = card[card.index("### Examples"):card.index("## Limitations")]
    blocks = [b for b in re.findall(r"```python\n(.*?)```", examples, flags=re.S) if ">>>" in b]
    assert len(blocks) >= 4
    test = doctest.DocTestParser().get_doctest("\n".join(blocks), {"lgip": lgip}, "README examples", "README.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.tries >= 6 and runner.failures == 0


def test_metric_card_header_sections_and_quoted_values():
    card = (METRIC_DIR / "README.md").read_text(encoding="utf-8")
    header = card.split("---")[1]
    for key in ("title", "emoji", "colorFrom", "colorTo", "sdk", "sdk_version", "app_file: app.py", "pinned",
                "tags", "description"):
        assert f"\n{key}" in header
    sections = ["## Metric Description", "## How to Use", "### Inputs", "### Output Values",
                "#### Values from Popular Papers", "### Examples", "## Limitations and Bias", "## Citation"]
    assert [card.index(s) for s in sections] == sorted(card.index(s) for s in sections)
    table1 = {row[0]: row[1:] for row in _markdown_rows(card, "Table 1 (quoted from the paper)")}
    assert table1 == {r["model"]: [r["E_inv"], r["E_sens"], r["PR"]] for r in reference.table1()}
    table2 = {row[0]: row[1:] for row in _markdown_rows(card, "Table 2, per flip type")}
    assert table2 == {r["model"]: [r["per_type"][t][m] for t in ("object", "color", "count") for m in ("E_sens", "PR")]
                      for r in reference.table2()}


def _markdown_rows(text: str, title: str) -> list[list]:
    lines = text[text.index(title):].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|---"))
    rows = []
    for line in lines[start + 1:]:
        if not line.startswith("|"):
            return rows
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows.append([cells[0], *map(float, cells[1:])])
    return rows


# ------------------------------------------------------------------------------------------ bad input


def _rows():
    return dataset_rows(0, n_images=4)


def test_mismatched_lengths_are_refused(lgip):
    data = _rows()
    data["variant_scores"] = data["variant_scores"][:-2]
    with pytest.raises(ValueError, match="Mismatch in the number of original_scores .* and variant_scores"):
        lgip.compute(**data)


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_nan_and_inf_scores_are_refused(lgip, bad):
    data = _rows()
    data["variant_scores"][4] = bad
    with pytest.raises(ValueError, match=r"variant_scores has 1 NaN/inf value\(s\); the first is row 4"):
        lgip.compute(**data)


def test_unknown_types_and_kinds_are_refused(lgip):
    data = _rows()
    data["variant_types"][1] = "colour"
    with pytest.raises(ValueError, match=r"unknown variant type\(s\) \['colour'\] \(first at row 1\)"):
        lgip.compute(**data)
    data = _rows()
    data["variant_kinds"][0] = "antonym"
    with pytest.raises(ValueError, match="unknown variant kind 'antonym' at row 0"):
        lgip.compute(**data)


def test_an_empty_flip_set_gives_e_inv_and_names_the_absent_statistics(lgip):
    data = _rows()
    keep = [i for i, kind in enumerate(data["variant_kinds"]) if kind == "paraphrase"]
    result = lgip.compute(**{f: [data[f][i] for i in keep] for f in FIELDS}, bootstrap=0)
    assert result["E_inv"] is not None and result["E_sens"] is None and result["PR"] is None
    assert set(result["absent"]) == {"E_sens", "PR"} and "the flip set is empty" in result["absent"]["PR"]


@pytest.mark.parametrize(("field", "value"), [("original_scores", "high"), ("image_ids", [1]), ("caption_ids", {"c": 1})])
def test_wrong_value_types_are_refused_by_the_declared_features(lgip, field, value):
    data = _rows()
    data[field] = [value] * len(data[field])
    with pytest.raises((ValueError, TypeError), match=f"{field}|str|float|int"):
        lgip.compute(**data)


# ------------------------------------------------------------------------------------------ fresh venv


def test_info_names_homepage_code_license_and_the_shared_citation(lgip):
    from lgip_metric import METRIC_PATH, about

    assert METRIC_PATH == METRIC_DIR.resolve() and (METRIC_PATH / "lgip_metric.py").is_file()
    assert lgip.homepage == about.HOMEPAGE and lgip.codebase_urls == about.CODEBASE_URLS
    assert lgip.license == about.LICENSE == "apache-2.0"
    assert lgip.citation == about.CITATION
    card = (METRIC_DIR / "README.md").read_text(encoding="utf-8")
    assert f"```bibtex\n{about.CITATION}\n```" in card  # the metric card cites exactly the same entry
    assert "evaluate.load(str(METRIC_PATH))" in card


def test_the_metric_copy_of_the_citation_equals_its_home_in_lgip_dataset():
    """lgip_metric/about.py ships alone beside the evaluate module on the Hub, so it holds a copy."""
    from lgip_dataset import about as home
    from lgip_metric import about

    assert (about.CITATION, about.HOMEPAGE) == (home.CITATION, home.HOMEPAGE)


def test_card_inputs_list_exactly_the_declared_types():
    """The metric card's Inputs name every type the module declares (variant_types.py), and no other."""
    import re

    from lgip_metric.variant_types import VARIANT_TYPES

    card = (METRIC_DIR / "README.md").read_text(encoding="utf-8")
    inputs = card.split("### Inputs", 1)[1].split("\n### ", 1)[0]
    types = inputs.split("**variant_types**", 1)[1].split("\n- **", 1)[0]
    assert set(re.findall(r'`"([a-z_]+)"`', types)) == set(VARIANT_TYPES)


# Installed distributions a fresh `pip install evaluate` venv would not have (and the lgip package).
NOT_EVALUATE_DEPS = ("torch", "transformers", "nvidia", "triton", "open_clip", "timm", "gradio", "cuda", "lgip",
                     "__editable__")


def _fresh_venv(root: Path) -> Path:
    """A new venv that sees `evaluate` and its dependencies (linked from this one) but not lgip or torch."""
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(root)], check=True)
    deps = root / "deps"
    deps.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.startswith(NOT_EVALUATE_DEPS) and entry.suffix != ".pth":
            (deps / entry.name).symlink_to(entry)
    site = next((root / "lib").glob("python*/site-packages"))
    (site / "deps.pth").write_text(f"{deps}\n", encoding="utf-8")
    return root / "bin" / "python"


SCRIPT = """
import importlib.util, json, os, sys
import evaluate
for name in ("lgip_metric", "lgip_dataset", "torch"):
    assert importlib.util.find_spec(name) is None, f"{name} must not be importable in the fresh venv"
rows = json.loads(sys.argv[3])
by_path = evaluate.load(sys.argv[1]).compute(**rows, bootstrap=50, seed=1)
os.chdir(sys.argv[2])  # a checkout: the folder name alone
by_name = evaluate.load("lgip_metric").compute(**rows, bootstrap=50, seed=1)
print(json.dumps([by_path, by_name]))
"""


def test_loads_offline_in_a_fresh_venv_from_another_directory(tmp_path):
    python = _fresh_venv(tmp_path / "venv")
    checkout = tmp_path / "checkout"
    shutil.copytree(METRIC_DIR, checkout / "lgip_metric", ignore=shutil.ignore_patterns("__pycache__"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    data = dataset_rows(9, n_images=6)
    env = {**os.environ, "HF_EVALUATE_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "HF_HOME": str(tmp_path / "hf"), "PYTHONPATH": ""}
    done = subprocess.run([str(python), "-c", SCRIPT, str(checkout / "lgip_metric"), str(checkout), json.dumps(data)],
                          cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    expected = stats.lgip_statistics(**data, bootstrap=50, seed=1)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [expected, expected]
