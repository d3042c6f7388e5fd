"""The bad-input matrix: hostile or careless input to build, score, evaluate, report and the metric.

Every case ends in exactly one of three outcomes, each checked the same way:

- ``error``: a non-zero exit (or a ``ValueError`` from the metric), no traceback in the output, and a
  message that names the file, row or argument at fault;
- ``skip``: exit 0, the left-out input counted and reported by reason, and the counts adding up to
  the input (kept + skipped = given);
- ``accept``: exit 0 and the right output.

The CLI runs in-process (``lgip_metric.cli.main``) with the tiny random-weight model; only the
fixture's one ``lgip evaluate`` encodes anything.
"""
from __future__ import annotations

import io
import json
import os
import shutil
from unittest import mock
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lgip_dataset import schema
from lgip_dataset.files.locks import lock_folder
from helpers.paths import REPO
from helpers.reliability import (coco_annotations, flip_pairs, folder_hashes, jpeg, png16_gray, run_cli, run_lgip,
                                 write_coco, write_pairs)

MODEL = "random:tiny-clip"
CAPTION_REASONS = {"duplicate annotation id", "caption without image entry", "empty caption", "caption not a string",
                   "caption not valid Unicode (an unpaired surrogate, which no UTF-8 file can hold)",
                   "caption of a skipped image", "caption beyond --captions-per-image (cap)"}


# --------------------------------------------------------------------------------------------
# The three outcomes


def error(outcome, *names: str) -> None:
    """Non-zero exit, no traceback, and every one of ``names`` (file/row/argument) in the message."""
    assert outcome.code != 0, outcome.text
    assert "Traceback" not in outcome.text, outcome.text
    for name in names:
        assert name in outcome.err, f"{name!r} not in: {outcome.err}"


def build_skip(outcome, out: Path, reason: str, *, annotations: int, images: int) -> dict:
    """Exit 0, ``reason`` counted in lgip_build.json and printed; captions and images add up to the input."""
    assert outcome.code == 0, outcome.text
    info = json.loads((out / "lgip_build.json").read_text(encoding="utf-8"))
    skips = {r: v["count"] for r, v in info["skips"].items()}
    assert skips.get(reason, 0) > 0, skips
    assert f"× {reason}" in outcome.out
    assert "0x" not in json.dumps(info["skips"])  # no memory addresses: identical builds, identical cards
    caption_level = sum(c for r, c in skips.items() if r in CAPTION_REASONS or r.startswith("caption longer"))
    assert info["counts"]["captions"] + caption_level == annotations
    assert info["counts"]["images"] + sum(skips.values()) - caption_level == images
    return info


def accepted(outcome) -> None:
    assert outcome.code == 0, outcome.text
    assert "Traceback" not in outcome.text


def metric_error(run: Callable[[], object], *names: str) -> None:
    with pytest.raises(ValueError) as raised:
        run()
    for name in names:
        assert name in str(raised.value), str(raised.value)


# --------------------------------------------------------------------------------------------
# Shared inputs: a tiny COCO folder, a dataset built from it (one image then corrupted), one evaluate run


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("matrix")
    captions, images = write_coco(root / "coco", n_images=4)
    data = root / "data"
    accepted(run_cli("build", "--captions", captions, "--images", images, "--out", data, "--quiet"))
    shard = next((data / schema.IMAGES).glob("*.parquet"))
    table = pq.read_table(shard)
    cells = table.column("image").to_pylist()
    cells[-1] = {"bytes": b"not an image at all", "path": cells[-1]["path"]}
    pq.write_table(table.set_column(table.schema.get_field_index("image"), table.schema.field("image"),
                                    pa.array(cells, table.schema.field("image").type)), shard)
    run = root / "run"
    outcome = run_cli("evaluate", "--model", MODEL, "--dataset", data, "--out", run, "--cache-dir", root / "cache",
                      "--bootstrap", "0", "--num-workers", "0", "--no-progress")
    accepted(outcome)
    return {"root": root, "captions": captions, "images": images, "data": data, "run": run, "evaluate": outcome}


@pytest.fixture(scope="module")
def metric():
    import evaluate

    return evaluate.load(str(REPO / "lgip_metric"))


ROWS = dict(
    original_scores=[0.31, 0.31, 0.31, 0.28, 0.28],
    variant_scores=[0.30, 0.25, 0.33, 0.28, 0.21],
    variant_kinds=["paraphrase", "flip", "flip", "paraphrase", "flip"],
    variant_types=["template", "object", "color", "marker", "count"],
    caption_ids=["c1", "c1", "c1", "c2", "c2"],
    image_ids=[139, 139, 139, 285, 285],
)


def build(tmp: Path, captions: Path, images: Path | None, *extra) -> tuple:
    out = tmp / "out"
    source = ["--images", images] if images is not None else ["--no-images"]
    return run_cli("build", "--captions", captions, *source, "--out", out, "--quiet", *extra), out


def score(world, tmp: Path, *extra, dataset=None) -> object:
    return run_cli("score", "--model", MODEL, "--dataset", dataset or world["data"], "--cache-dir", "none",
                   "--num-workers", "0", "--no-progress", *extra)


# --------------------------------------------------------------------------------------------
# build


def case_build_captions_missing(world, tmp):
    outcome, _ = build(tmp, tmp / "nope.json", world["images"])
    error(outcome, "nope.json")


def case_build_malformed_json(world, tmp):
    (tmp / "c.json").write_text('{"images": [', encoding="utf-8")
    outcome, _ = build(tmp, tmp / "c.json", world["images"])
    error(outcome, "c.json", "malformed JSON at line 1")


def case_build_captions_not_an_object(world, tmp):
    (tmp / "c.json").write_text("42", encoding="utf-8")
    error(build(tmp, tmp / "c.json", world["images"])[0], "c.json", "'images' and 'annotations'")


def case_build_image_without_file_name(world, tmp):
    captions, images = write_coco(tmp, images=[{"id": 1}])
    error(build(tmp, captions, images)[0], "images[0]", "file_name")


def case_build_annotation_without_image_id(world, tmp):
    captions, images = write_coco(tmp, annotations=[{"id": 5, "caption": "A dog."}])
    error(build(tmp, captions, images)[0], "annotations[0]", "image_id")


def _captions_text(tmp, replace: dict[str, str]) -> Path:
    """The default COCO captions file with ``replace``'s JSON snippets put in for their placeholders."""
    captions, _ = write_coco(tmp)
    text = captions.read_text(encoding="utf-8")
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new, 1)
    captions.write_text(text, encoding="utf-8")
    return captions


def case_build_image_id_not_a_whole_number(world, tmp):
    for k, value in enumerate(["139.7", "true", str(2**70), "Infinity", '"+1"', '" 1"', '"\\u0661"', "-1"]):
        captions = _captions_text(tmp / str(k), {'{"id": 1, "file_name"': '{"id": ' + value + ', "file_name"'})
        error(build(tmp / str(k), captions, tmp / str(k) / "images")[0], "images[0]", "not a whole number")


def case_build_annotation_id_not_a_whole_number(world, tmp):
    for k, value in enumerate(['"+100"', '" 100"', '"\\u0661\\u0660\\u0660"', "100.5", "false"]):
        captions = _captions_text(tmp / str(k), {'{"id": 100, ': '{"id": ' + value + ", "})
        error(build(tmp / str(k), captions, tmp / str(k) / "images")[0], "annotations[0]", "not a whole number")


def case_build_images_not_a_list(world, tmp):
    captions = _captions_text(tmp, {'"images": [': '"images": {"x": 1}, "old_images": ['})
    error(build(tmp, captions, tmp / "images")[0], "'images' is a dict, not a list")


