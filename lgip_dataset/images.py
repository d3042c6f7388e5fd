"""Decode images safely (bounded size, fully decodable) and validate image files for a build.

``decode_image`` is the one place image bytes are opened: builds, the scoring engine's workers,
reports and the Space all go through it.
"""
from __future__ import annotations

import io
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from PIL import Image

from lgip_dataset.errors import DataError

MAX_PIXELS = 40_000_000  # COCO images are at most 640 px a side; anything this big is refused
MAX_FILE_BYTES = 50 * 1024 * 1024


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
            return image.convert("RGB")
    except Image.DecompressionBombError as err:
        raise ImageError(f"image refused as a decompression bomb: {err}") from None
    except (OSError, SyntaxError, ValueError) as err:
        raise ImageError(f"corrupt or unreadable image: {err}") from None


def check_image(path: Path) -> ImageCheck:
    """Read ``path`` and decode it completely; never raises for bad files, returns the reason."""
    if not path.is_file():
        return ImageCheck(path, error="image file missing")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        return ImageCheck(path, error=f"image file larger than {MAX_FILE_BYTES // 2**20} MiB ({size:,} bytes)")
    data = path.read_bytes()
    try:
        image = decode_image(data)
    except ImageError as err:
        return ImageCheck(path, error=str(err))
    return ImageCheck(path, data=data, width=image.width, height=image.height)


def check_images(paths: Iterable[Path], workers: int = 4) -> Iterator[ImageCheck]:
    """:func:`check_image` over many files in a thread pool (PIL decodes without the GIL), in order."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(check_image, paths)
