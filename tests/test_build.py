"""Materialisation: Hub layout, load_dataset on every config, determinism, atomicity, bad input."""
from __future__ import annotations

import hashlib
import io
import json
import shutil

import datasets
import pyarrow.parquet as pq
import pytest
import yaml
from PIL import Image

from lgip_dataset import schema
from lgip_dataset.files import hub_io
from lgip_dataset.writing import materialize
from lgip_metric.cli import main
from lgip_dataset.errors import DataError
from lgip_dataset.files.hub_io import BUILD_INFO, load_config
from lgip_dataset.perturb.registry import FAMILIES
from lgip_dataset.writing.materialize import BuildConfig, build
from helpers.reliability import CAPTIONS
from helpers.coco import write_sample_coco
from helpers.reliability import jpeg as _jpeg

def _tiny_coco(tmp_path, n_images=4, extra_annotations=(), image_bytes=None):
    """A small official-format captions file with real JPEGs written next to it."""
    folder = tmp_path / "images"
    folder.mkdir()
    images, annotations = [], []
    for i in range(1, n_images + 1):
        name = f"{i:012d}.jpg"
        (folder / name).write_bytes((image_bytes or {}).get(i, _jpeg(("red", "green", "blue", "gray")[i % 4])))
        images.append({"id": i, "file_name": name, "license": 4, "width": 32, "height": 24})
        for j, text in enumerate(CAPTIONS):
            annotations.append({"id": 100 * i + j, "image_id": i, "caption": text})
    annotations.extend(extra_annotations)
    path = tmp_path / "captions.json"
    path.write_text(json.dumps({"images": images, "annotations": annotations, "licenses": [
        {"id": 4, "name": "Attribution License", "url": "http://creativecommons.org/licenses/by/2.0/"}]}))
    return path, folder


def _hashes(folder):
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_build_layout_card_and_load_dataset(tmp_path):
    captions, images = _tiny_coco(tmp_path)
    out = tmp_path / "lgip"
    summary = build(BuildConfig(captions=captions, images=images, out=out, seed=1), progress=False)
    assert sorted(p.name for p in out.iterdir()) == sorted(["README.md", BUILD_INFO, "captions", "images", "pairs"])
    assert not list(tmp_path.glob(".lgip*")), "staging folder must be gone after a finished build"

    header = yaml.safe_load((out / "README.md").read_text().split("---")[1])
    assert {c["config_name"] for c in header["configs"]} == set(schema.CONFIGS)
    assert [c for c in header["configs"] if c.get("default")][0]["config_name"] == "pairs"
    assert {i["config_name"] for i in header["dataset_info"]} == set(schema.CONFIGS)

    loaded = {c: datasets.load_dataset(str(out), c, split="test") for c in schema.CONFIGS}
    assert loaded["images"].num_rows == 4
    assert isinstance(loaded["images"][0]["image"], Image.Image)
    assert loaded["captions"].num_rows == 20
    pairs = loaded["pairs"]
    assert pairs.num_rows == summary.counts["paraphrases"]["total"] + summary.counts["flips"]["total"]
    assert set(pairs["image_id"]) <= set(loaded["images"]["image_id"])
    assert len(set(pairs["row_id"])) == pairs.num_rows
    for row in pairs:
        if row["kind"] == "flip":
            assert row["caption"][row["span_start"]:row["span_end"]] == row["original"]
            assert row["type"] in schema.CORE_FLIP_TYPES
        assert row["row_id"].startswith(row["caption_id"] + "-")
    nested = sum(len(r["paraphrases"]) + len(r["flips"]) for r in loaded["captions"])
    assert nested == pairs.num_rows
    for config in (schema.PAIRS, schema.CAPTIONS):  # ``type`` is a variant's only label: no column, field or feature
        stored = pq.read_schema(next((out / config).glob("*.parquet"))).to_string(show_schema_metadata=True)
        assert not [name for name in schema.RETIRED_FIELDS if name in stored]
    info = json.loads((out / BUILD_INFO).read_text())
    assert info["seed"] == 1 and info["lexicon_version"] and info["counts"] == summary.counts
    card = (out / "README.md").read_text()
    assert f"lexicon version: {info['lexicon_version']}" in card and "seed: 1" in card
    assert "Attribution License" in card and "| object | core | flip |" in card
    assert load_config(out, "pairs").num_rows == pairs.num_rows


