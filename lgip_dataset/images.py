"""Decode images safely (bounded size, fully decodable) and validate image files for a build.

``decode_image`` is the one place image bytes are opened: builds, the scoring engine's workers,
reports and the Space all go through it.
"""
from __future__ import annotations

import io
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np
from PIL import Image

from lgip_dataset.errors import DataError

MAX_PIXELS = 40_000_000  # COCO images are at most 640 px a side; anything this big is refused
MAX_FILE_BYTES = 50 * 1024 * 1024
_WIDE_GRAY = ("I", "I;16", "I;16B", "I;16L", "I;16N")  # integer grayscale modes of 16-bit PNGs and TIFFs
_ADDRESS = re.compile(r" ?<[^<>]* at 0x[0-9a-fA-F]+>")  # "<_io.BytesIO object at 0x7f..>": differs per run


@dataclass(frozen=True)
class ImageCheck:
    """The outcome for one file: its bytes and size, or the reason it cannot be used."""

    path: Path
    data: bytes | None = None
    width: int = 0
    height: int = 0
    error: str = ""


class ImageError(DataError):
    """Image bytes that cannot be used; the message is the reason (recorded, counted or shown)."""


def decode_image(data: bytes) -> Image.Image:
    """Decode ``data`` completely into an RGB image, or raise :class:`ImageError` with the reason.

    The header is read first: a size over ``MAX_PIXELS`` (stricter than PIL's own bomb limits) is
    refused before any pixel is decoded.
    """
    if not data:
        raise ImageError("no image bytes")
    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
            if width * height > MAX_PIXELS:
                raise ImageError(f"image too large: {width}x{height} pixels (limit {MAX_PIXELS:,})")
            return _to_rgb(image)
    except Image.DecompressionBombError as err:
        raise ImageError(f"image refused as a decompression bomb: {err}") from None
    except Image.UnidentifiedImageError:
        raise ImageError("corrupt or unreadable image: not a recognised image format") from None
    except (OSError, SyntaxError, ValueError) as err:
        raise ImageError(f"corrupt or unreadable image: {_ADDRESS.sub('', str(err))}") from None


def _to_rgb(image: Image.Image) -> Image.Image:
    """RGB of ``image``; 16/32-bit integer grayscale is rescaled from 0..65535 (PIL's own conversion clips
    it to 255, so a 16-bit PNG would come out almost white)."""
    if image.mode in _WIDE_GRAY:
        wide = np.asarray(image, dtype=np.float64)
        gray = np.clip(np.rint(wide * (255 / 65535)), 0, 255).astype(np.uint8)
        return Image.fromarray(gray, mode="L").convert("RGB")
    return image.convert("RGB")


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
        image = decode_image(data)
    except ImageError as err:
        return ImageCheck(path, error=str(err))
    return ImageCheck(path, data=data, width=image.width, height=image.height)


def check_images(paths: Iterable[Path], workers: int = 4) -> Iterator[ImageCheck]:
    """:func:`check_image` over many files in a thread pool (PIL decodes without the GIL), in order."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(check_image, paths)