def case_build_deeply_nested_json(world, tmp):
    (tmp / "c.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    error(build(tmp, tmp / "c.json", world["images"])[0], "c.json", "nested too deeply")


def case_build_captions_path_is_a_folder(world, tmp):
    (tmp / "c.json").mkdir()
    error(build(tmp, tmp / "c.json", world["images"])[0], "c.json", "a folder, not a captions file")


def case_build_caption_with_a_lone_surrogate(world, tmp):
    captions = _captions_text(tmp, {'"caption": "A brown dog': '"caption": "\\ud800A brown dog'})
    outcome, out = build(tmp, captions, tmp / "images")
    build_skip(outcome, out, "caption not valid Unicode (an unpaired surrogate, which no UTF-8 file can hold)",
               annotations=20, images=4)


def case_build_image_ids_file_missing_or_a_folder(world, tmp):
    (tmp / "ids").mkdir()
    for value in (f"@{tmp / 'missing.txt'}", f"@{tmp / 'ids'}"):
        error(build(tmp, world["captions"], world["images"], "--image-ids", value)[0], "--image-ids", "cannot read the id file")
    error(build(tmp, world["captions"], world["images"], "--image-ids", "1,+2")[0], "--image-ids", "'+2'")


def case_build_duplicate_annotation_id(world, tmp):
    annotations = coco_annotations(4)
    annotations.append({"id": 101, "image_id": 2, "caption": "A green kite in the sky."})
    captions, images = write_coco(tmp, annotations=annotations)
    outcome, out = build(tmp, captions, images)
    info = build_skip(outcome, out, "duplicate annotation id", annotations=21, images=4)
    assert info["counts"]["captions"] == 20
    row_ids = pq.read_table(next((out / "pairs").glob("*.parquet")), columns=["row_id"]).column(0).to_pylist()
    assert len(row_ids) == len(set(row_ids))


def case_build_repeated_image_same_file(world, tmp):
    images = [{"id": i, "file_name": f"{i:012d}.jpg"} for i in (1, 2, 3, 4)] + [{"id": 2, "file_name": f"{2:012d}.jpg"}]
    captions, folder = write_coco(tmp, images=images)
    outcome, out = build(tmp, captions, folder)
    accepted(outcome)
    assert json.loads((out / "lgip_build.json").read_text())["counts"]["images"] == 4


def case_build_repeated_image_other_file(world, tmp):
    images = [{"id": i, "file_name": f"{i:012d}.jpg"} for i in (1, 2, 3, 4)] + [{"id": 2, "file_name": "other.jpg"}]
    captions, folder = write_coco(tmp, images=images, files={"other.jpg": jpeg("white")})
    outcome, out = build(tmp, captions, folder)
    error(outcome, "images[4]", "repeats id 2", "other.jpg")
    assert not out.exists()


def _escape_case(tmp, file_name):
    (tmp / "secret.jpg").write_bytes(jpeg("black"))
    images = [{"id": i, "file_name": f"{i:012d}.jpg"} for i in (1, 2, 3)] + [{"id": 4, "file_name": file_name}]
    captions, folder = write_coco(tmp, images=images)
    outcome, out = build(tmp, captions, folder)
    build_skip(outcome, out, "file_name leaves the --images folder", annotations=20, images=4)
    stored = pq.read_table(next((out / "images").glob("*.parquet")), columns=["image_id"]).column(0).to_pylist()
    assert stored == [1, 2, 3]


def case_build_file_name_dot_dot(world, tmp):
    _escape_case(tmp, "../secret.jpg")


def case_build_file_name_absolute(world, tmp):
    _escape_case(tmp, str((tmp / "secret.jpg").resolve()))


def case_build_missing_image_file(world, tmp):
    captions, folder = write_coco(tmp)
    (folder / f"{3:012d}.jpg").unlink()
    outcome, out = build(tmp, captions, folder)
    build_skip(outcome, out, "image file missing", annotations=20, images=4)


def case_build_corrupt_image_reason_is_stable(world, tmp):
    captions, folder = write_coco(tmp, files={f"{2:012d}.jpg": b"GIF89a not really"})
    outcome, out = build(tmp, captions, folder)
    info = build_skip(outcome, out, "corrupt or unreadable image: not a recognised image format (accepted: JPEG, PNG, "
                      "WebP, GIF, BMP, TIFF)", annotations=20, images=4)
    assert "0x" not in (out / "README.md").read_text(encoding="utf-8")
    assert info["counts"]["images"] == 3


def case_build_16_bit_grayscale_png(world, tmp):
    images = [{"id": i, "file_name": f"{i:012d}.jpg"} for i in (1, 2, 3)] + [{"id": 4, "file_name": "gray16.png"}]
    captions, folder = write_coco(tmp, images=images, files={"gray16.png": png16_gray(32768)})
    outcome, out = build(tmp, captions, folder)
    accepted(outcome)
    from lgip_dataset.files.images import decode_image

    table = pq.read_table(next((out / "images").glob("*.parquet")))
    cell = table.column("image").to_pylist()[table.column("image_id").to_pylist().index(4)]
    mean = np.asarray(decode_image(cell["bytes"])).mean()
    assert abs(mean - 127.5) < 1.0, mean  # PIL's own convert("RGB") gives 255


def _image_case(tmp, name: str, data: bytes):
    images = [{"id": i, "file_name": f"{i:012d}.jpg"} for i in (1, 2, 3)] + [{"id": 4, "file_name": name}]
    captions, folder = write_coco(tmp, images=images, files={name: data})
    return build(tmp, captions, folder)


def case_build_thin_image_refused_from_its_header(world, tmp):
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("L", (1, 20000)).save(buffer, format="PNG")  # a few hundred bytes, gigabytes once resized
    outcome, out = _image_case(tmp, "thin.png", buffer.getvalue())
    build_skip(outcome, out, "image too thin: 1x20000 pixels (a side over 50 times the other; a model resizes the "
               "short side and the long one with it, past any memory)", annotations=20, images=4)


def case_build_eps_is_not_an_accepted_format(world, tmp):
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (16, 12), "red").save(buffer, format="EPS")  # Pillow would hand it to Ghostscript
    outcome, out = _image_case(tmp, "drawing.eps", buffer.getvalue())
    build_skip(outcome, out, "corrupt or unreadable image: not a recognised image format (accepted: JPEG, PNG, WebP, "
               "GIF, BMP, TIFF)", annotations=20, images=4)


def case_build_exif_orientation_is_stored_upright(world, tmp):
    from PIL import Image

    from lgip_dataset.files.images import decode_image

    image = Image.new("RGB", (40, 20), "red")
    exif = image.getexif()
    exif[0x0112] = 6  # shown turned 90 degrees clockwise
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", exif=exif)
    outcome, out = _image_case(tmp, "turned.jpg", buffer.getvalue())
    accepted(outcome)
    table = pq.read_table(next((out / "images").glob("*.parquet"))).to_pylist()
    row = next(r for r in table if r["image_id"] == 4)
    assert row["converted_from"] == "JPEG RGB (EXIF orientation 6)" and (row["width"], row["height"]) == (20, 40)
    stored = Image.open(io.BytesIO(row["image"]["bytes"]))
    assert stored.size == (20, 40) and np.array_equal(np.asarray(stored.convert("RGB")),
                                                      np.asarray(decode_image(buffer.getvalue())))


def case_build_num_images_beyond_available(world, tmp):
    outcome, out = build(tmp, world["captions"], world["images"], "--num-images", "1000")
    error(outcome, "--num-images 1000", "only 4")
    assert not out.exists()


def case_build_num_images_zero(world, tmp):
    error(build(tmp, world["captions"], world["images"], "--num-images", "0")[0], "--num-images")


def case_build_captions_per_image_zero(world, tmp):
    error(build(tmp, world["captions"], world["images"], "--captions-per-image", "0")[0], "--captions-per-image")


def case_build_out_is_a_file_with_overwrite(world, tmp):
    (tmp / "out").write_text("keep me", encoding="utf-8")
    outcome, out = build(tmp, world["captions"], world["images"], "--overwrite")
    error(outcome, "--out", str(out), "is a file")
    assert out.read_text(encoding="utf-8") == "keep me"
    assert sorted(p.name for p in tmp.iterdir()) == ["out"]  # no .out.old, no .out.partial


def case_build_out_exists(world, tmp):
    (tmp / "out").mkdir()
    error(build(tmp, world["captions"], world["images"])[0], "--overwrite", "already exists")


def case_build_images_not_a_folder(world, tmp):
    error(build(tmp, world["captions"], world["captions"])[0], "--images", "not a folder")


def _karpathy(tmp, entries):
    path = tmp / "karpathy.json"
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path


def case_build_karpathy_fractional_image_id(world, tmp):
    path = _karpathy(tmp, [{"image": "val2014/COCO_val2014_000000000042.jpg", "caption": ["A dog."], "image_id": 1.5}])
    error(build(tmp, path, None)[0], "karpathy.json", "entry [0]", "image_id 1.5")


def case_build_karpathy_no_numeric_id(world, tmp):
    path = _karpathy(tmp, [{"image": "val2014/dog.jpg", "caption": ["A dog."], "image_id": "dog"}])
    error(build(tmp, path, None)[0], "karpathy.json", "entry [0]", "'dog'")


def case_build_karpathy_no_id_anywhere(world, tmp):
    path = _karpathy(tmp, [{"image": "val2014/dog.jpg", "caption": ["A dog."]}])
    error(build(tmp, path, None)[0], "karpathy.json", "entry [0]", "dog.jpg")


