"""Decode images safely (bounded size, fully decodable) and validate image files for a build.

``decode_image`` is the one place image bytes are opened: builds, the scoring engine's workers,
reports and the Space all go through it. Images of a mode Pillow does not convert into 8-bit RGB
the way a viewer shows them (16- and 32-bit integer and float grayscale: PIL's own
``convert("RGB")`` clips them, so a mid-grey 16-bit PNG comes out white and a 0..1 float TIFF
black) are rendered by :func:`rendered`; :func:`check_image` hands a build that rendering to store
(an 8-bit grayscale PNG), so ``load_dataset``, the Hub viewer and a user's own loop see the pixels
the model scored. So is an image whose EXIF orientation turns it (:func:`upright`, as browsers show
it; stored as a PNG of the turned pixels). Every other image is stored byte for byte.

Only the :data:`FORMATS` are opened (no EPS reaching Ghostscript, no exotic decoders), and an image
more than :data:`MAX_ASPECT` times longer than wide is refused from its header: resizing its short
side to a model's input would blow the long one up past any memory (a 161-byte 1x20000 PNG took
4.9 GB).
"""
from __future__ import annotations

import io
import os
import re
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np
from PIL import Image, ImageOps

from lgip_dataset.errors import DataError

MAX_PIXELS = 40_000_000  # COCO images are at most 640 px a side; anything this big is refused
MAX_ASPECT = 50  # long side / short side: a model resizes the short side (224-448 px) and the long one with it
FORMATS = ("JPEG", "PNG", "WEBP", "GIF", "BMP", "TIFF")  # the only ones opened (a camera's MPO opens as JPEG)
ORIENTATION = 0x0112  # the EXIF tag that says how to turn the stored pixels upright
MAX_FILE_BYTES = 50 * 1024 * 1024
WIDE_MODES = ("I;16", "I;16B", "I;16L", "I;16N", "I", "F")  # 16/32-bit integer and float grayscale
_16_BIT = 65535
_32_BIT = 2**31 - 1  # mode "I" holds signed 32-bit integers
_ADDRESS = re.compile(r" ?<[^<>]* at 0x[0-9a-fA-F]+>")  # "<_io.BytesIO object at 0x7f..>": differs per run


@dataclass(frozen=True)
class ImageCheck:
    """The outcome for one file: its bytes and size, or the reason it cannot be used."""

    path: Path
    data: bytes | None = None  # the bytes to store: the file's own, or its 8-bit rendering
    width: int = 0
    height: int = 0
    error: str = ""
    converted_from: str | None = None  # "<format> <mode>" of a file stored as its rendering, else None


class ImageError(DataError):
    """Image bytes that cannot be used; the message is the reason (recorded, counted or shown)."""


def decode_image(data: bytes) -> Image.Image:
    """Decode ``data`` completely into an RGB image (:func:`rendered`), or raise :class:`ImageError` with
    the reason.

    The header is read first: a size over ``MAX_PIXELS`` (stricter than PIL's own bomb limits) is
    refused before any pixel is decoded.
    """
    with _opened(data) as image:
        return _decoded(lambda: rendered(upright(image)).convert("RGB"))


def upright(image: Image.Image) -> Image.Image:
    """``image`` turned as its EXIF orientation says (how browsers and the Hub viewer show it), or itself."""
    return ImageOps.exif_transpose(image) if _orientation(image) not in (None, 1) else image


def _orientation(image: Image.Image) -> int | None:
    return image.getexif().get(ORIENTATION)


