"""Images stored as users read them: a build stores an image of a mode PIL does not convert into 8-bit RGB the
way a viewer shows it (16/32-bit integer and float grayscale) as its 8-bit rendering, so ``load_dataset``'s
``.convert("RGB")`` gives the pixels the model was given; every other file is stored byte for byte."""
from __future__ import annotations

import io
import json

import datasets
import numpy as np
import pytest
from PIL import Image

from lgip_dataset.files.images import WIDE_MODES, decode_image, rendered, stored_image
from lgip_metric.scoring.image_data import cell_image
from helpers.reliability import coco_annotations, jpeg, run_cli, write_coco

RAMP = np.linspace(0.0, 1.0, 24 * 16).reshape(16, 24)  # every pixel different: a shift or a clip shows


def encoded(array: np.ndarray, fmt: str, mode: str | None = None) -> bytes:
    buffer = io.BytesIO()
    (Image.fromarray(array, mode) if mode else Image.fromarray(array)).save(buffer, format=fmt)
    return buffer.getvalue()


WIDE = {  # file name -> (bytes, the mode PIL opens it in, the 8-bit values a viewer shows)
    "gray16.png": (encoded((RAMP * 65535).astype(np.uint16), "PNG"), "I;16", RAMP * 255),
    "gray16.tif": (encoded((RAMP * 65535).astype(np.uint16), "TIFF"), "I;16", RAMP * 255),
    "int32.tif": (encoded((RAMP * (2**31 - 1)).astype(np.int32), "TIFF"), "I", RAMP * 255),
    "int32-16bit.tif": (encoded((RAMP * 65535).astype(np.int32), "TIFF"), "I", RAMP * 255),
    "float-unit.tif": (encoded(RAMP.astype(np.float32), "TIFF"), "F", RAMP * 255),
    "float-bytes.tif": (encoded((RAMP * 255).astype(np.float32), "TIFF"), "F", RAMP * 255),
}
PLAIN = {  # stored as the file is
    "rgb.jpg": jpeg("teal", (24, 16)),
    "gray8.png": encoded((RAMP * 255).astype(np.uint8), "PNG"),
    "palette.png": (lambda im: (lambda b: (im.save(b, format="PNG"), b.getvalue())[1])(io.BytesIO()))(
        Image.fromarray((RAMP * 255).astype(np.uint8)).convert("P")),
    "rgba.png": encoded(np.dstack([(RAMP * 255).astype(np.uint8)] * 4), "PNG"),
}


@pytest.mark.parametrize("name", sorted(WIDE))
def test_wide_modes_render_as_a_viewer_shows_them(name):
    data, mode, shown = WIDE[name]
    with Image.open(io.BytesIO(data)) as image:
        assert image.mode == mode and image.mode in WIDE_MODES
        assert np.abs(np.asarray(rendered(image), dtype=float) - shown).max() <= 1.0
    stored, rgb, converted_from = stored_image(data)
    assert converted_from == f"{'PNG' if name.endswith('png') else 'TIFF'} {mode}"
    with Image.open(io.BytesIO(stored)) as image:
        assert image.format == "PNG" and image.mode == "L"
        assert np.array_equal(np.asarray(image.convert("RGB")), np.asarray(rgb))
    assert np.array_equal(np.asarray(decode_image(data)), np.asarray(rgb))


def test_nan_and_negative_values_render_black():
    values = np.array([[np.nan, -3.0], [0.5, 1.0]], dtype=np.float32)
    with Image.open(io.BytesIO(encoded(values, "TIFF"))) as image:
        assert np.asarray(rendered(image)).tolist() == [[0, 0], [128, 255]]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("rendering")
    files = {name: data for name, (data, _, _) in WIDE.items()} | PLAIN
    names = sorted(files)
    images = [{"id": i, "file_name": name, "license": 4} for i, name in enumerate(names, 1)]
    captions, folder = write_coco(root / "coco", images=images, annotations=coco_annotations(len(names)), files=files)
    outcome = run_cli("build", "--captions", captions, "--images", folder, "--out", root / "data", "--quiet")
    assert outcome.code == 0, outcome.text[-2000:]
    return root / "data", {i: name for i, name in enumerate(names, 1)}, files, outcome


def test_load_dataset_shows_the_pixels_the_model_was_given(built):
    data, names, files, _ = built
    rows = datasets.load_dataset(str(data), "images", split="test")
    assert len(rows) == len(files)
    for row in rows:
        name = names[row["image_id"]]
        given = np.asarray(decode_image(files[name]))  # what the scorer gives the model's transform
        assert np.array_equal(np.asarray(row["image"].convert("RGB")), given), name
        raw = rows.cast_column("image", datasets.Image(decode=False))[names_index(rows, row["image_id"])]["image"]
        assert np.array_equal(np.asarray(cell_image(raw)), given), name  # the engine's own reader
        if name in WIDE:
            assert row["converted_from"] == f"{'PNG' if name.endswith('png') else 'TIFF'} {WIDE[name][1]}"
        else:
            assert row["converted_from"] is None and raw["bytes"] == files[name]  # byte for byte


def names_index(rows, image_id: int) -> int:
    return rows["image_id"].index(image_id)


def test_the_build_counts_and_records_each_conversion(built):
    data, _, files, outcome = built
    info = json.loads((data / "lgip_build.json").read_text(encoding="utf-8"))
    (reason,) = [r for r in info["cleaned"] if "8-bit rendering" in r]
    assert info["cleaned"][reason]["count"] == len(WIDE) and info["counts"]["images"] == len(files)
    assert f"cleaned {len(WIDE)} × {reason}" in outcome.out
    card = (data / "README.md").read_text(encoding="utf-8")
    assert reason in card and "converted_from" in card