def case_build_karpathy_string_id(world, tmp):
    path = _karpathy(tmp, [{"image": "a.jpg", "caption": ["A brown dog on a couch."], "image_id": "42"}])
    outcome, out = build(tmp, path, None)
    accepted(outcome)
    ids = pq.read_table(next((out / "captions").glob("*.parquet")), columns=["image_id"]).column(0).to_pylist()
    assert ids == [42]


def case_build_karpathy_entry_without_caption(world, tmp):
    path = _karpathy(tmp, [{"image": "a.jpg", "image_id": 1}])
    error(build(tmp, path, None)[0], "entry [0]", "'caption'")


def case_build_empty_and_non_string_captions(world, tmp):
    annotations = coco_annotations(4)
    annotations += [{"id": 900, "image_id": 1, "caption": "   "}, {"id": 901, "image_id": 2, "caption": 7}]
    captions, folder = write_coco(tmp, annotations=annotations)
    outcome, out = build(tmp, captions, folder, "--captions-per-image", "10")
    build_skip(outcome, out, "empty caption", annotations=22, images=4)
    build_skip(outcome, out, "caption not a string", annotations=22, images=4)


def case_build_caption_without_image(world, tmp):
    annotations = coco_annotations(4)
    annotations.append({"id": 999, "image_id": 77, "caption": "A cat."})
    captions, folder = write_coco(tmp, annotations=annotations)
    outcome, out = build(tmp, captions, folder)
    build_skip(outcome, out, "caption without image entry", annotations=21, images=4)


def case_build_unknown_image_ids(world, tmp):
    error(build(tmp, world["captions"], world["images"], "--image-ids", "1,99")[0], "--image-ids", "99")


def case_build_bad_license_ids(world, tmp):
    error(build(tmp, world["captions"], world["images"], "--license-ids", "x")[0], "--license-ids")


def case_build_no_usable_image_leaves_no_partial(world, tmp):
    captions, folder = write_coco(tmp)
    for path in folder.iterdir():
        path.unlink()
    outcome, out = build(tmp, captions, folder)
    error(outcome, "no usable images", "captions.json")
    assert not out.exists() and not (tmp / ".out.partial").exists()


def case_build_out_cannot_be_created(world, tmp):
    (tmp / "file").write_text("x", encoding="utf-8")
    outcome = run_cli("build", "--captions", world["captions"], "--images", world["images"],
                      "--out", tmp / "file" / "sub" / "out", "--quiet")
    error(outcome, "--out", "cannot create")


def case_build_image_path_is_a_folder(world, tmp):
    captions, folder = write_coco(tmp)
    (folder / f"{2:012d}.jpg").unlink()
    (folder / f"{2:012d}.jpg").mkdir()  # a folder where a file should be: reading it fails
    outcome, out = build(tmp, captions, folder)
    build_skip(outcome, out, "image file missing", annotations=20, images=4)


def case_build_unknown_family(world, tmp):
    error(build(tmp, world["captions"], world["images"], "--families", "core,nope")[0], "--families", "nope")


# --------------------------------------------------------------------------------------------
# score


def case_score_limit_zero(world, tmp):
    error(score(world, tmp, "--out", tmp / "o", "--limit", "0"), "--limit", "at least 1")


def case_score_limit_negative(world, tmp):
    error(score(world, tmp, "--out", tmp / "o", "--limit", "-1"), "--limit", "at least 1")


def case_score_limit_not_a_number(world, tmp):
    error(score(world, tmp, "--out", tmp / "o", "--limit", "ten"), "--limit", "'ten'")


def case_score_out_is_a_file(world, tmp):
    (tmp / "o").write_text("x", encoding="utf-8")
    outcome = score(world, tmp, "--out", tmp / "o")
    error(outcome, "--out", "is a file")
    assert "scored" not in outcome.out  # refused before the model was loaded or anything encoded


def case_score_out_held_by_another_run(world, tmp):
    (tmp / "o").mkdir()
    held = lock_folder(tmp / "o")  # as another run holds it
    try:
        outcome = score(world, tmp, "--out", tmp / "o")
    finally:
        os.close(held)
    error(outcome, "--out", "another lgip run")
    assert not (tmp / "o" / "scores.parquet").exists() and not list((tmp / "o").iterdir())


def _dataset_copy(world, tmp) -> Path:
    copy = tmp / "data"
    shutil.copytree(world["data"], copy)
    return copy


def case_score_edits_past_the_context_are_counted_and_warned(world, tmp):
    data = _dataset_copy(world, tmp)
    shard = next((data / "pairs").glob("*.parquet"))
    table = pq.read_table(shard)
    lead = "a photo " * 60  # 120 tokens: every caption's words, and every edit, lie past CLIP's 77
    for name in ("caption", "variant"):
        texts = [lead + text for text in table.column(name).to_pylist()]
        table = table.set_column(table.schema.get_field_index(name), name, pa.array(texts))
    pq.write_table(table, shard)
    outcome = score(world, tmp, "--out", tmp / "o", dataset=data)
    accepted(outcome)
    provenance = json.loads((tmp / "o" / "provenance.json").read_text(encoding="utf-8"))
    assert provenance["counts"]["read_alike_rows"] == provenance["counts"]["scored_rows"] > 0
    assert f"warning: {provenance['counts']['read_alike_rows']:,} row(s) reach the model as the same tokens" in outcome.out
    assert "77-token context" in outcome.out


def case_score_variants_that_differ_only_in_case_or_spacing_tie_exactly(world, tmp):
    data = _dataset_copy(world, tmp)
    shard = next((data / "pairs").glob("*.parquet"))
    table = pq.read_table(shard)
    captions, variants = table.column("caption").to_pylist(), table.column("variant").to_pylist()
    edits = {0: lambda c: c.upper(), 1: lambda c: "  " + c.replace(" ", "   ") + " ", 2: lambda c: c.swapcase()}
    for row, edit in edits.items():
        variants[row] = edit(captions[row])
    pq.write_table(table.set_column(table.schema.get_field_index("variant"), "variant", pa.array(variants)), shard)
    outcome = score(world, tmp, "--out", tmp / "o", dataset=data)
    accepted(outcome)
    provenance = json.loads((tmp / "o" / "provenance.json").read_text(encoding="utf-8"))
    assert provenance["counts"]["read_alike_rows"] >= len(edits)
    scores = pq.read_table(tmp / "o" / "scores.parquet").to_pandas().set_index("row_id")
    for row in edits:
        tied = scores.loc[table.column("row_id")[row].as_py()]
        assert tied["s_original"] == tied["s_variant"]  # one text to the model: an exact tie


def case_score_num_workers_above_the_cap(world, tmp):
    outcome = score(world, tmp, "--out", tmp / "o", "--num-workers", "1000")
    error(outcome, "--num-workers 1000", "at most 16")


def case_score_pretrained_for_a_random_weight_model(world, tmp):
    (tmp / "weights.pt").write_bytes(b"not weights")
    outcome = score(world, tmp, "--out", tmp / "o", "--pretrained", tmp / "weights.pt")
    error(outcome, "--pretrained", "would be ignored", "random weights")
    assert not (tmp / "o" / "scores.parquet").exists()


def case_score_pretrained_file_that_is_no_checkpoint(world, tmp):
    (tmp / "notes.txt").write_text("these are not weights", encoding="utf-8")
    outcome = run_cli("score", "--model", "ViT-B-16", "--pretrained", tmp / "notes.txt", "--dataset", world["data"],
                      "--out", tmp / "o", "--cache-dir", "none", "--num-workers", "0", "--no-progress")
    error(outcome, "--pretrained", "notes.txt", "checkpoint file open_clip can read")


def case_score_duplicate_row_id(world, tmp):
    data = _dataset_copy(world, tmp)
    shard = next((data / "pairs").glob("*.parquet"))
    table = pq.read_table(shard)
    ids = table.column("row_id").to_pylist()
    ids[5] = ids[2]
    pq.write_table(table.set_column(0, "row_id", pa.array(ids)), shard)
    error(score(world, tmp, "--out", tmp / "o", dataset=data), "row_id", repr(ids[2]), "rows 2, 5")


def case_score_truncated_pairs_shard(world, tmp):
    data = _dataset_copy(world, tmp)
    shard = next((data / "pairs").glob("*.parquet"))
    shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])
    outcome = score(world, tmp, "--out", tmp / "o", dataset=data)
    error(outcome, shard.name, "truncated or corrupt")
    assert len(outcome.err.splitlines()) <= 2


def case_score_empty_dataset_folder(world, tmp):
    (tmp / "empty").mkdir()
    error(score(world, tmp, "--out", tmp / "o", dataset=tmp / "empty"), "no parquet files", "'pairs'")


def case_score_unknown_config(world, tmp):
    error(score(world, tmp, "--out", tmp / "o", "--config", "nope"), "unknown config 'nope'")


