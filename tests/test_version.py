"""One version everywhere: ``lgip_dataset.about.VERSION`` is what ``lgip --version``, the installed package,
``lgip_build.json`` and the dataset card, ``results.json``, the ``evaluate`` module's copy, the metric card and
CHANGELOG.md's newest release say."""
from __future__ import annotations

import json
import re
from importlib.metadata import version

from lgip_dataset import SAMPLE_DIR, __version__, about
from lgip_metric import METRIC_PATH
from lgip_metric import about as metric_about
from helpers.paths import REPO
from helpers.reliability import run_cli


def test_one_version_everywhere():
    assert __version__ == about.VERSION == metric_about.VERSION == version("lgip")
    outcome = run_cli("--version")
    assert outcome.code == 0 and outcome.out.strip() == f"lgip {about.VERSION}"
    card = (METRIC_PATH / "README.md").read_text(encoding="utf-8")
    assert f"Version: lgip {about.VERSION} " in card


def test_the_changelog_says_what_this_version_changed():
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", changelog, re.M)
    assert releases[0][0] == about.VERSION and ("0.1.0" in dict(releases))
    newest = changelog.split(f"## [{about.VERSION}]", 1)[1].split("\n## [", 1)[0]
    assert re.search(r"^### (Added|Changed|Fixed|Removed)$", newest, re.M)  # grouped, Keep a Changelog style


def test_the_embedded_sample_and_its_card_were_built_by_this_version():
    info = json.loads((SAMPLE_DIR / "lgip_build.json").read_text(encoding="utf-8"))
    assert info["lgip_version"] == about.VERSION
    assert f"lgip {about.VERSION};" in (SAMPLE_DIR / "README.md").read_text(encoding="utf-8")


def test_results_json_records_this_version(tmp_path):
    out = tmp_path / "run"
    outcome = run_cli("evaluate", "--model", "random:tiny-clip", "--dataset", SAMPLE_DIR, "--limit", "60",
                      "--bootstrap", "20", "--cache-dir", "none", "--num-workers", "0", "--no-progress", "--out", out)
    assert outcome.code == 0, outcome.text[-2000:]
    assert json.loads((out / "results.json").read_text(encoding="utf-8"))["lgip_version"] == about.VERSION
