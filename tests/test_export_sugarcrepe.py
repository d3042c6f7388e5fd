"""``lgip export --format sugarcrepe``: a build's flips in the layout CLIP_benchmark's SugarCrepe task reads, and
CLIP_benchmark's accuracy on the export equal to LGIP's pair-level accuracy on the same flips and random weights.

CLIP_benchmark is in the ``dev`` extra, so CI runs these checks; an environment without it skips them, saying so."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

from lgip_dataset import SAMPLE_DIR, schema
from lgip_dataset.errors import DataError
from lgip_dataset.writing.export_sugarcrepe import IMAGE_FOLDER, MANIFEST, export_sugarcrepe
from lgip_metric.cli import main as lgip
from lgip_metric.testing import make_tiny_openclip
from helpers.paths import FIXTURES

PEER = "CLIP_benchmark (pip install -e .[dev])"


@pytest.fixture(scope="module")
def sample_export(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "sugar_crepe"
    assert lgip(["export", str(SAMPLE_DIR), "--format", "sugarcrepe", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> str:
    """The tiny open_clip model as a ``local-dir:`` folder both tools load, with the same seeded random weights."""
    return make_tiny_openclip(tmp_path_factory.mktemp("model"))


def lgip_scores(model: str, dataset: Path, out: Path) -> pd.DataFrame:
    assert lgip(["score", "--model", model, "--dataset", str(dataset), "--out", str(out), "--cache-dir", "none",
                 "--device", "cpu", "--num-workers", "0", "--batch-size", "256", "--no-progress"]) == 0
    scores = pd.read_parquet(out / "scores.parquet")
    return scores[scores["kind"] == schema.FLIP]


def sample_pairs() -> pd.DataFrame:
    return pd.concat(pd.read_parquet(p) for p in sorted((SAMPLE_DIR / schema.PAIRS).glob("*.parquet")))


def test_one_json_per_flip_type_keyed_by_row_id_with_every_image_as_a_file(sample_export):
    pairs = sample_pairs()
    flips = pairs[pairs["kind"] == schema.FLIP]
    manifest = json.loads((sample_export / MANIFEST).read_text(encoding="utf-8"))
    assert {t: e["flips"] for t, e in manifest["tasks"].items()} == flips["type"].value_counts().to_dict()
    images = pd.concat(pd.read_parquet(p) for p in sorted((SAMPLE_DIR / schema.IMAGES).glob("*.parquet")))
    stored = dict(zip(images["file_name"], images["image"]))
    for type_, rows in flips.groupby("type"):
        instances = json.loads((sample_export / f"{type_}.json").read_text(encoding="utf-8"))
        assert list(instances) == rows["row_id"].tolist()
        for (row_id, instance), row in zip(instances.items(), rows.itertuples()):
            assert instance == {"filename": instance["filename"], "caption": row.caption, "negative_caption": row.variant}
            assert (sample_export / IMAGE_FOLDER / instance["filename"]).read_bytes() == stored[instance["filename"]]["bytes"]
    assert manifest["images"] == len(list((sample_export / IMAGE_FOLDER).iterdir())) == flips["image_id"].nunique()


def test_clip_benchmark_reads_the_sample_export_with_lgip_pair_level_accuracy(sample_export, model, tmp_path):
    """CLIP_benchmark's own SugarCrepe dataset class, loader and metric on each exported type (its CLI takes only
    SugarCrepe's seven task names) give the share of flips `lgip score` scores below their caption."""
    selection = pytest.importorskip("clip_benchmark.metrics.image_caption_selection", reason=f"needs {PEER}")
    from clip_benchmark.datasets.builder import image_captions_collate_fn
    from clip_benchmark.datasets.sugar_crepe import SugarCrepe
    from clip_benchmark.models import load_clip
    from torch.utils.data import DataLoader

    scores = lgip_scores(model, SAMPLE_DIR, tmp_path / "lgip")
    clip, transform, tokenizer = load_clip("open_clip", model, pretrained=None, cache_dir=None, device="cpu")
    clip.eval()
    manifest = json.loads((sample_export / MANIFEST).read_text(encoding="utf-8"))
    assert len(manifest["tasks"]) >= 5
    for task, entry in manifest["tasks"].items():
        data = SugarCrepe(root=str(sample_export / IMAGE_FOLDER), ann_file=str(sample_export / entry["file"]),
                          transform=transform)
        loader = DataLoader(data, batch_size=64, collate_fn=image_captions_collate_fn)
        accuracy = selection.evaluate(clip, loader, tokenizer, "cpu", amp=False)["acc"]
        ours = scores[scores["type"] == entry["type"]]
        assert len(ours) == len(data) == entry["flips"]
        assert not (ours["s_original"] == ours["s_variant"]).any()  # no tie, where the two tools' rules differ
        assert round(accuracy * len(data)) == int((ours["s_original"] > ours["s_variant"]).sum()), task