def _local_dir(tmp, config) -> Path:
    folder = tmp / "model"
    folder.mkdir()
    (folder / "open_clip_config.json").write_text(config, encoding="utf-8")
    return folder


def case_score_local_dir_config_without_text_cfg(world, tmp):
    folder = _local_dir(tmp, json.dumps({"model_cfg": {"embed_dim": 32, "vision_cfg": {}}}))
    outcome = run_cli("score", "--model", f"random:local-dir:{folder}", "--out", tmp / "o", "--cache-dir", "none")
    error(outcome, "open_clip_config.json", "text_cfg")


def case_score_local_dir_config_not_json(world, tmp):
    folder = _local_dir(tmp, "{model_cfg:")
    outcome = run_cli("score", "--model", f"random:local-dir:{folder}", "--out", tmp / "o", "--cache-dir", "none")
    error(outcome, "open_clip_config.json", "not valid JSON")


def case_score_batch_size_zero(world, tmp):
    error(score(world, tmp, "--out", tmp / "o", "--batch-size", "0"), "--batch-size")


def case_score_unknown_model(world, tmp):
    error(run_cli("score", "--model", "clip-vit-b61", "--out", tmp / "o"), "unknown model 'clip-vit-b61'")


def case_score_corrupt_image_rows_counted(world, tmp):
    provenance = json.loads((world["run"] / "provenance.json").read_text(encoding="utf-8"))
    counts = provenance["counts"]
    assert counts["skipped_rows"] > 0 and counts["scored_rows"] + counts["skipped_rows"] == counts["rows"]
    assert sum(s["rows"] for s in counts["skipped_images"]) == counts["skipped_rows"]
    assert pq.read_metadata(world["run"] / "scores.parquet").num_rows == counts["scored_rows"]
    assert f"scored {counts['scored_rows']} of {counts['rows']} rows" in world["evaluate"].out
    assert "skipped image 4" in world["evaluate"].out


# --------------------------------------------------------------------------------------------
# evaluate


def case_evaluate_out_is_a_file(world, tmp):
    (tmp / "o").write_text("x", encoding="utf-8")
    outcome = run_cli("evaluate", "--model", MODEL, "--dataset", world["data"], "--out", tmp / "o")
    error(outcome, "--out", "is a file")


def case_evaluate_limit_zero(world, tmp):
    error(run_cli("evaluate", "--model", MODEL, "--out", tmp / "o", "--limit", "0"), "--limit")


def case_evaluate_bad_confidence_before_scoring(world, tmp):
    outcome = run_cli("evaluate", "--model", MODEL, "--dataset", world["data"], "--out", tmp / "o",
                      "--confidence", "1.5", "--cache-dir", "none")
    error(outcome, "--confidence", "1.5")
    assert not (tmp / "o" / "scores.parquet").exists()


def case_evaluate_negative_bootstrap_before_scoring(world, tmp):
    outcome = run_cli("evaluate", "--model", MODEL, "--dataset", world["data"], "--out", tmp / "o",
                      "--bootstrap", "-5", "--cache-dir", "none")
    error(outcome, "--bootstrap", "-5")
    assert not (tmp / "o" / "scores.parquet").exists()


def case_evaluate_writes_results_and_report(world, tmp):
    data = json.loads((world["run"] / "results.json").read_text(encoding="utf-8"))
    assert data["format"] == "lgip-results" and data["statistics"]["counts"]["PR"]["base_pairs"] > 0
    assert (world["run"] / "report" / "report.md").exists()
    assert not list(world["run"].rglob("*.tmp"))


def case_evaluate_bootstrap_too_large_before_scoring(world, tmp):
    outcome = run_cli("evaluate", "--model", MODEL, "--dataset", world["data"], "--out", tmp / "o",
                      "--bootstrap", "1000000000", "--cache-dir", "none")
    error(outcome, "--bootstrap", "1000000000", "100,000")
    assert not (tmp / "o" / "scores.parquet").exists()


def case_evaluate_bootstrap_of_two_draws_its_plot(world, tmp):
    outcome = run_cli("evaluate", "--model", MODEL, "--dataset", world["data"], "--out", tmp / "o", "--bootstrap", "2",
                      "--cache-dir", "none", "--num-workers", "0", "--no-progress")
    accepted(outcome)  # a point estimate outside a 2-resample interval draws no negative error bar
    assert (tmp / "o" / "report" / "frontier.png").is_file()


def case_evaluate_names_the_intervals_by_their_coverage(world, tmp):
    outcome = run_cli("evaluate", "--model", MODEL, "--dataset", world["data"], "--out", tmp / "o", "--bootstrap", "20",
                      "--confidence", "0.9", "--cache-dir", "none", "--num-workers", "0", "--no-progress")
    accepted(outcome)
    assert "90% CI [" in outcome.out and "95% CI" not in outcome.out


def case_evaluate_out_inside_the_dataset(world, tmp):
    data = tmp / "data"
    shutil.copytree(world["data"], data)
    before = folder_hashes(data)
    for out in (data / "pairs", data / "run", data):
        outcome = run_cli("evaluate", "--model", MODEL, "--dataset", data, "--out", out, "--cache-dir", "none")
        error(outcome, "--out", "inside the LGIP dataset", "lgip_build.json")
    assert folder_hashes(data) == before and not (data / "run").exists()


def case_push_results_with_a_metric_that_is_no_number(world, tmp):
    for value in ("NaN", "Infinity", '"0.9"'):
        run = _run_copy(world, tmp / value.strip('"'))
        text = (run / "results.json").read_text(encoding="utf-8")
        data = json.loads(text)
        data["metrics"]["PR"] = "__VALUE__"
        (run / "results.json").write_text(json.dumps(data).replace('"__VALUE__"', value), encoding="utf-8")
        outcome = run_cli("push-results", run, "--repo", tmp / "card", "--dataset-id", "org/lgip")
        error(outcome, "'PR'", "not a finite number")
        assert not (tmp / "card").exists()


# --------------------------------------------------------------------------------------------
# report


def _run_copy(world, tmp, edit: Callable[[dict], None] | None = None) -> Path:
    run = tmp / "run"
    shutil.copytree(world["run"], run, ignore=shutil.ignore_patterns("report"))
    if edit is not None:
        data = json.loads((run / "results.json").read_text(encoding="utf-8"))
        edit(data)
        (run / "results.json").write_text(json.dumps(data), encoding="utf-8")
    return run


def report(run: Path, tmp: Path):
    return run_cli("report", run, "--out", tmp / "report")


def case_report_accepts_a_run(world, tmp):
    outcome = report(_run_copy(world, tmp), tmp)
    accepted(outcome)
    assert (tmp / "report" / "table1.md").exists()


def case_report_no_results_file(world, tmp):
    (tmp / "run").mkdir()
    error(report(tmp / "run", tmp), "results.json", "no such results file")


def case_report_results_not_json(world, tmp):
    run = _run_copy(world, tmp)
    (run / "results.json").write_text("{", encoding="utf-8")
    error(report(run, tmp), "results.json", "not valid JSON")


def case_report_statistics_null(world, tmp):
    error(report(_run_copy(world, tmp, lambda d: d.update(statistics=None)), tmp), "results.json", "'statistics'")


def case_report_dataset_missing(world, tmp):
    error(report(_run_copy(world, tmp, lambda d: d.pop("dataset")), tmp), "results.json", "'dataset'", "missing")


def case_report_statistics_without_pr(world, tmp):
    error(report(_run_copy(world, tmp, lambda d: d["statistics"].pop("PR")), tmp), "'statistics'", "'PR'")


def case_report_scores_missing(world, tmp):
    run = _run_copy(world, tmp)
    (run / "scores.parquet").unlink()
    error(report(run, tmp), "scores.parquet", "missing")


def case_report_scores_corrupt(world, tmp):
    run = _run_copy(world, tmp)
    (run / "scores.parquet").write_bytes(b"PAR1 this is not a parquet file PAR1")
    error(report(run, tmp), "scores.parquet", "not a readable parquet file")


def case_report_scores_truncated(world, tmp):
    run = _run_copy(world, tmp)
    path = run / "scores.parquet"
    path.write_bytes(path.read_bytes()[:-100])
    error(report(run, tmp), "scores.parquet")


def case_report_scores_rewritten_by_another_run(world, tmp):
    run = _run_copy(world, tmp)
    path = run / "scores.parquet"
    table = pq.read_table(path)
    column = table.schema.get_field_index("s_variant")
    pq.write_table(table.set_column(column, "s_variant", pa.array(np.zeros(table.num_rows))), path)  # readable
    error(report(run, tmp), "scores.parquet", "SHA-256", "is not the score file")


