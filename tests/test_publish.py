"""``builders/publish.py``: the dry-run listing of the embedded sample, the refusals, and the upload
path with a fake ``HfApi`` (no network). The fake lists files with huggingface_hub's own
``upload_folder`` code, so "the dry run lists exactly what is uploaded" is checked against it.
"""
from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import gradio
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from huggingface_hub import HfApi, SpaceCard
from huggingface_hub.utils._paths import DEFAULT_IGNORE_PATTERNS

from lgip_dataset import SAMPLE_DIR, schema
from lgip_metric import METRIC_PATH

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "builders"))
import publish  # noqa: E402

ALL = ["--dataset", str(SAMPLE_DIR), "--dataset-repo", "org/lgip", "--metric-repo", "org/lgip",
       "--space-repo", "org/lgip-demo"]


class FakeHfApi:
    """Records calls; lists each upload with huggingface_hub's own folder-upload code, offline."""

    def __init__(self):
        self.repos, self.uploads = [], []

    def create_repo(self, repo_id, **kwargs):
        self.repos.append({"repo_id": repo_id, **kwargs})

    def upload_folder(self, *, repo_id, folder_path, ignore_patterns, **kwargs):
        api = HfApi(token=False)
        api._validate_yaml = lambda **_: None  # the Hub's YAML check is a network call
        additions = api._prepare_upload_folder_additions(
            folder_path, "", ignore_patterns=list(ignore_patterns) + DEFAULT_IGNORE_PATTERNS,
            repo_type=kwargs["repo_type"])
        files = {op.path_in_repo: Path(op.path_or_fileobj) for op in additions}
        readme = (Path(folder_path) / "README.md").read_text(encoding="utf-8")
        self.uploads.append({"repo_id": repo_id, "files": {p: f.stat().st_size for p, f in files.items()},
                             "readme": readme, **kwargs})
        return f"https://huggingface.co/{repo_id}/commit/fake"


def listed(output: str, what: str) -> dict[str, str]:
    """``{path: size text}`` of one part's dry-run listing."""
    block = output.split(f"{what}: ", 1)[1].split("\n\n", 1)[0]
    return dict(re.findall(r"^  (?!ok  )(\S+)\s+([\d.,]+ (?:B|KiB|MiB|GiB))$", block, flags=re.M))


def run(argv, capsys, api=None):
    code = publish.main(argv, api=api)
    out, err = capsys.readouterr()
    return code, out, err


def test_dry_run_lists_exactly_what_the_upload_sends(capsys):
    code, out, err = run([*ALL, "--dry-run"], capsys)
    assert code == 0, err
    assert out.rstrip().endswith("dry run: nothing uploaded")
    dataset = listed(out, "dataset")
    assert set(dataset) == {"README.md", "lgip_build.json", *(
        f"{c}/{p.name}" for c in (*schema.CONFIGS, *schema.OPTIONAL_CONFIGS) for p in (SAMPLE_DIR / c).glob("*.parquet"))}
    assert "plausibility/test-00000-of-00001.parquet" in dataset  # the sample carries its hard flips' figures
    metric = listed(out, "metric")
    statistics = {p.name for p in METRIC_PATH.glob("stats*.py")}  # the statistics and each of their files
    assert set(metric) == {"README.md", "app.py", "requirements.txt", "lgip.py", "about.py", "variant_types.py",
                           *statistics} and len(statistics) > 1  # the module named after the repo
    space = listed(out, "space")
    assert {"app.py", "README.md", "requirements.txt", "lgip_space/probe.py", "lgip_dataset/perturb/perturber.py",
            "lgip_metric/scoring/engine.py", "lgip_dataset/sample/images/test-00000-of-00001.parquet"} <= set(space)
    assert not any("__pycache__" in p or p.endswith(".pyc") or "/." in p or p.startswith(".") for p in space)
    assert "models = the 9 registry Hub ids" in out and "evaluate.load loads the staged lgip.py" in out
    assert 'the card shows evaluate.load("org/lgip")' in out  # the metric card stamped with the repo id
    assert out.count("python_version = 3.11") == 2  # the metric Space and the demo Space both name it

    api = FakeHfApi()
    code, out_upload, err = run(ALL, capsys, api=api)
    assert code == 0, err
    for upload, what in zip(api.uploads, ("dataset", "metric", "space")):
        assert set(upload["files"]) == set(listed(out, what)), what
        assert upload["delete_patterns"] == "*"  # the repo mirrors the folder: no stale shards
    sizes = api.uploads[0]["files"]
    shard = "images/test-00000-of-00001.parquet"
    assert sizes[shard] == (SAMPLE_DIR / shard).stat().st_size
    assert [(r["repo_id"], r["repo_type"], r["space_sdk"]) for r in api.repos] == [
        ("org/lgip", "dataset", None), ("org/lgip", "space", "gradio"), ("org/lgip-demo", "space", "gradio")]
    assert all(r["exist_ok"] and not r["private"] for r in api.repos)
    assert SpaceCard(api.uploads[2]["readme"]).data.datasets == ["org/lgip"]  # the Space points at the dataset
    assert out_upload.count("uploaded https://huggingface.co/") == 3