def rendered(image: Image.Image) -> Image.Image:
    """The 8-bit image ``image`` is scored and stored as: wide grayscale (:data:`WIDE_MODES`) as 8-bit
    grayscale ("L"), every other mode unchanged (its ``convert("RGB")`` is already right).

    Modes "I;16*" are scaled from 0..65535; "I" and "F" by their largest value: float data up to 1
    from 0..1, data up to 255 as it is, up to 65535 from 0..65535, larger from 0..2**31-1. Negative
    values and NaN are 0.
    """
    if image.mode not in WIDE_MODES:
        return image
    wide = np.nan_to_num(np.asarray(image, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    high = float(wide.max()) if wide.size else 0.0
    if image.mode.startswith("I;16") or 255 < high <= _16_BIT:
        scale = 255 / _16_BIT
    elif high > _16_BIT:
        scale = 255 / _32_BIT
    elif image.mode == "F" and high <= 1:
        scale = 255.0
    else:
        scale = 1.0
    gray = np.clip(np.rint(wide * scale), 0, 255).astype(np.uint8)
    return Image.fromarray(gray, mode="L")


@contextmanager
def _opened(data: bytes) -> Iterator[Image.Image]:
    """``data`` opened (header only) with its size checked; failures raise :class:`ImageError`."""
    if not data:
        raise ImageError("no image bytes")
    Image.init()  # registers every plugin, so each of FORMATS can be asked for by name
    with _decoded(lambda: Image.open(io.BytesIO(data), formats=FORMATS)) as image:
        width, height = image.size
        if width * height > MAX_PIXELS:
            raise ImageError(f"image too large: {width}x{height} pixels (limit {MAX_PIXELS:,})")
        if max(width, height) > MAX_ASPECT * max(1, min(width, height)):
            raise ImageError(f"image too thin: {width}x{height} pixels (a side over {MAX_ASPECT} times the other; a "
                             "model resizes the short side and the long one with it, past any memory)")
        yield image


def _decoded(decode):
    """``decode()``, with Pillow's errors turned into :class:`ImageError` reasons."""
    try:
        return decode()
    except Image.DecompressionBombError as err:
        raise ImageError(f"image refused as a decompression bomb: {err}") from None
    except Image.UnidentifiedImageError:
        raise ImageError("corrupt or unreadable image: not a recognised image format (accepted: JPEG, PNG, WebP, "
                         "GIF, BMP, TIFF)") from None
    except (OSError, SyntaxError, ValueError) as err:
        raise ImageError(f"corrupt or unreadable image: {_ADDRESS.sub('', str(err))}") from None


def stored_image(data: bytes) -> tuple[bytes, Image.Image, str | None]:
    """What a build stores for the image file ``data``: its bytes (the file's own, or a PNG of its
    :func:`rendered` 8-bit image), the decoded RGB image, and ``"<format> <mode>"`` when converted."""
    with _opened(data) as image:
        turn = _orientation(image)
        kind = f"{image.format} {image.mode}" + (f" (EXIF orientation {turn})" if turn not in (None, 1) else "")
        shown = _decoded(lambda: rendered(upright(image)))
        rgb = _decoded(lambda: shown.convert("RGB"))
        if image.mode not in WIDE_MODES and turn in (None, 1):
            return data, rgb, None
    buffer = io.BytesIO()
    shown.save(buffer, format="PNG")
    return buffer.getvalue(), rgb, kind


def image_path_inside(images_dir: Path, file_name: str) -> Path | None:
    """``images_dir / file_name``, or None when the name leaves ``images_dir`` (an absolute path or ``..``)."""
    name = os.path.normpath(file_name)
    if os.path.isabs(name) or name in (".", "..") or name.startswith(".." + os.sep):
        return None
    return images_dir / name


def check_image(path: Path) -> ImageCheck:
    """Read ``path`` and decode it completely; never raises for bad files, returns the reason."""
    if not path.is_file():
        return ImageCheck(path, error="image file missing")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        return ImageCheck(path, error=f"image file larger than {MAX_FILE_BYTES // 2**20} MiB ({size:,} bytes)")
    try:
        data = path.read_bytes()
    except OSError as err:
        return ImageCheck(path, error=f"image file unreadable ({err.strerror or type(err).__name__})")
    try:
        stored, image, converted_from = stored_image(data)
    except ImageError as err:
        return ImageCheck(path, error=str(err))
    return ImageCheck(path, data=stored, width=image.width, height=image.height, converted_from=converted_from)


def check_images(paths: Iterable[Path], workers: int = 4) -> Iterator[ImageCheck]:
    """:func:`check_image` over many files in a thread pool (PIL decodes without the GIL), in order."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(check_image, paths)