def case_report_scores_named_outside_the_run_folder(world, tmp):
    run = _run_copy(world, tmp, lambda d: d.update(scores="../elsewhere/scores.parquet"))
    error(report(run, tmp), "results.json", "../elsewhere/scores.parquet", "outside the folder")


def case_score_into_an_evaluate_run_removes_its_stale_results(world, tmp):
    run = tmp / "run"
    shutil.copytree(world["run"], run)
    assert (run / "report").is_dir()
    outcome = score(world, tmp, "--out", run, "--limit", "5")
    accepted(outcome)
    assert f"removed results.json, report/ of an earlier run in {run}" in outcome.out
    assert not (run / "results.json").exists() and not (run / "report").exists()
    error(report(run, tmp), "results.json", "no such results file")  # never the old model's numbers


def case_score_again_keeps_results_of_the_same_scores(world, tmp):
    run = tmp / "run"
    shutil.copytree(world["run"], run)
    outcome = score(world, tmp, "--out", run)  # the same model and rows: the same scores
    accepted(outcome)
    assert "removed" not in outcome.out and (run / "results.json").exists()
    accepted(report(run, tmp))


def case_report_results_not_utf8(world, tmp):
    run = _run_copy(world, tmp)
    (run / "results.json").write_bytes(b'{"format": "lgip-results", "x": "\xff\xfe"}')
    error(report(run, tmp), "results.json", "not UTF-8")


def case_report_results_wrong_types(world, tmp):
    error(report(_run_copy(world, tmp, lambda d: d["statistics"].update(PR="0.9")), tmp), "results.json", "'PR'",
          "not a number")
    error(report(_run_copy(world, tmp / "b", lambda d: d["statistics"].update(per_type=[1])), tmp / "b"),
          "results.json", "'per_type'")


def case_report_results_unknown_averaging(world, tmp):
    error(report(_run_copy(world, tmp, lambda d: d.update(averaging="median")), tmp), "results.json", "'median'",
          "base_pair")


def case_report_compare_with_nan_scores(world, tmp):
    from lgip_dataset.sources.statistics_captions import file_sha256

    first = _run_copy(world, tmp / "a")
    second = _run_copy(world, tmp / "b")
    path = second / "scores.parquet"
    table = pq.read_table(path)
    values = table.column("s_variant").to_numpy().copy()
    values[0] = np.nan  # as a model that overflowed would score: the record is made for these very bytes
    pq.write_table(table.set_column(table.schema.get_field_index("s_variant"), "s_variant", pa.array(values)), path)
    data = json.loads((second / "results.json").read_text(encoding="utf-8"))
    data["provenance"]["scores"]["sha256"] = file_sha256(path)
    (second / "results.json").write_text(json.dumps(data), encoding="utf-8")
    error(run_cli("report", first, second, "--out", tmp / "report"), "cannot compare", "variant_scores_b", "NaN")


def case_report_out_is_a_file(world, tmp):
    (tmp / "report").write_text("x", encoding="utf-8")
    error(report(_run_copy(world, tmp), tmp), "--out", "is a file")


def case_report_wrong_format(world, tmp):
    error(report(_run_copy(world, tmp, lambda d: d.update(format="other")), tmp), "not an LGIP results file")


# --------------------------------------------------------------------------------------------
# the evaluate metric (and the statistics it wraps)


def case_metric_accepts_rows(world, tmp, metric):
    result = metric.compute(**ROWS, bootstrap=0)
    assert round(result["E_inv"], 6) == 0.005 and result["counts"]["PR"]["base_pairs"] == 2


def case_metric_bool_scores(world, tmp, metric):
    metric_error(lambda: metric.compute(**{**ROWS, "original_scores": [True, False, True, True, False]}, bootstrap=0),
                 "original_scores", "row 0", "boolean")


def case_metric_bootstrap_true(world, tmp, metric):
    metric_error(lambda: metric.compute(**ROWS, bootstrap=True), "bootstrap", "whole number", "True")


def case_metric_two_original_scores_in_one_base_pair(world, tmp, metric):
    rows = {**ROWS, "original_scores": [0.31, 0.31, 0.45, 0.28, 0.28]}
    metric_error(lambda: metric.compute(**rows, bootstrap=0), "original_scores", "row 2", "same base pair")


def case_metric_caption_on_two_images(world, tmp, metric):
    """Accepted as two base pairs (a base pair is (image, caption)), and said out loud."""
    with pytest.warns(UserWarning, match=r"caption_ids 'c1' with image_ids 139 and 140") as caught:
        result = metric.compute(**{**ROWS, "image_ids": [139, 140, 139, 285, 285]}, bootstrap=0)
    assert caught[0].category.__name__ == "SharedCaptionWarning"
    assert result["counts"]["PR"]["base_pairs"] == 3


def case_metric_caption_on_two_images_as_python_strings(world, tmp, metric):
    """Caption ids as a table hands them over (an object array of str, not NumPy strings): the same warning."""
    from lgip_metric import stats

    rows = {**ROWS, "image_ids": [139, 140, 139, 285, 285], "caption_ids": np.array(ROWS["caption_ids"], dtype=object)}
    with pytest.warns(stats.SharedCaptionWarning, match=r"caption_ids 'c1' with image_ids 139 and 140"):
        stats.lgip_statistics(*rows.values(), bootstrap=0)


def case_metric_missing_ids(world, tmp, metric):
    from lgip_metric import stats

    for column, value in (("caption_ids", float("nan")), ("caption_ids", None), ("image_ids", float("nan"))):
        ids = list(ROWS[column])
        ids[3] = value
        metric_error(lambda: stats.lgip_statistics(**{**ROWS, column: ids}, bootstrap=0), column, "row 3", "no id")


def case_metric_huge_scores(world, tmp, metric):
    rows = {**ROWS, "variant_scores": [1e308, -1e308, 0.3, 0.28, 0.2]}
    metric_error(lambda: metric.compute(**rows, bootstrap=0), "variant_scores", "row 0")


def case_metric_missing_column(world, tmp, metric):
    rows = {k: v for k, v in ROWS.items() if k != "caption_ids"}
    metric_error(lambda: metric.compute(**rows, bootstrap=0), "'caption_ids'")


def case_metric_nan_score(world, tmp, metric):
    metric_error(lambda: metric.compute(**{**ROWS, "original_scores": [0.3, float("nan"), 0.3, 0.3, 0.3]},
                                        bootstrap=0), "original_scores", "row 1")


def case_metric_length_mismatch(world, tmp, metric):
    metric_error(lambda: metric.compute(**{**ROWS, "image_ids": [139, 139, 139, 285]}, bootstrap=0), "image_ids")


def case_metric_unknown_type(world, tmp, metric):
    metric_error(lambda: metric.compute(**{**ROWS, "variant_types": ["template", "object", "hue", "marker", "count"]},
                                        bootstrap=0), "'hue'", "row 2")


def case_metric_statistics_bool_array(world, tmp, metric):
    from lgip_metric import stats

    rows = {**ROWS, "variant_scores": np.array([True, False, True, True, False])}
    metric_error(lambda: stats.lgip_statistics(*rows.values(), bootstrap=0), "variant_scores", "boolean")


# --------------------------------------------------------------------------------------------
# analyze


def case_analyze_nan_score_is_refused_not_dropped(world, tmp):
    run = tmp / "run"
    shutil.copytree(world["run"], run, ignore=shutil.ignore_patterns("report"))
    scores = pq.read_table(run / "scores.parquet")
    values = scores.column("s_variant").to_numpy().copy()
    values[3] = np.nan
    scores = scores.set_column(scores.schema.get_field_index("s_variant"), "s_variant", pa.array(values))
    pq.write_table(scores, run / "scores.parquet")
    error(run_cli("analyze", run / "scores.parquet", "--out", tmp / "a", "--dataset", world["data"]),
          "scores.parquet", "s_variant", repr(scores.column("row_id")[3].as_py()), "nan", "1 such rows")
    assert not (tmp / "a").exists()


def case_analyze_alpha_and_top_out_of_range(world, tmp):
    for option, value in (("--alpha", "2"), ("--alpha", "0"), ("--top", "-1"), ("--top", "0")):
        error(run_cli("analyze", world["run"], "--out", tmp / "a", option, value), option, value)


# --------------------------------------------------------------------------------------------
# audit: a figure is measured or visibly "not measurable" with its reason; bad tables refused before the work


def audit(path: Path, *extra) -> object:
    return run_cli("audit", "--pairs", path, "--learners", "word", "--bootstrap", "20", "--no-progress", *extra)


