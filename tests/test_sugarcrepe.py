"""SugarCrepe through LGIP's engine: ``lgip build --from sugarcrepe`` on a hand-written fixture in its layout
with the embedded sample's images, and on the real files in ``../shared/sugarcrepe`` (MIT, never copied into
the repository) with the 159 val2017 images of ``../shared/coco``, then ``lgip evaluate`` (per-row scores,
cache, blind baselines, paired comparison) and ``lgip report`` with LGIP's own types and SugarCrepe's side by side."""
from __future__ import annotations

import json
from pathlib import Path

import datasets
import numpy as np
import pandas as pd
import pytest
import torch
import yaml

from lgip_dataset.sources import sugarcrepe
from lgip_metric.cli import main as lgip
from lgip_dataset.errors import DataError
from lgip_dataset.files.images import decode_image
from lgip_dataset.perturb.registry import IMPORTED_TYPES, SUGARCREPE_SUBSETS
from lgip_dataset.sources.skips import SkipLog
from lgip_metric import stats
from lgip_metric.models import load_model
from helpers.models import other_tiny_model
from helpers.paths import FIXTURES, SHARED, needs_shared

SUGARCREPE_FIXTURE = FIXTURES / "sugarcrepe"  # hand-written, SugarCrepe's layout, the sample's images
REAL_FILES = needs_shared("the real SugarCrepe files (7,511 instances, 211 with one of the 159 val2017 images) and those "
                          "images", "sugarcrepe", "coco")


@pytest.fixture(scope="module")
def sugarcrepe_dir() -> Path:
    return SHARED / "sugarcrepe"


def instances(folder: Path, images: Path) -> list[dict]:
    """Every SugarCrepe instance whose image is present, read straight from the JSON files."""
    return [{**item, "subset": path.stem} for path in sorted(folder.glob("*.json"))
            for item in json.loads(path.read_text(encoding="utf-8")).values() if (images / item["filename"]).is_file()]


@pytest.fixture(scope="module")
def run(tmp_path_factory, sugarcrepe_dir):
    """The real files with the 159 val2017 images, through ``build_and_evaluate``."""
    images = SHARED / "coco" / "val2017_images"
    return build_and_evaluate(tmp_path_factory.mktemp("sugarcrepe"), sugarcrepe_dir, images)


@pytest.fixture(scope="module")
def fixture_run(tmp_path_factory, sample_coco_dir):
    """The hand-written fixture with the embedded sample's images, through ``build_and_evaluate``."""
    return build_and_evaluate(tmp_path_factory.mktemp("sugarcrepe-fixture"), SUGARCREPE_FIXTURE,
                              sample_coco_dir / "val2017_images")


def build_and_evaluate(root: Path, sugarcrepe_dir: Path, images: Path) -> tuple[Path, Path, Path, dict]:
    """Build from ``sugarcrepe_dir``, score two tiny random-weight models (pair-level) and rescore the first."""
    assert lgip(["build", "--from", "sugarcrepe", str(sugarcrepe_dir), "--images", str(images),
                 "--out", str(root / "data"), "--k-same", "2", "--k-diff", "2", "--quiet"]) == 0
    common = ["--dataset", str(root / "data"), "--cache-dir", str(root / "cache"), "--device", "cpu",
              "--num-workers", "0", "--no-progress", "--bootstrap", "50", "--pair-level"]
    assert lgip(["evaluate", "--model", "random:tiny-clip", "--out", str(root / "a"), *common]) == 0
    assert lgip(["evaluate", "--model", other_tiny_model(root / "model-b"), "--out", str(root / "b"), *common]) == 0
    first = json.loads((root / "a" / "results.json").read_text(encoding="utf-8"))
    assert lgip(["evaluate", "--model", "random:tiny-clip", "--out", str(root / "a"), *common]) == 0
    assert lgip(["report", str(root / "a"), str(root / "b"), "--out", str(root / "report")]) == 0
    return root, images, sugarcrepe_dir, first


def test_types_are_registered_and_declared_to_the_statistics():
    assert list(IMPORTED_TYPES) == [f"sugarcrepe_{s}" for s in SUGARCREPE_SUBSETS]
    assert all(stats.DECLARED_TYPES[t] == stats.FLIP == kind for t, kind in IMPORTED_TYPES.items())