def test_build_with_extra_families_and_groups(tmp_path):
    extra = [{"id": 901, "image_id": 1, "caption": "A red bus towing a car on the street."},
             {"id": 902, "image_id": 2, "caption": "A blue bus towing a car on the street."},
             {"id": 903, "image_id": 3, "caption": "A cat to the left of a dog."},
             {"id": 904, "image_id": 4, "caption": "A cat to the right of a dog."}]
    captions, _ = _tiny_coco(tmp_path, extra_annotations=extra)
    core = build(BuildConfig(captions=captions, out=tmp_path / "core", captions_per_image=6), progress=False)
    out = tmp_path / "all"
    summary = build(BuildConfig(captions=captions, out=out, captions_per_image=6, families="all", groups=True),
                    progress=False)
    groups = datasets.load_dataset(str(out), "groups", split="test")
    assert sorted(zip(groups["type"], groups["image_a"], groups["image_b"])) == [("color", 1, 2), ("spatial", 3, 4)]
    assert groups.features == schema.GROUP_FEATURES
    pairs = datasets.load_dataset(str(out), "pairs", split="test")
    core_pairs = datasets.load_dataset(str(core.out), "pairs", split="test")
    assert {r["variant_id"]: r for r in pairs if r["type"] in ("template", "marker", "object", "color", "count")} \
        == {r["variant_id"]: r for r in core_pairs}  # the core selection is unchanged by extra families
    assert {"negation", "binding", "spatial", "scramble_all", "syntactic"} <= set(pairs["type"])
    assert not {"relation", "temporal"} & set(pairs["type"])  # built only when named
    info = json.loads((out / BUILD_INFO).read_text())
    assert info["families"]["negation"] == {"kind": "flip", "version": "1.2.0"}
    assert info["counts"]["groups"] == {"total": 2, "color": 1, "spatial": 1} == summary.counts["groups"]
    assert info["counts"]["flips"]["scramble_all"] == pairs["type"].count("scramble_all")
    card = (out / "README.md").read_text()
    header = yaml.safe_load(card.split("---")[1])
    assert "groups" in {c["config_name"] for c in header["configs"]} and "groups: 2 in all, 1 color, 1 spatial" in card
    assert "| negation | extended | flip | 1.2.0 |" in card
    assert f"| object | core | flip | {FAMILIES['object'].version} |" in card  # the card reads the registry's version
    # hard flips: their figures, keyed by variant_id, in the optional plausibility config
    figures = hub_io.load_config(out, schema.PLAUSIBILITY)
    hard = {r["variant_id"]: r for r in pairs if r["type"].startswith("hard_")}
    assert hard and sorted(figures["variant_id"]) == sorted(hard)
    assert all(f["type"] == hard[f["variant_id"]]["type"] and f["image_id"] == hard[f["variant_id"]]["image_id"]
               and f["candidates"] >= 1 for f in figures)
    assert schema.PLAUSIBILITY in info["configs"] and "plausibility" in {c["config_name"] for c in header["configs"]}
    assert info["hard_flips"]["folds"] == 2 and "`plausibility`" in card
    assert schema.PLAUSIBILITY not in json.loads((core.out / BUILD_INFO).read_text())["configs"]
    assert main(["build", "--captions", str(captions), "--no-images", "--out", str(tmp_path / "x"),
                 "--families", "core,nope", "--quiet"]) == 2


def test_groups_asked_for_but_none_found(tmp_path):
    """No 2x2 group among the captions: no empty `groups` config (it would not load), a count of 0."""
    captions, images = _tiny_coco(tmp_path, n_images=1)
    out = build(BuildConfig(captions=captions, images=images, out=tmp_path / "g", groups=True), progress=False).out
    info = json.loads((out / BUILD_INFO).read_text())
    assert info["counts"]["groups"] == {"total": 0} and "groups" not in info["configs"]
    assert not (out / "groups").exists()
    header = yaml.safe_load((out / "README.md").read_text().split("---")[1])
    for config in header["configs"]:
        assert datasets.load_dataset(str(out), config["config_name"], split="test").num_rows > 0