def _audit_json(outcome, path: Path) -> dict:
    accepted(outcome)
    return json.loads(path.read_text(encoding="utf-8"))


def case_audit_one_image_is_not_measurable(world, tmp):
    for name, records in (("one_image", flip_pairs(1, per_image=50)), ("one_row", flip_pairs(1, per_image=1)),
                          ("identical_rows", flip_pairs(1, per_image=1) * 50)):
        outcome = audit(write_pairs(tmp / f"{name}.csv", records), "--json", tmp / f"{name}.json")
        record = _audit_json(outcome, tmp / f"{name}.json")
        assert "0.500" not in outcome.out and "1.000" not in outcome.out, outcome.out
        assert "not measurable (1 image, fewer than 10)" in outcome.out
        for entry in (record["per_type"]["color"], record["blocks"]["paper flips"]):
            assert entry["learners"]["word"] == {"accuracy": None, "interval": None,
                                                 "not_measurable": "1 image, fewer than 10"}
            assert entry["bigram"]["PR"] is None and entry["trigram"]["not_measurable"]


def case_audit_two_images_are_not_measurable(world, tmp):
    outcome = audit(write_pairs(tmp / "two.csv", flip_pairs(2, per_image=25)))
    accepted(outcome)
    assert "not measurable (2 images, fewer than 10)" in outcome.out and "0.882" not in outcome.out


def case_audit_a_type_in_one_image_fold_is_not_measurable(world, tmp):
    from lgip_dataset.selection import adversary

    ids = [i for i in range(1000, 1400) if adversary.image_folds([i])[0] == 0][:12]
    records = flip_pairs(40) + [dict(r, image_id=ids[k % 12], type="rare") for k, r in enumerate(flip_pairs(12))]
    outcome = audit(write_pairs(tmp / "folds.csv", records), "--json", tmp / "folds.json")
    record = _audit_json(outcome, tmp / "folds.json")
    reason = "type 'rare': every pair in one image fold, no learner to score it"
    assert record["per_type"]["rare"]["learners"]["word"]["not_measurable"] == reason
    assert record["blocks"]["all flips"]["learners"]["word"]["not_measurable"] == reason  # its pairs would read 0.5
    assert record["per_type"]["color"]["learners"]["word"]["accuracy"] is not None
    assert record["per_type"]["rare"]["bigram"]["PR"] is not None  # the LMs learn every caption: measured


def case_audit_few_images_warn(world, tmp):
    outcome = audit(write_pairs(tmp / "few.csv", flip_pairs(12)))
    accepted(outcome)
    assert "warning: " in outcome.out and "color (12)" in outcome.out and "fewer than 100 images" in outcome.out


def case_audit_caption_id_per_row_is_grouped_by_caption(world, tmp):
    from lgip_dataset import SAMPLE_DIR

    pairs = pq.read_table(next((SAMPLE_DIR / "pairs").glob("*.parquet")),
                          columns=["row_id", "caption_id", "image_id", "caption", "variant", "kind", "type"]).to_pandas()
    pairs.to_parquet(tmp / "given.parquet")
    pairs.assign(caption_id=pairs["row_id"]).to_parquet(tmp / "per_row.parquet")
    figures = {}
    for name in ("given", "per_row"):
        outcome = audit(tmp / f"{name}.parquet", "--types", "color,count", "--json", tmp / f"{name}.json")
        figures[name] = {k: v for k, v in _audit_json(outcome, tmp / f"{name}.json").items() if k in ("per_type", "blocks")}
    assert figures["per_row"] == figures["given"]


def case_audit_one_caption_id_for_all_rows(world, tmp):
    records = [dict(r, caption_id="c1") for r in flip_pairs(12)]
    error(audit(write_pairs(tmp / "p.csv", records)), "p.csv", "rows 0 and 1 share caption_id 'c1'")


def case_audit_one_row_id_for_all_rows(world, tmp):
    records = [dict(r, row_id="r1") for r in flip_pairs(12)]
    error(audit(write_pairs(tmp / "p.csv", records)), "p.csv", "row_id 'r1' repeats (rows 0, 1, 2")


def case_audit_nan_caption_id(world, tmp):
    records = [dict(r, caption_id=None if k == 3 else f"c{k}") for k, r in enumerate(flip_pairs(12))]
    error(audit(write_pairs(tmp / "p.jsonl", records)), "p.jsonl", "row 3 has no 'caption_id'")


def case_audit_variant_equal_to_caption(world, tmp):
    records = flip_pairs(12)
    records[4] = dict(records[4], variant=" " + records[4]["caption"])
    error(audit(write_pairs(tmp / "one.csv", records)), "one.csv", "row 4 has a variant equal to its caption")
    same = [dict(r, variant=r["caption"]) for r in flip_pairs(12)]
    error(audit(write_pairs(tmp / "all.csv", same)), "all.csv", "row 0", "(60 such rows)")


def case_audit_caption_longer_than_the_cap(world, tmp):
    records = flip_pairs(12)
    records[2] = dict(records[2], caption="a dog " * 2_000_000)  # 12 MB
    outcome = audit(write_pairs(tmp / "p.parquet", records))
    error(outcome, "p.parquet", "row 2 has a 'caption' of 12,000,000 characters", "at most 1,000")


def case_audit_lone_surrogate(world, tmp):
    records = flip_pairs(12)
    records[1] = dict(records[1], caption="A red \ud800 dog.")  # a table made in Python (no file holds one)
    import pandas as pd

    from lgip_dataset.errors import DataError
    from lgip_metric.audit import flip_rows

    with pytest.raises(DataError, match=r"my pairs: row 1 has a 'caption' that is not valid Unicode"):
        flip_rows(pd.DataFrame({k: pd.Series([r[k] for r in records], dtype=object) for k in records[0]}),
                  where="my pairs")


def case_audit_output_names_a_folder(world, tmp):
    (tmp / "out").mkdir()
    for option in ("--json", "--markdown"):
        outcome = audit(write_pairs(tmp / "p.csv", flip_pairs(12)), option, tmp / "out")
        error(outcome, option, "is a folder")
        assert "pairs over" not in outcome.out  # refused before the audit ran


def _judged(tmp: Path, per_type: dict) -> Path:
    path = tmp / "judged.json"
    path.write_text(json.dumps({"format": "lgip-judged", "version": 1, "per_type": per_type}), encoding="utf-8")
    return path


def case_audit_judged_counts_that_are_no_counts(world, tmp):
    pairs = write_pairs(tmp / "p.csv", flip_pairs(12, type_="binding"))
    for counts in ({"drawn": 0, "valid": 0}, {"drawn": True, "valid": True}, {"drawn": 10, "valid": 2.5}):
        outcome = audit(pairs, "--judged", _judged(tmp, {"binding": counts}))
        error(outcome, "--judged", "type 'binding' needs whole counts")
        assert "pairs over" not in outcome.out


def case_audit_judged_without_an_extended_type(world, tmp):
    pairs = write_pairs(tmp / "p.csv", flip_pairs(12))
    outcome = audit(pairs, "--judged", _judged(tmp, {"binding": {"drawn": 10, "valid": 9}}))
    error(outcome, "--judged", "would be shown nowhere")


def case_audit_user_type_is_no_extended_probe(world, tmp):
    outcome = audit(write_pairs(tmp / "p.csv", flip_pairs(12) + flip_pairs(1, per_image=1, type_="mine")))
    accepted(outcome)
    assert "Extended probes" not in outcome.out and "| mine | 1 | 1 | not measurable (1 image" in outcome.out


def case_audit_empty_build(world, tmp):
    data = _dataset_copy(world, tmp)
    for shard in (data / "pairs").glob("*.parquet"):
        table = pq.read_table(shard)
        pq.write_table(table.slice(0, 0), shard)
    error(run_cli("audit", data, "--no-progress"), "'pairs' config has no rows")
    error(run_cli("evaluate", "--model", MODEL, "--dataset", data, "--out", tmp / "o", "--cache-dir", "none",
                  "--num-workers", "0", "--no-progress"), "'pairs' config has no rows")


# --------------------------------------------------------------------------------------------
# build (round 4)


def case_build_single_image_learner_is_not_measurable(world, tmp):
    annotations = [{"id": 1000 + k, "image_id": 1, "caption": f"A {color} {noun} next to {count} {other}."}
                   for k, (color, noun, count, other) in enumerate(
                       (c, n, q, o) for c in ("red", "white", "black", "brown") for n in ("dog", "bus", "car", "cat")
                       for q in ("two", "three") for o in ("people", "chairs", "trees"))]
    path = tmp / "captions.json"
    path.write_text(json.dumps({"images": [{"id": 1, "file_name": "000000000001.jpg", "license": 4}],
                                "annotations": annotations, "licenses": []}), encoding="utf-8")
    outcome, out = build(tmp, path, None, "--families", "core,hard", "--captions-per-image", "1000")
    accepted(outcome)
    report = json.loads((out / "lgip_build.json").read_text(encoding="utf-8"))["hard_flips"]["balance"]
    assert report["per_type"] and all(f["learner_accuracy"] is None and f["learner_not_measurable"] ==
                                      "1 image, fewer than 10" for f in report["per_type"].values())
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "not measurable (1 image, fewer than 10)" in card and "0.500 [" not in card