def test_reader_merges_captions_stores_images_once_and_counts_skips(tmp_path, sample_coco_dir):
    images = sample_coco_dir / "val2017_images"
    a, b = sorted(p.name for p in images.glob("*.jpg"))[:2]
    folder = tmp_path / "sc"
    folder.mkdir()
    (folder / "replace_obj.json").write_text(json.dumps({
        "0": {"filename": a, "caption": "A dog on a couch. ", "negative_caption": "A cat on a couch."},
        "1": {"filename": "000000000001.jpg", "caption": "A boat.", "negative_caption": "A car."},
        "2": {"filename": b, "caption": "A red bus.", "negative_caption": "A red bus."},
    }), encoding="utf-8")
    (folder / "swap_att.json").write_text(json.dumps({
        "7": {"filename": a, "caption": "A dog on a  couch.", "negative_caption": "A couch on a dog."},
        "8": {"filename": b, "caption": "", "negative_caption": "A bus."},
    }), encoding="utf-8")
    skips = SkipLog()
    entries, flips = sugarcrepe.read_sugarcrepe(folder, images, skips)
    assert [e.file_name for e in entries] == [a]  # b lost both its instances; one entry per image
    assert [(c.caption_id, c.text) for c in entries[0].captions] == [("sc-replace_obj-0", "A dog on a couch.")]
    assert [(v.text, v.type, v.kind) for v in flips["sc-replace_obj-0"]] == [
        ("A cat on a couch.", "sugarcrepe_replace_obj", "flip"), ("A couch on a dog.", "sugarcrepe_swap_att", "flip")]
    assert skips.counts == {"SugarCrepe instance whose image file is not in --images": 1,
                            "SugarCrepe negative_caption equal to its caption": 1,
                            "SugarCrepe instance with an empty or missing caption": 1}
    assert skips.total + sum(len(v) for v in flips.values()) == 5  # every instance accounted for
    (folder / "bad.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad.json: expected an object"):
        sugarcrepe.read_sugarcrepe(folder, images, SkipLog())


def test_instances_of_a_corrupt_image_are_counted(tmp_path, sample_coco_dir):
    """An image present but unreadable: its instances are skipped and counted, so the counts add up."""
    files = sorted((sample_coco_dir / "val2017_images").glob("*.jpg"))[:2]
    images = tmp_path / "images"
    images.mkdir()
    (images / files[0].name).write_bytes(files[0].read_bytes())
    (images / files[1].name).write_bytes(files[1].read_bytes()[:500])  # truncated JPEG
    folder = tmp_path / "sc"
    folder.mkdir()
    (folder / "replace_obj.json").write_text(json.dumps({
        str(i): {"filename": f.name, "caption": f"A dog number {i}.", "negative_caption": f"A cat number {i}."}
        for i, f in enumerate([files[0], files[1], files[1]])}), encoding="utf-8")
    assert lgip(["build", "--from", "sugarcrepe", str(folder), "--images", str(images), "--out", str(tmp_path / "o"),
                 "--quiet"]) == 0
    info = json.loads((tmp_path / "o" / "lgip_build.json").read_text(encoding="utf-8"))
    assert info["counts"]["flips"]["sugarcrepe_replace_obj"] == 1
    assert info["skips"]["imported instance of a skipped image"]["count"] == 2


def test_build_needs_images_and_a_known_format(tmp_path, capsys):
    sugarcrepe_dir = SUGARCREPE_FIXTURE
    assert lgip(["build", "--from", "sugarcrepe", str(sugarcrepe_dir), "--no-images", "--out", str(tmp_path / "x")]) == 2
    assert "--from sugarcrepe needs --images" in capsys.readouterr().err
    assert lgip(["build", "--from", "winoground", str(sugarcrepe_dir), "--no-images", "--out", str(tmp_path / "x")]) == 2
    assert "--from winoground: unknown probe-set format; known: sugarcrepe" in capsys.readouterr().err