def test_same_seed_gives_byte_identical_folders(tmp_path):
    captions, images = _tiny_coco(tmp_path)
    a = build(BuildConfig(captions=captions, images=images, out=tmp_path / "a", seed=7), progress=False).out
    b = build(BuildConfig(captions=captions, images=images, out=tmp_path / "b", seed=7), progress=False).out
    assert _hashes(a) == _hashes(b)


def test_text_only_build(tmp_path):
    captions, _ = _tiny_coco(tmp_path)
    out = build(BuildConfig(captions=captions, out=tmp_path / "t"), progress=False).out
    assert not (out / "images").exists()
    assert "text-only build" in (out / "README.md").read_text()
    assert datasets.load_dataset(str(out), "pairs", split="test").num_rows > 0
    with pytest.raises(DataError, match="unknown config 'images'|no parquet files for config 'images'"):
        load_config(out, "images")


def test_bad_images_are_counted_skips(tmp_path):
    bomb = io.BytesIO()
    Image.new("1", (10_000, 10_000)).save(bomb, format="PNG")
    truncated = _jpeg(size=(64, 64))[:300]
    captions, images = _tiny_coco(tmp_path, n_images=4, image_bytes={2: truncated, 3: bomb.getvalue()})
    (images / f"{4:012d}.jpg").unlink()
    summary = build(BuildConfig(captions=captions, images=images, out=tmp_path / "o"), progress=False)
    reasons = summary.skips.as_dict()
    assert summary.counts["images"] == 1
    assert reasons["image file missing"]["count"] == 1
    assert "000000000004.jpg" in reasons["image file missing"]["examples"][0]
    assert any(r.startswith("corrupt or unreadable image") for r in reasons)
    assert any(r.startswith("image too large") or "decompression bomb" in r for r in reasons)
    assert reasons["caption of a skipped image"]["count"] == 15
    card = (tmp_path / "o" / "README.md").read_text()
    assert "image file missing" in card


