"""``lgip build --from imagefolder DIR``: your own images and captions, a ``datasets`` ImageFolder, built into the
same Hub layout as a COCO build (it loads with ``load_dataset`` and scores), with a card that says how many
captions got flips per family; bad inputs named before any work, unusable rows counted as the build's skips."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import datasets
import numpy as np
import pandas as pd
import pytest
from PIL import Image

from lgip_dataset import schema
from lgip_dataset.sources import imagefolder
from lgip_dataset.sources.skips import SkipLog
from lgip_metric.cli import main as lgip
from helpers.paths import SHARED, needs_shared

NUM_IMAGES = 4


def build(folder: Path, out: Path, *options: str) -> int:
    return lgip(["build", "--from", "imagefolder", str(folder), "--out", str(out), "--quiet", "--workers", "1", *options])


@pytest.fixture(scope="module")
def coco_folder(tmp_path_factory) -> tuple[Path, dict[str, list[str]]]:
    """An ImageFolder of the first val2017 images of ``../shared/coco`` with their real captions: two images with a
    row per caption, two with their captions as a list in one row (the images in a subfolder)."""
    coco = SHARED / "coco"
    names = sorted(p.name for p in (coco / "val2017_images").glob("*.jpg"))[:NUM_IMAGES]
    data = json.loads((coco / "annotations" / "captions_val2017.json").read_text(encoding="utf-8"))
    ids = {image["file_name"]: image["id"] for image in data["images"] if image["file_name"] in names}
    captions = {name: [a["caption"] for a in data["annotations"] if a["image_id"] == ids[name]] for name in names}
    folder = tmp_path_factory.mktemp("own") / "photos"
    (folder / "more").mkdir(parents=True)
    rows = []
    for i, name in enumerate(names):
        file_name = name if i < 2 else f"more/{name}"
        shutil.copy(coco / "val2017_images" / name, folder / file_name)
        rows += [{"file_name": file_name, "text": [c]} for c in captions[name]] if i < 2 else \
            [{"file_name": file_name, "text": captions[name]}]
    (folder / "metadata.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return folder, {(name if i < 2 else f"more/{name}"): captions[name] for i, name in enumerate(names)}


@pytest.fixture(scope="module")
def coco_build(coco_folder, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("own-build") / "lgip-own"
    assert build(coco_folder[0], out) == 0
    return out


@needs_shared("val2017 images and their captions", "coco")
def test_the_build_loads_with_load_dataset_like_a_coco_build(coco_folder, coco_build):
    _, captions = coco_folder
    pairs = datasets.load_dataset(str(coco_build), "pairs", split="test")
    rows = datasets.load_dataset(str(coco_build), "captions", split="test")
    images = datasets.load_dataset(str(coco_build), "images", split="test")
    assert pairs.features == schema.PAIR_FEATURES and rows.features == schema.CAPTION_FEATURES
    assert sorted(images["file_name"]) == sorted(captions)
    by_id = {row["image_id"]: row["file_name"] for row in images}
    assert all(by_id[i] == name for i, name in zip(images["image_id"], images["file_name"]))
    assert {(by_id[r["image_id"]], r["caption"]) for r in rows} == \
        {(name, " ".join(c.split())) for name, texts in captions.items() for c in texts}
    assert images[0]["image"].size == (images[0]["width"], images[0]["height"])
    assert {"object", "color", "count"} & set(pairs["type"]) and {"paraphrase", "flip"} == set(pairs["kind"])
    info = json.loads((coco_build / "lgip_build.json").read_text(encoding="utf-8"))
    assert info["source"]["format"] == imagefolder.FORMAT and info["source"]["caption_column"] == "text"
    assert info["counts"]["captions"] == sum(map(len, captions.values())) and info["skips"] == {}


@needs_shared("val2017 images and their captions", "coco")
def test_the_card_says_how_many_captions_got_flips_per_family_and_that_the_rules_are_cocos(coco_build):
    card = (coco_build / "README.md").read_text(encoding="utf-8")
    flips = pd.read_parquet(next((coco_build / "pairs").glob("*.parquet"))).query("kind == 'flip'")
    flipped = flips.groupby("type")["caption_id"].nunique()
    assert "were made on COCO captions" in card
    for family, n in flipped.items():
        assert f"| {family} | {n:,} |" in card


@needs_shared("val2017 images and their captions", "coco")
def test_the_build_scores(coco_build, tmp_path):
    assert lgip(["score", "--model", "random:tiny-clip", "--dataset", str(coco_build), "--out", str(tmp_path / "run"),
                 "--cache-dir", "none", "--device", "cpu", "--num-workers", "0", "--no-progress"]) == 0
    scores = pd.read_parquet(tmp_path / "run" / "scores.parquet")
    pairs = datasets.load_dataset(str(coco_build), "pairs", split="test")
    assert scores["row_id"].tolist() == pairs["row_id"] and np.isfinite(scores[["s_original", "s_variant"]]).all().all()


def photo(path: Path, seed: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pixels = np.random.default_rng(seed).integers(0, 255, (48, 64, 3), dtype=np.uint8)
    Image.fromarray(pixels).save(path, "JPEG")


def test_unusable_rows_are_counted_skips_that_add_up_to_the_input(tmp_path, capsys):
    folder = tmp_path / "mine"
    photo(folder / "dog.jpg", 0)
    photo(folder / "cat.jpg", 1)
    (folder / "notes.jpg").write_text("not an image", encoding="utf-8")
    rows = [("dog.jpg", "A brown dog sleeps on a red sofa."), ("cat.jpg", "Two cats sit on a wooden table."),
            ("dog.jpg", "   "), ("gone.jpg", "A white boat on a lake."), ("notes.jpg", "A man rides a horse."),
            ("notes.jpg", "Three birds on a wire.")]
    (folder / "metadata.csv").write_text("file_name,caption\n" + "".join(f"{f},{c}\n" for f, c in rows), encoding="utf-8")
    assert build(folder, tmp_path / "out") == 0
    info = json.loads((tmp_path / "out" / "lgip_build.json").read_text(encoding="utf-8"))
    skips = {reason: entry["count"] for reason, entry in info["skips"].items()}
    captions_left_out = skips.pop("empty caption") + skips.pop("caption of a skipped image")
    assert info["counts"]["captions"] + captions_left_out == len(rows)
    assert skips.pop("image file missing") == 1 and sum(skips.values()) == 1  # notes.jpg: not an image
    examples = json.dumps(info["skips"])
    assert "dog.jpg (train row 2)" in examples and "mine/gone.jpg" in examples and "mine/notes.jpg" in examples
    assert info["source"]["caption_column"] == "caption"  # the default's second choice
    out = capsys.readouterr().out
    assert "skipped 1 × empty caption" in out and "skipped 1 × image file missing" in out


@pytest.mark.parametrize("files, options, message", [
    ({}, (), "no metadata file .*write one beside the images with a `file_name` column"),
    ({"metadata.jsonl": '{"file_name": "a.jpg", "label": "dog"}\n'}, (),
     r"no caption column \(text or caption\) in every split; the columns are label: name the one holding the "
     "captions with --caption-column"),
    ({"metadata.jsonl": '{"file_name": "a.jpg", "text": "a dog"}\n'}, ("--caption-column", "words"),
     "no --caption-column 'words' in every split; the columns are text"),
    ({"metadata.jsonl": '{"file_name": "a.jpg", "text": "a dog"}\n{"file_name": "a.jpg", "text": ["a cat"]}\n'}, (),
     r"datasets cannot read it as an ImageFolder .*metadata.jsonl: one row per image"),
    ({"metadata.jsonl": '{"file_name": "a.jpg", "text": "a dog"}\n'}, ("--images", "."),
     "reads the images from .* itself; leave out --images"),
])
def test_bad_inputs_are_named_with_what_to_do(tmp_path, capsys, files, options, message):
    folder = tmp_path / "mine"
    photo(folder / "a.jpg", 0)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    assert build(folder, tmp_path / "out", *options) == 2
    err = capsys.readouterr().err
    assert err.startswith("lgip build: error: ") and "Traceback" not in err
    assert re.search(message, err), err
    assert not (tmp_path / "out").exists()


def test_options_of_other_sources_are_refused(tmp_path, capsys):
    captions = tmp_path / "captions.json"
    captions.write_text("[]", encoding="utf-8")
    assert lgip(["build", "--captions", str(captions), "--out", str(tmp_path / "o")]) == 2
    assert "one of --images FOLDER or --no-images is needed" in capsys.readouterr().err
    assert lgip(["build", "--captions", str(captions), "--no-images", "--caption-column", "text",
                 "--out", str(tmp_path / "o")]) == 2
    assert "--caption-column names a column of your own captions" in capsys.readouterr().err


def test_image_ids_depend_on_the_file_name_only_and_caption_ids_on_the_image(tmp_path):
    folder = tmp_path / "mine"
    photo(tmp_path / "elsewhere" / "b.jpg", 0)
    (folder / "x").mkdir(parents=True)
    (folder / "x" / "a.jpg").symlink_to(tmp_path / "elsewhere" / "b.jpg")  # a link keeps its name in the folder
    (folder / "metadata.jsonl").write_text('{"file_name": "x/a.jpg", "text": ["one dog", "two dogs"]}\n',
                                           encoding="utf-8")
    entries, column = imagefolder.read_imagefolder(folder, None, SkipLog())
    (entry,) = entries
    assert column == "text" and entry.image_id == imagefolder.image_id(b"x/a.jpg") < 2**63
    assert [c.caption_id for c in entry.captions] == [f"u{entry.image_id}_0", f"u{entry.image_id}_1"]


def own_dataset(tmp_path: Path) -> datasets.Dataset:
    """Three rows of two pictures: one picture twice (a caption a row), one with a list of captions in a string column
    that the default takes second (``caption``)."""
    for seed, name in enumerate(("dog.jpg", "cat.jpg")):
        photo(tmp_path / "pictures" / name, seed)
    return datasets.Dataset.from_dict(
        {"picture": [{"bytes": (tmp_path / "pictures" / n).read_bytes(), "path": n} for n in ("dog.jpg", "cat.jpg", "dog.jpg")],
         "caption": [["A brown dog sleeps on a red sofa."], ["Two cats sit on a wooden table.", "A cat on a table."],
                     ["A dog on a sofa."]]},
        features=datasets.Features({"picture": datasets.Image(), "caption": datasets.List(datasets.Value("string"))}))


@pytest.mark.parametrize("saved_as", ["save_to_disk", "parquet"])
def test_a_local_datasets_dataset_builds_with_each_picture_once(tmp_path, saved_as):
    data = own_dataset(tmp_path)
    folder = tmp_path / "saved"
    if saved_as == "save_to_disk":
        data.save_to_disk(str(folder))
    else:
        folder.mkdir()
        data.to_parquet(str(folder / "train.parquet"))
    shutil.rmtree(tmp_path / "pictures")  # the dataset holds its images itself
    assert lgip(["build", "--from", "dataset", str(folder), "--out", str(tmp_path / "out"), "--quiet",
                 "--workers", "1"]) == 0
    images = datasets.load_dataset(str(tmp_path / "out"), "images", split="test")
    rows = datasets.load_dataset(str(tmp_path / "out"), "captions", split="test")
    assert len(images) == 2 and len(rows) == 4 and len(datasets.load_dataset(str(tmp_path / "out"), "pairs", split="test"))
    sizes = {row["image_id"]: row["image"].size for row in images}
    assert set(sizes.values()) == {(64, 48)} and set(rows["image_id"]) == set(sizes)
    info = json.loads((tmp_path / "out" / "lgip_build.json").read_text(encoding="utf-8"))
    assert info["source"] | {"captions_sha256": None} == {"format": "dataset", "captions": "saved",
                                                          "caption_column": "caption", "captions_sha256": None}


def test_a_dataset_without_an_image_column_is_refused(tmp_path, capsys):
    datasets.Dataset.from_dict({"text": ["a dog"]}).save_to_disk(str(tmp_path / "saved"))
    assert lgip(["build", "--from", "dataset", str(tmp_path / "saved"), "--out", str(tmp_path / "out")]) == 2
    assert "one image column (a datasets.Image feature) is needed, found none" in capsys.readouterr().err