def test_upload_needs_a_token(capsys, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    code, _, err = run(["--metric-repo", "org/lgip"], capsys)
    assert code == 2 and "set HF_TOKEN" in err


def test_nothing_named_is_an_error(capsys):
    code, _, err = run(["--dry-run"], capsys)
    assert code == 2 and "nothing to publish" in err


def test_space_card_lists_the_registry_hub_ids():
    models = set(SpaceCard.load(REPO / "space" / "README.md").data.models)
    assert models == publish.registry_hub_ids()
    assert "google/siglip2-base-patch16-224" in models and "timm/vit_base_patch16_clip_224.openai" in models


# ------------------------------------------------------------------------------------------ refusals


@pytest.fixture
def sample_copy(tmp_path):
    return Path(shutil.copytree(SAMPLE_DIR, tmp_path / "lgip"))


def refuse(argv, capsys, *messages):
    code, out, err = run([*argv, "--dry-run"], capsys)
    assert code == 2, out
    for message in messages:
        assert re.search(message, err), err
    return err


def test_refuses_a_text_only_build(tmp_path, sample_coco_dir, capsys):
    from lgip_dataset.writing.materialize import BuildConfig, build

    build(BuildConfig(captions=sample_coco_dir / "annotations" / "captions_val2017.json", out=tmp_path / "text", num_images=3),
          progress=False)
    refuse(["--dataset", str(tmp_path / "text"), "--dataset-repo", "org/lgip"], capsys,
           r"no `images` config: a text-only build")


def test_refuses_a_dataset_whose_images_were_all_skipped(sample_copy, capsys):
    shard = next((sample_copy / schema.IMAGES).glob("*.parquet"))
    pq.write_table(pq.read_table(shard).slice(0, 0), shard)
    refuse(["--dataset", str(sample_copy), "--dataset-repo", "org/lgip"], capsys,
           r"the images config holds no image: every image was skipped",
           r"config 'images': the card says 50 rows, the shards hold 0")


def test_refuses_pairs_whose_images_are_missing_and_leftovers(sample_copy, capsys):
    shard = next((sample_copy / schema.IMAGES).glob("*.parquet"))
    pq.write_table(pq.read_table(shard).slice(1), shard)
    (sample_copy / "build_key.json").write_text("{}")
    pq.write_table(pa.table({"x": [1]}), sample_copy / "pairs" / "extra.parquet")
    refuse(["--dataset", str(sample_copy), "--dataset-repo", "org/lgip"], capsys,
           r"1 image id\(s\) used by pairs rows are missing from the images config",
           r"build_key.json is left from an interrupted build",
           r"pairs/extra.parquet is not covered by any config's data_files",
           r"lgip_build.json counts 50 images, the images config holds 49")


@pytest.fixture
def space_copy(tmp_path):
    return Path(shutil.copytree(REPO / "space", tmp_path / "space", ignore=shutil.ignore_patterns("__pycache__")))


def test_refuses_random_weight_results_in_the_space(space_copy, tmp_path, capsys):
    from lgip_metric.scoring.engine import score_dataset
    from lgip_metric.results.record import build_results, write_results
    from lgip_metric.statistics.score_table import statistics

    scored = score_dataset("tiny-clip", SAMPLE_DIR, tmp_path / "run", limit=60, cache_dir="none", progress=False,
                           num_workers=0)
    stats = statistics(scored.frame, bootstrap=0)
    write_results(space_copy / "results" / "tiny.json", build_results(stats, scored.provenance, "scores.parquet"))
    fewer = score_dataset("tiny-clip", SAMPLE_DIR, tmp_path / "run40", limit=40, cache_dir="none", progress=False,
                          num_workers=0)
    write_results(space_copy / "results" / "tiny40.json",
                  build_results(statistics(fewer.frame, bootstrap=0), fewer.provenance,
                                "scores.parquet"))
    refuse(["--space-repo", "org/demo", "--space-dir", str(space_copy)], capsys,
           r"results/tiny.json: made with random weights .*must not be published",
           r"results/ cannot share one leaderboard: .*scored different rows of the dataset \(60 vs 40 rows")


def test_refuses_a_space_card_that_does_not_match(space_copy, capsys):
    card = (space_copy / "README.md").read_text(encoding="utf-8")
    card = card.replace(f"sdk_version: {gradio.__version__}", "sdk_version: 5.0.0").replace("emoji: 🔍\n", "")
    card = card.replace("colorTo: green", "colorTo: teal").replace("- google/siglip-base-patch16-384\n", "")
    (space_copy / "README.md").write_text(card, encoding="utf-8")
    (space_copy / "requirements.txt").write_text("gradio==5.0.0\nnot a requirement!!\n")
    refuse(["--space-repo", "org/demo", "--space-dir", str(space_copy)], capsys,
           rf"sdk_version 5.0.0 differs from the installed gradio {re.escape(gradio.__version__)}",
           r"the YAML header lacks `emoji`", r"colorTo 'teal' is not a Hub color",
           r"missing \['google/siglip-base-patch16-384'\]", r"requirements.txt:2:",
           r"gradio==5.0.0 conflicts with sdk_version")


def test_refuses_a_metric_card_without_the_metric_tags(tmp_path, capsys):
    metric = Path(shutil.copytree(REPO / "lgip_metric", tmp_path / "lgip_metric",
                                  ignore=shutil.ignore_patterns("__pycache__")))
    text = (metric / "README.md").read_text(encoding="utf-8")
    header, body = text.split("\n---\n", 1)
    data = yaml.safe_load(header.removeprefix("---\n"))
    data["tags"] = ["evaluate"]
    body = body.replace('evaluate.load("lgip-benchmark/lgip")', 'evaluate.load("<org>/lgip")')  # the old card's line
    (metric / "README.md").write_text(f"---\n{yaml.safe_dump(data)}---\n{body}", encoding="utf-8")
    refuse(["--metric-repo", "org/lgip", "--metric-dir", str(metric)], capsys, r"tags must include evaluate, metric",
           r'the card does not show evaluate.load\("org/lgip"\)')


def test_refuses_a_broken_metric_module(tmp_path, capsys):
    metric = Path(shutil.copytree(REPO / "lgip_metric", tmp_path / "lgip_metric",
                                  ignore=shutil.ignore_patterns("__pycache__")))
    (metric / "lgip_metric.py").write_text((metric / "lgip_metric.py").read_text() + "\nraise ImportError('broken')\n")
    refuse(["--metric-repo", "org/lgip", "--metric-dir", str(metric)], capsys,
           r"evaluate.load\('lgip.py'\) fails on the staged files")


@pytest.mark.parametrize("line, problem", [
    ("", r"the YAML header lacks `python_version`"),
    ('python_version: "3.9"\n', r"python_version 3.9 is older than the 3.11 the pinned requirements need"),
    ("python_version: 3.10\n", r"python_version must be a quoted \"3.N\" string, e.g. \"3.11\"; got 3.1\b"),
])
def test_refuses_a_space_card_without_a_usable_python_version(space_copy, tmp_path, capsys, line, problem):
    metric = Path(shutil.copytree(REPO / "lgip_metric", tmp_path / "lgip_metric",
                                  ignore=shutil.ignore_patterns("__pycache__")))
    for folder in (space_copy, metric):
        card = (folder / "README.md").read_text(encoding="utf-8")
        (folder / "README.md").write_text(card.replace('python_version: "3.11"\n', line), encoding="utf-8")
    refuse(["--space-repo", "org/demo", "--space-dir", str(space_copy)], capsys, problem)
    refuse(["--metric-repo", "org/lgip", "--metric-dir", str(metric)], capsys, problem)