def case_build_out_symlink_with_overwrite(world, tmp):
    (tmp / "target").mkdir()
    (tmp / "target" / "keep.txt").write_text("mine", encoding="utf-8")
    (tmp / "out").symlink_to(tmp / "target", target_is_directory=True)
    for _ in range(2):  # refused the same way every time, nothing left behind
        outcome, out = build(tmp, world["captions"], world["images"], "--overwrite")
        error(outcome, "--out", "is a symbolic link to", "name the folder itself")
    assert out.is_symlink() and (tmp / "target" / "keep.txt").read_text(encoding="utf-8") == "mine"
    assert sorted(p.name for p in tmp.iterdir()) == ["out", "target"]


def case_build_out_dangling_symlink(world, tmp):
    (tmp / "out").symlink_to(tmp / "gone")
    outcome, _ = build(tmp, world["captions"], None)
    error(outcome, "--out", "is a symbolic link to", "which does not exist")
    assert "image shards" not in outcome.err


def case_build_families_that_offer_no_variant(world, tmp):
    for families in ("relation", "temporal", "relation,temporal"):
        outcome, out = build(tmp, world["captions"], None, "--families", families)
        error(outcome, f"--families {families}", "no variant for any of the 20 captions")
        assert not out.exists() and not (tmp / ".out.partial").exists()


def case_build_families_empty(world, tmp):
    for families in ("", " , "):
        error(build(tmp, world["captions"], None, "--families", families)[0], "--families", "no family given")


def case_build_workers_capped_at_the_cores(world, tmp):
    from multiprocessing import pool

    from lgip_dataset.writing.parallel import default_workers

    sizes, real = [], pool.Pool.__init__

    def spy(self, processes=None, *args, **kwargs):
        sizes.append(processes)
        real(self, processes, *args, **kwargs)

    with mock.patch.object(pool.Pool, "__init__", spy):
        outcome, _ = build(tmp, world["captions"], None, "--workers", "1000")
    accepted(outcome)
    assert f"--workers 1000: capped at the {default_workers()} CPU core(s)" in outcome.out
    assert all(size <= default_workers() for size in sizes), sizes


# --------------------------------------------------------------------------------------------
# analyze and report (round 4)


def _scores_copy(world, tmp, edit: Callable) -> Path:
    import pandas as pd

    frame = edit(pd.read_parquet(world["run"] / "scores.parquet"))
    path = tmp / "scores.parquet"
    frame.to_parquet(path)
    return path


def _analyze(world, path: Path, tmp: Path):
    return run_cli("analyze", path, "--out", tmp / "a", "--dataset", world["data"], "--min-support", "2")


def case_analyze_scores_of_one_image(world, tmp):
    path = _scores_copy(world, tmp, lambda f: f[f["image_id"] == f["image_id"].iloc[0]])
    error(_analyze(world, path, tmp), "scores.parquet", "one image")


def case_analyze_scores_without_a_column(world, tmp):
    for column in ("s_variant", "caption"):
        path = _scores_copy(world, tmp, lambda f: f.drop(columns=column))
        error(_analyze(world, path, tmp), "scores.parquet", f"no column {column!r}")


def case_analyze_string_scores(world, tmp):
    path = _scores_copy(world, tmp, lambda f: f.assign(s_original=f["s_original"].astype(str)))
    error(_analyze(world, path, tmp), "scores.parquet", "s_original", "not numbers")


def case_analyze_kind_that_contradicts_the_type(world, tmp):
    def mislabel(frame):
        frame = frame.copy()
        frame.loc[frame["type"] == "object", "kind"] = "paraphrase"
        return frame

    error(_analyze(world, _scores_copy(world, tmp, mislabel), tmp), "scores.parquet", "kind 'paraphrase' but type "
          "'object'", "flip")


def case_report_blind_not_an_object(world, tmp):
    error(report(_run_copy(world, tmp, lambda d: d.update(blind="lm")), tmp), "results.json", "'blind'")


def case_report_figures_out_of_range(world, tmp):
    edits = {"pr": (lambda d: d["statistics"].update(PR=7.5), "statistics PR is 7.5"),
             "nan": (lambda d: d["statistics"]["per_type"]["object"].update(PR=float("nan")),
                     "statistics.per_type.object PR is NaN"),
             "reversed": (lambda d: d["statistics"].update(intervals={"PR": [0.6, 0.4]}), "runs backwards"),
             "interval": (lambda d: d["statistics"].update(intervals={"E_inv": [-1.0, 0.2]}), "E_inv interval is -1.0")}
    for name, (edit, needle) in edits.items():
        error(report(_run_copy(world, tmp / name, edit), tmp / name), "results.json", needle)


# --------------------------------------------------------------------------------------------
# perturb (subprocesses: a closed pipe, an ASCII terminal, bytes that are not UTF-8)


def case_perturb_into_a_closed_pipe(world, tmp):
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written, as `| head -c 100` ends
    try:
        done = run_lgip("perturb", "Two dogs on a red couch.", "--json", stdout=write)
    finally:
        os.close(write)
    assert done.returncode == 141 and b"Traceback" not in done.stderr and b"Exception ignored" not in done.stderr, \
        done.stderr


def case_perturb_on_an_ascii_terminal(world, tmp):
    for extra in ((), ("--json",)):
        done = run_lgip("perturb", "Two dogs on a café couch.", *extra, env={"PYTHONIOENCODING": "ascii"})
        assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
        if extra:
            assert json.loads(done.stdout)["caption"] == "Two dogs on a café couch."


def case_perturb_bytes_that_are_not_utf8(world, tmp):
    done = run_lgip("perturb", b"Two dogs \xff on a couch.", "--json")
    assert done.returncode == 2 and b"\xff" not in done.stdout and b"Traceback" not in done.stderr
    assert b"CAPTION is not valid Unicode" in done.stderr


# --------------------------------------------------------------------------------------------
# judge (round 5): label stores that never lose a label, outputs that never replace what is not a file


def _key(tmp: Path, name: str, flips: list[tuple[str, str]], type_: str = "color") -> Path:
    from lgip_dataset import judging

    path = tmp / name
    path.write_text(judging.key_text([{"item": k, "type": type_, "caption": c, "variant": v, "original_is": "A"}
                                      for k, (c, v) in enumerate(flips, 1)]), encoding="utf-8")
    return path


def _labels(tmp: Path, name: str, items: int) -> Path:
    path = tmp / name
    path.write_text("".join(f"{k}\tvalid\t\n" for k in range(1, items + 1)), encoding="utf-8")
    return path


def _merge(tmp: Path, key: Path, labels: Path, store: Path, judge: str = "ann") -> object:
    return run_cli("judge", "merge", "--key", key, "--labels", f"{judge}={labels}", "--store", store)


def case_judge_line_separators_in_a_caption_and_a_judge_keep_the_store_readable(world, tmp):
    store = tmp / "store.jsonl"
    flips = [("A red\u2028bus.", "A blue\u2028bus."), ("A cat\x85.", "Two cats\x85.")]
    accepted(_merge(tmp, _key(tmp, "k.json", flips), _labels(tmp, "l.tsv", 2), store, judge="ann\u2029bob"))
    outcome = run_cli("judge", "report", "--store", store)
    accepted(outcome)
    assert "2 flip(s), 1 judge(s)" in outcome.out


def case_judge_key_with_one_flip_under_two_items(world, tmp):
    flip = ("A red bus.", "A blue bus.")
    outcome = _merge(tmp, _key(tmp, "k.json", [flip, ("A cat.", "A dog."), flip]), _labels(tmp, "l.tsv", 3),
                     tmp / "store.jsonl")
    error(outcome, "k.json", "items 1 and 3 are the same flip")
    assert not (tmp / "store.jsonl").exists()


def case_judge_draw_over_an_existing_key(world, tmp):
    (tmp / "k.json").write_text("the only key", encoding="utf-8")
    error(run_cli("judge", "draw", world["data"], "--types", "color", "--n", "1", "--sheet", tmp / "s.md",
                  "--key", tmp / "k.json"), "--key", "k.json exists", "another --key")
    assert (tmp / "k.json").read_text(encoding="utf-8") == "the only key"