def test_clip_benchmark_cli_reads_an_imported_subset_under_its_sugarcrepe_name(sample_coco_dir, model, tmp_path,
                                                                              monkeypatch):
    """A SugarCrepe subset built into LGIP exports under its own name, so ``clip_benchmark eval --dataset
    sugar_crepe/<task> --dataset_root OUT`` (its console script's ``main``, run here in this process) reads it as it
    reads SugarCrepe's files."""
    cli = pytest.importorskip("clip_benchmark.cli", reason=f"needs {PEER} with its dependencies")
    build, out = tmp_path / "build", tmp_path / "export"
    assert lgip(["build", "--from", "sugarcrepe", str(FIXTURES / "sugarcrepe"), "--images",
                 str(sample_coco_dir / "val2017_images"), "--families", "template", "--k-same", "1", "--out", str(build),
                 "--quiet", "--workers", "1"]) == 0
    assert lgip(["export", str(build), "--format", "sugarcrepe", "--out", str(out)]) == 0
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["tasks"]["replace_obj"] == {"file": "replace_obj.json", "type": "sugarcrepe_replace_obj", "flips": 2}
    scores = lgip_scores(model, build, tmp_path / "lgip")
    result = tmp_path / "clip_benchmark.json"
    monkeypatch.setattr(sys, "argv", [
        "clip_benchmark", "eval", "--dataset", "sugar_crepe/replace_obj", "--dataset_root", str(out),
        "--task", "image_caption_selection", "--model", model, "--pretrained", "local", "--no_amp",
        "--num_workers", "0", "--output", str(result), "--quiet"])
    cli.main()
    accuracy = json.loads(result.read_text(encoding="utf-8"))["metrics"]["acc"]
    ours = scores[scores["type"] == "sugarcrepe_replace_obj"]
    assert len(ours) == 2 and not (ours["s_original"] == ours["s_variant"]).any()
    assert round(accuracy * len(ours)) == int((ours["s_original"] > ours["s_variant"]).sum())


def test_a_text_only_build_a_missing_folder_and_an_existing_out_are_refused(tmp_path, sample_coco_dir, capsys):
    text_only = tmp_path / "text"
    assert lgip(["build", "--captions", str(sample_coco_dir / "annotations" / "captions_val2017.json"), "--no-images",
                 "--num-images", "2", "--out", str(text_only), "--quiet", "--workers", "1"]) == 0
    with pytest.raises(DataError, match="no images config .* build it again with --images"):
        export_sugarcrepe(text_only, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    (tmp_path / "taken").mkdir()
    with pytest.raises(DataError, match="already exists; pass --overwrite"):
        export_sugarcrepe(SAMPLE_DIR, tmp_path / "taken")
    with pytest.raises(DataError, match="not a folder"):
        export_sugarcrepe(tmp_path / "absent", tmp_path / "out")
    assert lgip(["export", str(tmp_path / "absent"), "--format", "sugarcrepe", "--out", str(tmp_path / "o")]) == 2
    assert "lgip export: error:" in capsys.readouterr().err
