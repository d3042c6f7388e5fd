"""Input guards: every image upload, caption and Hub source is checked before any work.

Each check raises ``gr.Error`` with a message that says what was wrong and what is accepted, so
the browser and API clients see a clear sentence, never a traceback.
"""
from __future__ import annotations

import re
from pathlib import Path

import gradio as gr
from PIL import Image

from lgip_dataset.coco import normalise_caption
from lgip_dataset.errors import DataError
from lgip_dataset.images import MAX_PIXELS, ImageError, decode_image
from lgip_dataset.perturb import Perturber

MAX_UPLOAD_BYTES = 10 * 1024 * 1024
MAX_CAPTION_CHARS = 300  # CLIP-family text towers read 77 tokens; longer captions would be truncated
MAX_HUB_ROWS = 2000
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,96}$")


def load_image(path: str | Path) -> Image.Image:
    """The uploaded file as an RGB image, or ``gr.Error`` when it is not a bounded raster image."""
    path = Path(path)
    name = path.name
    size = path.stat().st_size if path.is_file() else 0
    if size > MAX_UPLOAD_BYTES:
        raise gr.Error(f"Image refused: {name} is {size / 2**20:.1f} MB; the limit is {MAX_UPLOAD_BYTES // 2**20} MB.")
    try:
        return decode_image(path.read_bytes() if path.is_file() else b"")
    except ImageError as err:
        reason = re.sub(r"\s*<[^>]* object at 0x[0-9a-f]+>", "", str(err)).rstrip(".")  # no PIL buffer repr
        raise gr.Error(
            f"Image refused: {name}: {reason}. Upload a JPEG, PNG or WebP photo of at most "
            f"{MAX_UPLOAD_BYTES // 2**20} MB and {MAX_PIXELS / 1e6:.0f} megapixels."
        ) from None


def guard_uploads(image: gr.Image) -> gr.Image:
    """Make ``image`` check each upload (file size, decodability, pixel count) before Gradio opens it.

    Gradio's own preprocessing would open a 20,000 x 20,000 image or a text file with PIL and fail
    with a generic error; the guarded component refuses both with a clear message and passes an RGB
    ``PIL.Image`` on. (A hook on the instance, not a subclass: Gradio writes a ``.pyi`` stub beside
    every module that defines a component class.)
    """

    def preprocess(payload):
        if payload is None:
            return None
        if payload.path is None:
            raise gr.Error("Image refused: send the image as an uploaded file.")
        return load_image(payload.path)

    image.preprocess = preprocess
    return image


def check_caption(caption: str | None) -> str:
    """The caption cleaned as a build cleans it (:func:`lgip_dataset.coco.normalise_caption`: no zero-width
    or bidi-override characters); ``gr.Error`` when it is empty or longer than the Space's limit."""
    caption = normalise_caption(caption) if isinstance(caption, str) else caption
    if caption is not None and len(caption.strip()) > MAX_CAPTION_CHARS:
        raise gr.Error(
            f"Caption refused: it is {len(caption.strip()):,} characters long; the limit is "
            f"{MAX_CAPTION_CHARS} (the models read about 77 tokens)."
        )
    try:
        return Perturber.validate_caption(caption if caption is not None else "")
    except DataError as err:
        raise gr.Error(f"Caption refused: {err}.") from None


def check_seed(seed) -> int:
    """The seed as a whole number from 0 to 2**32 - 1 (empty: 0); ``gr.Error`` for anything else ("abc", 1.5)."""
    if seed is None or (isinstance(seed, str) and not seed.strip()):
        return 0
    try:
        value = float(seed)
    except (TypeError, ValueError):
        value = float("nan")
    if not (value.is_integer() and 0 <= value < 2**32):
        raise gr.Error(f"Seed refused: {seed!r}; give a whole number from 0 to {2**32 - 1:,}.")
    return int(value)


def check_hub_source(dataset_id: str, rows) -> tuple[str, int]:
    """A Hub dataset id and a row count within the Space's limits."""
    dataset_id = (dataset_id or "").strip()
    parts = dataset_id.split("/")
    if not HUB_ID.match(dataset_id) or any(p[:1] in ".-" or p[-1:] in ".-" or ".." in p for p in parts):
        raise gr.Error(f"Dataset refused: {dataset_id!r} is not a Hub dataset id like 'org/lgip'.")
    if Path(dataset_id).exists():
        raise gr.Error(f"Dataset refused: {dataset_id!r} names a folder of the server; the Run tab reads Hub "
                       "datasets, or the embedded sample (choose it above).")
    try:
        rows = int(rows)
    except (TypeError, ValueError):
        raise gr.Error(f"Rows refused: {rows!r} is not a whole number.") from None
    if not 1 <= rows <= MAX_HUB_ROWS:
        raise gr.Error(f"Rows refused: choose between 1 and {MAX_HUB_ROWS:,} rows, not {rows:,}.")
    return dataset_id, rows
