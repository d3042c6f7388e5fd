"""Input guards: every image upload, caption and Hub source is checked before any work.

Each check raises ``gr.Error`` with a message that says what was wrong and what is accepted, so
the browser and API clients see a clear sentence, never a traceback.
"""
from __future__ import annotations

import re
from pathlib import Path

import gradio as gr
from PIL import Image

from lgip_dataset.errors import DataError
from lgip_dataset.files.images import MAX_PIXELS, ImageError, decode_image
from lgip_dataset.perturb import Perturber
from lgip_dataset.sources.coco import normalise_caption

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


def check_image(image) -> Image.Image:
    """The image the Probe tab scores: a PIL image (what the guarded upload passes on); ``gr.Error`` for
    none or anything else (an API client's array, a path)."""
    if image is None:
        raise gr.Error("Upload an image or pick a sample image first.")
    if not isinstance(image, Image.Image):
        raise gr.Error(f"Image refused: got {type(image).__name__}; upload a JPEG, PNG or WebP file.")
    return image


def check_caption(caption: str | None) -> str:
    """The caption cleaned as a build cleans it (:func:`lgip_dataset.sources.coco.normalise_caption`: no zero-width
    or bidi-override characters); ``gr.Error`` when it is not text, not valid Unicode, empty or longer
    than the Space's limit."""
    if caption is not None and not isinstance(caption, str):
        raise gr.Error(f"Caption refused: got {type(caption).__name__}; give the caption as text.")
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
    value = _whole_number(seed, 0, 2**32 - 1)
    if value is None:
        raise gr.Error(f"Seed refused: {seed!r}; give a whole number from 0 to {2**32 - 1:,}.")
    return value


def _whole_number(value, low: int, high: int) -> int | None:
    """``value`` (a number or its text) as a whole number from ``low`` to ``high``; None for anything else
    (True, 1.7, "abc", NaN, infinity)."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return int(number) if number.is_integer() and low <= number <= high else None


def check_sample_id(value, ids) -> int:
    """``value`` (a number or its text) as the id of one of the sample's images ``ids``; ``gr.Error`` else."""
    image_id = _whole_number(value, 0, 2**63 - 1)
    if image_id not in ids:
        raise gr.Error(f"Sample image refused: {value!r} is not an image of the embedded sample; pick one from the list.")
    return image_id


def check_choice(value, choices, what: str):
    """``value`` when it is one of ``choices`` (a radio's or a picker's); ``gr.Error`` naming ``what`` else."""
    if value is None or isinstance(value, bool) or value not in choices:
        raise gr.Error(f"{what} refused: {value!r} is not one of the choices.")
    return value


def check_hub_source(dataset_id: str, rows) -> tuple[str, int]:
    """A Hub dataset id and a row count within the Space's limits."""
    if dataset_id is not None and not isinstance(dataset_id, str):
        raise gr.Error(f"Dataset refused: got {type(dataset_id).__name__}; give a Hub dataset id like 'org/lgip'.")
    dataset_id = (dataset_id or "").strip()
    parts = dataset_id.split("/")
    if not HUB_ID.match(dataset_id) or any(p[:1] in ".-" or p[-1:] in ".-" or ".." in p for p in parts):
        raise gr.Error(f"Dataset refused: {dataset_id!r} is not a Hub dataset id like 'org/lgip'.")
    if Path(dataset_id).exists():
        raise gr.Error(f"Dataset refused: {dataset_id!r} names a folder of the server; the Run tab reads Hub "
                       "datasets, or the embedded sample (choose it above).")
    count = _whole_number(rows, 1, MAX_HUB_ROWS)
    if count is None:
        raise gr.Error(f"Rows refused: {rows!r}; choose a whole number of rows from 1 to {MAX_HUB_ROWS:,}.")
    return dataset_id, count