def case_judge_gzip_corrupt_store(world, tmp):
    import gzip

    data = gzip.compress(b'{"caption": "A cat.", "variant": "A dog."}\n' * 40, mtime=0)
    bad = tmp / "bad.jsonl.gz"
    bad.write_bytes(data[:15] + bytes(b ^ 0xFF for b in data[15:30]) + data[30:])
    error(_merge(tmp, _key(tmp, "k.json", [("A cat.", "A dog.")]), _labels(tmp, "l.tsv", 1), bad),
          "--store", "bad.jsonl.gz", "cannot read it as gzip-compressed")
    error(run_cli("judge", "draw", world["data"], "--types", "color", "--n", "1", "--exclude-judged", bad,
                  "--sheet", tmp / "s.md", "--key", tmp / "new.json"), "--exclude-judged", "bad.jsonl.gz")


def case_judge_outputs_that_are_no_regular_file(world, tmp):
    store = tmp / "store.jsonl"
    accepted(_merge(tmp, _key(tmp, "k.json", [("A cat.", "A dog.")]), _labels(tmp, "l.tsv", 1), store))
    error(run_cli("judge", "report", "--store", store, "--json", "/dev/full"), "--json /dev/full", "no space left")
    assert Path("/dev/full").is_char_device()
    (tmp / "file").write_text("x", encoding="utf-8")
    for option in ("--json", "--markdown"):
        error(run_cli("judge", "report", "--store", store, option, tmp / "file" / "out"), option, "is a file, not a folder")
    error(_merge(tmp, tmp / "k.json", tmp / "l.tsv", tmp / "file" / "s.jsonl"), "--store", "is a file, not a folder")


def case_judge_a_flip_drawn_as_two_types_counts_under_each(world, tmp):
    store, flips = tmp / "store.jsonl", [("A red bus.", "A blue bus.")]
    accepted(_merge(tmp, _key(tmp, "h.json", flips, "hard_color"), _labels(tmp, "l.tsv", 1), store))
    accepted(_merge(tmp, _key(tmp, "c.json", flips, "color"), tmp / "l.tsv", store, judge="bob"))
    accepted(run_cli("judge", "report", "--store", store, "--json", tmp / "r.json"))
    counts = json.loads((tmp / "r.json").read_text(encoding="utf-8"))
    assert counts["per_type"]["color"]["drawn"] == counts["per_type"]["hard_color"]["drawn"] == counts["all"]["drawn"] == 1


# --------------------------------------------------------------------------------------------
# audit (round 5): --lm-corpus and --scaling under the "not measurable" rule


def case_audit_lm_corpus_of_one_other_image_is_not_measurable(world, tmp):
    corpus = tmp / "corpus.json"
    corpus.write_text(json.dumps({"images": [{"id": 9001, "file_name": "x.jpg"}], "annotations": [
        {"id": k, "image_id": 9001, "caption": f"A green kite number {k} flies high."} for k in range(5)]}),
        encoding="utf-8")
    outcome = audit(write_pairs(tmp / "p.csv", flip_pairs(20)), "--lm-corpus", corpus, "--json", tmp / "a.json")
    record = _audit_json(outcome, tmp / "a.json")
    assert record["blocks"]["paper flips"]["corpus_trigram"] == {
        "PR": None, "interval": None, "not_measurable": "the corpus has 1 other image, fewer than 10"}
    assert "not measurable (the corpus has 1 other image, fewer than 10)" in outcome.out


def case_audit_json_to_a_full_device_or_under_a_file(world, tmp):
    pairs = write_pairs(tmp / "p.csv", flip_pairs(12))
    error(audit(pairs, "--json", "/dev/full"), "--json /dev/full", "no space left on its device")
    (tmp / "file").write_text("x", encoding="utf-8")
    outcome = audit(pairs, "--markdown", tmp / "file" / "a.md")
    error(outcome, "--markdown", "is a file, not a folder")
    assert "pairs over" not in outcome.out  # refused before the audit ran


def case_audit_scaling_subsets_under_ten_images(world, tmp):
    outcome = audit(write_pairs(tmp / "p.csv", flip_pairs(20)), "--scaling", "1,2,5")
    accepted(outcome)
    assert "0.500 | 0.500 | 0.500" not in outcome.out and "not measurable (1 image, fewer than 10)" in outcome.out


# --------------------------------------------------------------------------------------------
# the Python API (round 5): refused as the CLI refuses, before the work


def case_api_options_the_cli_refuses(world, tmp):
    from lgip_dataset.errors import DataError
    from lgip_metric import api
    from lgip_metric.models import ModelError

    for limit in (0, -5):
        with pytest.raises(DataError, match="limit= must be a whole number at least 1"):
            api.score(MODEL, tmp / "o", dataset=world["data"], limit=limit)
    with pytest.raises(DataError, match="validated= must be True or False, got 'no'"):
        api.evaluate_model(MODEL, tmp / "o", dataset=world["data"], validated="no")
    with pytest.raises(ModelError, match="model=None"):
        api.score(None, tmp / "o")
    with pytest.raises(DataError, match="write_report: give one Results"):
        api.write_report([], tmp / "r")
    assert not (tmp / "o").exists()


# --------------------------------------------------------------------------------------------
# the benchmark scripts (round 5; every script and argument: tests/test_benchmark_arguments.py)


def case_bench_scripts_refuse_bad_numbers(world, tmp):
    from helpers.scripts import run_script

    for script, args, says in (("bench_scoring.py", ["--naive-rows", "-3"], "--naive-rows"),
                               ("bench_metric.py", ["--bootstrap", "-1"], "--bootstrap"),
                               ("held_out_audit.py", ["--sizes", "12k", "--out", str(tmp / "x")], "'12k'"),
                               ("hard_coverage.py", ["--captions", "x.json", "--sample", "0"], "--sample")):
        code, _, err = run_script(script, *args)
        assert code == 2 and "Traceback" not in err and says in err, err


# --------------------------------------------------------------------------------------------
# the Space's functions, called as an API client would call them


@pytest.fixture(scope="module")
def space_functions():
    from helpers.space import TINY, import_space_app

    demo = import_space_app().build_demo(extra_models=[TINY])
    return {f.api_name: f.fn for f in demo.fns.values() if f.api_name}


def space_error(call: Callable[[], object], *needles: str) -> None:
    import gradio as gr

    with pytest.raises(gr.Error) as raised:
        call()
    for needle in needles:
        assert needle in str(raised.value), str(raised.value)


def case_space_probe_inputs(world, tmp, fns):
    from PIL import Image

    image = Image.new("RGB", (32, 24), "red")
    probe = fns["probe"]
    families = ["core", "hard"]
    space_error(lambda: probe(image, "A red \ud800 bus.", ["tiny-clip"], 0, families), "Caption refused",
                "not valid Unicode")
    space_error(lambda: probe(image, 42, ["tiny-clip"], 0, families), "Caption refused: got int")
    space_error(lambda: probe(np.zeros((24, 32, 3), dtype=np.uint8), "A red bus.", ["tiny-clip"], 0, families),
                "Image refused: got ndarray")
    space_error(lambda: probe(image, "A red bus.", ["tiny-clip"], True, families), "Seed refused: True")
    space_error(lambda: probe(None, "A red bus.", ["tiny-clip"], 0, families), "Upload an image")


def case_space_sample_picker_inputs(world, tmp, fns):
    for value in (None, 7, "nope", 1.5):
        space_error(lambda: fns["sample"](value), "Sample image refused")


def case_space_run_inputs(world, tmp, fns):
    run = fns["run"]
    hub = "Hub dataset (first N rows)"
    for rows in (float("inf"), 1.7, True, "10e9", float("nan")):
        space_error(lambda: run("tiny-clip", hub, "org/lgip", rows), "Rows refused")
    space_error(lambda: run("tiny-clip", "my laptop", "org/lgip", 10), "Data refused: 'my laptop'")
    space_error(lambda: run("tiny-clip", hub, 42, 10), "Dataset refused")


CASES = {name[len("case_"):]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}


def test_the_matrix_has_at_least_40_cases_on_every_surface():
    surfaces = {name.split("_")[0] for name in CASES}
    assert len(CASES) >= 40 and surfaces == {"build", "score", "evaluate", "report", "push", "analyze", "metric", "audit",
                                             "perturb", "space", "judge", "api", "bench"}


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input(name, world, tmp_path, request):
    case = CASES[name]
    if name.startswith("metric_"):
        case(world, tmp_path, request.getfixturevalue("metric"))
    elif name.startswith("space_"):
        case(world, tmp_path, request.getfixturevalue("space_functions"))
    else:
        case(world, tmp_path)