@REAL_FILES
def test_build_imports_every_instance_with_its_image_and_counts_the_rest(run, sugarcrepe_dir):
    root, images, _, _ = run
    info = json.loads((root / "data" / "lgip_build.json").read_text(encoding="utf-8"))
    present = instances(sugarcrepe_dir, images)
    total = sum(len(json.loads(p.read_text(encoding="utf-8"))) for p in sugarcrepe_dir.glob("*.json"))
    assert len(present) == 211 and total == 7511
    per_subset = pd.Series([i["subset"] for i in present]).value_counts().to_dict()
    assert {t: n for t, n in info["counts"]["flips"].items() if t.startswith("sugarcrepe_")} == {
        f"sugarcrepe_{s}": n for s, n in per_subset.items()}
    assert info["skips"] == {"SugarCrepe instance whose image file is not in --images": {
        "count": total - 211, "examples": info["skips"]["SugarCrepe instance whose image file is not in --images"]["examples"]}}
    assert info["source"]["format"] == "sugarcrepe" and info["imported_types"] == {
        f"sugarcrepe_{s}": "flip" for s in sorted(per_subset)} | info["imported_types"]
    image_rows = datasets.load_dataset(str(root / "data"), "images", split="test")
    assert sorted(image_rows["file_name"]) == sorted({i["filename"] for i in present})  # each image once
    pairs = datasets.load_dataset(str(root / "data"), "pairs", split="test").to_pandas()
    assert {"template", "marker", "object"} <= set(pairs["type"])  # LGIP's own variants of the same captions
    assert "family" not in pairs  # the imported rows' source is their type's group (the registry's "imported")
    card = (root / "data" / "README.md").read_text(encoding="utf-8")
    assert yaml.safe_load(card.split("---")[1])["source_datasets"] == ["extended|coco", "extended|other-sugarcrepe"]
    assert "## SugarCrepe flips" in card and "| sugarcrepe_replace_obj | imported | flip | source file | 44 |" in card


def independent_accuracy(folder: Path, images: Path) -> dict[str, float]:
    """SugarCrepe's accuracy per subset with the same model, straight from the JSON and the JPEGs:
    the share of instances whose caption scores above its negative (the image fixed)."""
    encoder = load_model("random:tiny-clip", device="cpu")
    hits: dict[str, list[bool]] = {}
    for item in instances(folder, images):
        image = encoder.encode_images({k: v.unsqueeze(0) for k, v in encoder.image_transform(
            decode_image((images / item["filename"]).read_bytes())).items()})
        texts = encoder.encode_texts(encoder.text_batch(encoder.tokenize(
            [encoder.normalize_text(" ".join(item[k].split())) for k in ("caption", "negative_caption")])))
        caption, negative = (image @ texts.T).double()[0].tolist()
        hits.setdefault(item["subset"], []).append(caption > negative)
    return {f"sugarcrepe_{s}": float(np.mean(h)) for s, h in hits.items()}


@pytest.mark.parametrize("files", ["fixture_run", pytest.param("run", marks=REAL_FILES)])
def test_sugarcrepe_accuracy_is_the_pair_level_pr_of_its_type(files, request):
    root, images, sugarcrepe_dir, _ = request.getfixturevalue(files)
    with torch.no_grad():
        expected = independent_accuracy(sugarcrepe_dir, images)
    got = json.loads((root / "a" / "results.json").read_text(encoding="utf-8"))
    assert got["averaging"] == "pair_level"
    assert {t: got["metrics"][f"PR/{t}"] for t in expected} == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("files", ["fixture_run", pytest.param("run", marks=REAL_FILES)])
def test_evaluate_caches_compares_and_reports_both_families_side_by_side(files, request):
    root, images, sugarcrepe_dir, first = request.getfixturevalue(files)
    rerun = json.loads((root / "a" / "results.json").read_text(encoding="utf-8"))
    assert rerun["provenance"]["counts"]["encoded_images"] == rerun["provenance"]["counts"]["encoded_texts"] == 0
    assert rerun["statistics"] == first["statistics"]
    scores = pd.read_parquet(root / "a" / "scores.parquet")
    assert scores["type"].str.startswith("sugarcrepe_").sum() == len(instances(sugarcrepe_dir, images)) and scores[["s_original", "s_variant"]].notna().all().all()
    blind = rerun["blind"]["lm"]["blind"]["per_type"]
    assert set(IMPORTED_TYPES) <= set(blind) and {"object", "color", "count"} <= set(blind)
    report = root / "report"
    table2 = (report / "table2.md").read_text(encoding="utf-8")
    assert "object PR" in table2 and "sugarcrepe_replace_obj PR" in table2 and "sugarcrepe_add_att PR" in table2
    comparison = (report / "comparison.md").read_text(encoding="utf-8")
    assert "sugarcrepe_swap_obj" in comparison and "object" in comparison
    blind_md = (report / "blind.md").read_text(encoding="utf-8")
    assert "| sugarcrepe_replace_rel |" in blind_md and "| count |" in blind_md
