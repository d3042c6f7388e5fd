"""Hub names that resolve (issue 51): one repo id, ``lgip_dataset.about.REPO_ID``, in every card, and the
docs' by-name lines run as a user runs them: a first run online, then a second run offline from the cache.

The published layout is what ``builders/publish.py`` stages: the dataset repo (the embedded sample, its
card stamped) and the metric's Space (``lgip.py`` and the flat files it imports), served at the Hub's
URLs by a local stand-in (``helpers.hub_server``, ``HF_ENDPOINT``). The first run is the docs' lines
against it: ``load_dataset`` resolves the repo, lists and downloads its shards and prepares the config
in ``HF_DATASETS_CACHE``; ``evaluate.load`` downloads the module into evaluate's caches. The second run
is the same lines with ``HF_HUB_OFFLINE=1`` and no server: the libraries' own offline look-ups
(``datasets``' ``CachedDatasetModuleFactory``, ``evaluate``'s ``CachedEvaluationModuleFactory``), nothing
patched.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from huggingface_hub import SpaceCard

from helpers.paths import REPO
from lgip_dataset import SAMPLE_DIR, about
from lgip_dataset.writing.card import USES, usage
from lgip_metric import METRIC_PATH
from lgip_metric import about as metric_about

sys.path.insert(0, str(REPO / "builders"))
import publish  # noqa: E402

REPO_ID = about.REPO_ID
HF_VARIABLES = ("HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_DATASETS_CACHE", "HF_EVALUATE_CACHE",
                "HF_MODULES_CACHE", "HF_ENDPOINT", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE")
BY_NAME = re.compile(r"<!--\s*docs-test: skip:[^>]*tests/test_hub_names\.py[^>]*-->\n```python\n(.*?)^```", re.S | re.M)
INPUTS = dict(original_scores=[0.31, 0.31, 0.28, 0.40], variant_scores=[0.30, 0.25, 0.29, 0.33],
              variant_kinds=["paraphrase", "flip", "flip", "flip"], variant_types=["template", "object", "color", "count"],
              caption_ids=["c1", "c1", "c2", "c3"], image_ids=[1, 1, 2, 3], bootstrap=0)

FIRST_RUN = """
import os, sys
from pathlib import Path
sample, metric, root, repo = sys.argv[1:]
sys.path[:0] = [os.path.join(repo, "builders"), os.path.join(repo, "tests")]
from helpers.hub_server import HubServer
with HubServer(Path(root) / "hub") as hub:
    os.environ["HF_ENDPOINT"] = hub.endpoint  # before any Hugging Face library reads it
    import publish
    from lgip_dataset.about import REPO_ID
    publish.stage_dataset(Path(sample), REPO_ID, Path(root) / "hub" / "datasets" / REPO_ID)
    publish.stage_metric(Path(metric), REPO_ID, Path(root) / "hub" / "spaces" / REPO_ID)
    exec(sys.stdin.read())  # the docs' lines, as written, online
print(pairs.num_rows)
"""
SECOND_RUN = """
import json, sys
sample, metric, inputs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
exec(sys.stdin.read())  # the docs' lines, as written
local = load_dataset(sample, "pairs", split="test")
print(json.dumps({"rows": pairs.num_rows, "same_rows": pairs.to_list() == local.to_list(),
                  "module": type(lgip).__module__, "named": lgip.compute(**inputs),
                  "local": evaluate.load(metric).compute(**inputs)}))
"""


def sample_pairs() -> int:
    """The rows of the embedded sample's ``pairs`` config, from its parquet metadata."""
    import pyarrow.parquet as pq

    return sum(pq.read_metadata(shard).num_rows for shard in sorted((SAMPLE_DIR / "pairs").glob("*.parquet")))