def test_interrupted_build_leaves_nothing_complete_and_resumes(tmp_path, monkeypatch):
    captions, images = _tiny_coco(tmp_path, n_images=6)
    monkeypatch.setattr(materialize, "IMAGES_PER_SHARD", 2)
    real = materialize._write_image_shard
    calls = []

    def interrupted(path, *args):
        calls.append(path.name)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(path, *args)

    out = tmp_path / "lgip"
    config = BuildConfig(captions=captions, images=images, out=out)
    monkeypatch.setattr(materialize, "_write_image_shard", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build(config, progress=False)
    assert not out.exists()
    staging = tmp_path / ".lgip.partial"
    assert [p.name for p in (staging / "images").glob("*.parquet")] == ["test-00000-of-00003.parquet"]

    calls.clear()
    monkeypatch.setattr(materialize, "_write_image_shard", lambda path, *a: (calls.append(path.name), real(path, *a))[1])
    build(config, progress=False)
    assert calls == ["test-00001-of-00003.parquet", "test-00002-of-00003.parquet"]
    assert datasets.load_dataset(str(out), "images", split="test").num_rows == 6
    fresh = build(BuildConfig(captions=captions, images=images, out=tmp_path / "fresh"), progress=False).out
    assert _hashes(out) == _hashes(fresh)


def test_existing_output_needs_overwrite(tmp_path):
    captions, images = _tiny_coco(tmp_path, n_images=1)
    config = BuildConfig(captions=captions, images=images, out=tmp_path / "o")
    build(config, progress=False)
    with pytest.raises(DataError, match="already exists; pass --overwrite"):
        build(config, progress=False)
    build(config, overwrite=True, progress=False)
    assert not (tmp_path / ".o.old").exists()


def test_cli_build_prints_counts_and_errors(tmp_path, capsys):
    captions, images = _tiny_coco(tmp_path, n_images=2)
    out = tmp_path / "cli"
    code = main(["build", "--captions", str(captions), "--images", str(images), "--out", str(out),
                 "--num-images", "1", "--seed", "3", "--quiet"])
    printed = capsys.readouterr().out
    assert code == 0 and '"captions": 5' in printed and '"images": 1' in printed
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert main(["build", "--captions", str(broken), "--no-images", "--out", str(tmp_path / "x")]) == 2
    assert "broken.json: malformed JSON" in capsys.readouterr().err
    assert main(["build", "--captions", str(captions), "--images", str(tmp_path / "nowhere"),
                 "--out", str(tmp_path / "y")]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_val2017_build_loads_every_config(tmp_path):
    coco = write_sample_coco(tmp_path / "coco", image_files=40)  # 10 captioned images without their file
    captions = coco / "annotations" / "captions_val2017.json"
    out = tmp_path / "val2017"
    summary = build(BuildConfig(captions=captions, images=coco / "val2017_images", out=out, seed=0), progress=False)
    present = len(list((coco / "val2017_images").glob("*.jpg")))
    assert summary.counts["images"] == present
    assert summary.skips.counts["image file missing"] == len(json.loads(captions.read_text("utf-8"))["images"]) - present
    for config in schema.CONFIGS:
        table = datasets.load_dataset(str(out), config, split="test")
        assert table.num_rows > 0
    assert isinstance(table.features, datasets.Features)
    image = datasets.load_dataset(str(out), "images", split="test")[0]["image"]
    assert isinstance(image, Image.Image) and image.size[0] > 0
    shutil.rmtree(out)


def test_load_config_sees_a_shard_rewritten_in_place(tmp_path):
    """``datasets`` caches a local folder by its name: loading it as a folder returns stale rows
    after a shard is rewritten in place. ``load_config`` must return the new rows."""
    captions, images = _tiny_coco(tmp_path, n_images=2)
    out = build(BuildConfig(captions=captions, images=images, out=tmp_path / "lgip"), progress=False).out
    assert set(load_config(out, "pairs")["image_id"]) == {1, 2}
    shard = next((out / "pairs").glob("*.parquet"))
    table = datasets.Dataset.from_parquet(str(shard), features=schema.FEATURES["pairs"], keep_in_memory=True)
    table.map(lambda row: {"image_id": 7}, keep_in_memory=True).to_parquet(str(shard))
    assert set(load_config(out, "pairs")["image_id"]) == {7}


def test_card_metadata_follows_the_hub_spec(tmp_path):
    """Sizes as datasets computes them, size category from rows, licenses of annotations and images,
    source datasets, creators, tasks, and the Bias, Risks, and Limitations section."""
    captions, images = _tiny_coco(tmp_path, n_images=20)
    out = build(BuildConfig(captions=captions, images=images, out=tmp_path / "lgip"), progress=False).out
    card = (out / "README.md").read_text(encoding="utf-8")
    header = yaml.safe_load(card.split("---")[1])
    for info in header["dataset_info"]:
        shards = sorted(str(p) for p in (out / info["config_name"]).glob("*.parquet"))
        builder = datasets.load_dataset_builder("parquet", data_files={"test": shards},
                                                cache_dir=str(tmp_path / "cache" / info["config_name"]))
        builder.download_and_prepare()  # datasets' own Arrow size of these rows
        [split] = info["splits"]
        assert split["num_bytes"] == info["dataset_size"] == builder.info.splits["test"].num_bytes
        assert split["num_examples"] == builder.info.splits["test"].num_examples
        assert info["download_size"] == sum((out / info["config_name"]).joinpath(p).stat().st_size
                                            for p in [s.split("/")[-1] for s in shards])
    pairs = next(i for i in header["dataset_info"] if i["config_name"] == "pairs")["splits"][0]["num_examples"]
    assert pairs > 1000 and header["size_categories"] == ["1K<n<10K"]  # from the rows, not the 20 images
    assert (header["license"], header["license_name"], header["license_link"]) == (
        "other", "cc-by-4.0-annotations-flickr-image-licenses", "https://cocodataset.org/#termsofuse")
    assert "- Attribution License (cc-by-2.0): 20 image(s)" in card
    assert header["source_datasets"] == ["extended|coco"]
    assert header["annotations_creators"] == ["crowdsourced", "machine-generated"]
    assert "text-to-image" not in header["task_categories"] and "zero-shot-image-classification" in header["task_categories"]
    assert "## Bias, Risks, and Limitations" in card
    text_only = build(BuildConfig(captions=captions, out=tmp_path / "t"), progress=False).out
    assert yaml.safe_load((text_only / "README.md").read_text(encoding="utf-8").split("---")[1])["license"] == "cc-by-4.0"