def docs_lines() -> str:
    """The Python blocks of README.md and docs/*.md that this test runs (their skip comment names it)."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    return "\n".join(code for page in pages for code in BY_NAME.findall(page.read_text(encoding="utf-8")))


def environment(home: Path, **extra: str) -> dict:
    env = {key: value for key, value in os.environ.items() if key not in HF_VARIABLES}
    return {**env, "HF_HOME": str(home), **extra}


def test_the_docs_give_the_by_name_lines():
    code = docs_lines()
    assert f'load_dataset("{REPO_ID}", "pairs", split="test")' in code and f'evaluate.load("{REPO_ID}")' in code


def test_one_repo_id_in_every_card():
    assert metric_about.REPO_ID == REPO_ID and REPO_ID.endswith("/lgip") and REPO_ID in metric_about.HOMEPAGE
    assert metric_about.CODEBASE_URLS == [f"https://huggingface.co/spaces/{REPO_ID}"]
    assert SpaceCard.load(REPO / "space" / "README.md").data.datasets == [REPO_ID]  # the Run tab's default
    assert f'evaluate.load("{REPO_ID}")' in (METRIC_PATH / "README.md").read_text(encoding="utf-8")
    assert usage(REPO_ID) in USES and "<org>" not in USES  # every card `lgip build` writes


def test_publishing_under_another_id_stamps_it_everywhere(tmp_path):
    publish.stage_dataset(SAMPLE_DIR, "acme/probe", tmp_path / "dataset")
    card = (tmp_path / "dataset" / "README.md").read_text(encoding="utf-8")
    assert card.count('load_dataset("acme/probe"') == 3 and "<org>" not in card
    shard = tmp_path / "dataset" / "pairs" / "test-00000-of-00001.parquet"
    assert shard.is_symlink() and shard.read_bytes() == (SAMPLE_DIR / "pairs" / shard.name).read_bytes()
    args = publish.build_parser().parse_args(["--repo-id", "acme/probe", "--dataset", "build", "--metric", "--space"])
    assert publish.repo_ids(args) == {"dataset": "acme/probe", "datasets": "acme/probe", "metric": "acme/probe",
                                      "space": "acme/probe-demo"}
    default = publish.build_parser().parse_args(["--space"])  # the Space points at the default dataset repo
    assert publish.repo_ids(default) == {"datasets": REPO_ID, "space": REPO_ID + "-demo"}
    with pytest.raises(publish.PublishError, match="'lgip': a Hub repo id is ORG/NAME"):  # evaluate-metric/lgip
        publish.repo_ids(publish.build_parser().parse_args(["--repo-id", "lgip", "--metric"]))
    (tmp_path / "metric").mkdir()
    for name in publish.STAMPED:
        (tmp_path / "metric" / name).write_bytes((METRIC_PATH / name).read_bytes())
    publish.stamp_metric(tmp_path / "metric", "acme/probe")
    assert 'evaluate.load("acme/probe")' in (tmp_path / "metric" / "README.md").read_text(encoding="utf-8")
    assert 'REPO_ID = "acme/probe"' in (tmp_path / "metric" / "about.py").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def first_run(tmp_path_factory) -> Path:
    """A cache home after a first, online run against the published layout (see the module docstring)."""
    root = tmp_path_factory.mktemp("published")
    (root / "work").mkdir()  # an empty folder: no local path shadows the repo id
    done = subprocess.run([sys.executable, "-c", FIRST_RUN, str(SAMPLE_DIR), str(METRIC_PATH), str(root),
                           str(REPO)], input=docs_lines(), cwd=root / "work",
                          env=environment(root / "home"), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == [str(sample_pairs())]
    return root


def test_the_docs_lines_load_by_name_offline_from_the_cache(first_run):
    done = subprocess.run(
        [sys.executable, "-c", SECOND_RUN, str(SAMPLE_DIR), str(METRIC_PATH), json.dumps(INPUTS)],
        input=docs_lines(), cwd=first_run / "work", capture_output=True, text=True, timeout=300,
        env=environment(first_run / "home", HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_EVALUATE_OFFLINE="1",
                        HF_ENDPOINT="http://127.0.0.1:9"))  # nothing listens there: offline means offline
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["same_rows"] and result["rows"] == sample_pairs()  # the published rows, read back by name
    namespace, name = REPO_ID.split("/")
    assert result["module"].startswith(f"evaluate_modules.metrics.{namespace}--{name}.")  # the module by its Hub name
    assert result["named"] == result["local"] and 0 <= result["named"]["PR"] <= 1
    assert "offline mode is enabled" in done.stderr.lower() or "cached version" in done.stderr
