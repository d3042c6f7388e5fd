"""Readers for COCO caption annotations: the official captions JSON and the Karpathy list format.

Both yield the same records: one :class:`ImageEntry` per image with its captions. Problems in the
input either raise :class:`~lgip_dataset.errors.DataError` naming the file and entry (malformed
files) or are counted in a :class:`~lgip_dataset.skips.SkipLog` (unusable rows), never dropped
silently.
"""
from __future__ import annotations

import json
import random
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from lgip_dataset.errors import DataError
from lgip_dataset.perturb import MAX_CAPTION_CHARS  # one limit for readers and the perturber
from lgip_dataset.skips import SkipLog

_DIGITS = re.compile(r"(\d+)\.\w+$")


@dataclass(frozen=True)
class Caption:
    caption_id: str
    text: str


@dataclass
class ImageEntry:
    image_id: int
    file_name: str
    width: int | None = None
    height: int | None = None
    license: str = ""
    license_id: int | None = None
    license_url: str = ""
    flickr_url: str = ""
    captions: list[Caption] = field(default_factory=list)


def normalise_caption(text: str) -> str:
    """NFC-normalise and collapse whitespace; COCO captions carry stray spaces and newlines."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def load_json(path: Path, what: str = "captions file",
              expected: str = "an official COCO captions file or a Karpathy-format list"):
    """The JSON document in ``path``; a DataError naming the file (and the line and column of a syntax
    error) says what to pass instead when it is missing, malformed or not UTF-8."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        raise DataError(f"{what} not found: {path}") from None
    except json.JSONDecodeError as err:
        raise DataError(
            f"{path}: malformed JSON at line {err.lineno}, column {err.colno}: {err.msg}; pass {expected}"
        ) from None
    except UnicodeDecodeError as err:
        raise DataError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None


def _add_caption(entry: ImageEntry, caption_id: str, raw, where: str, skips: SkipLog) -> None:
    if not isinstance(raw, str):
        skips.add("caption not a string", where, repr(raw)[:80])
        return
    text = normalise_caption(raw)
    if not text:
        skips.add("empty caption", where)
    elif len(text) > MAX_CAPTION_CHARS:
        skips.add(f"caption longer than {MAX_CAPTION_CHARS} characters", where, f"{len(text)} characters")
    else:
        entry.captions.append(Caption(caption_id, text))


def read_coco_captions(path: str | Path, skips: SkipLog) -> list[ImageEntry]:
    """Read an official COCO captions file (2014 or 2017): ``images``, ``annotations``, ``licenses``."""
    path = Path(path)
    data = load_json(path)
    if not isinstance(data, dict) or "images" not in data or "annotations" not in data:
        kind = type(data).__name__
        hint = " (a list: did you mean the Karpathy format? it is detected automatically)" if kind == "list" else ""
        raise DataError(f"{path}: expected an object with 'images' and 'annotations', got a {kind}{hint}")
    licenses = {lic.get("id"): lic for lic in data.get("licenses", []) if isinstance(lic, dict)}
    entries: dict[int, ImageEntry] = {}
    first_index: dict[int, int] = {}
    for index, image in enumerate(data["images"]):
        try:
            image_id = int(image["id"])
            lic = licenses.get(image.get("license"), {})
            if image_id in entries:
                _check_repeated_image(path, index, first_index[image_id], entries[image_id], image)
                continue
            first_index[image_id] = index
            entries[image_id] = ImageEntry(
                image_id=image_id,
                file_name=str(image["file_name"]),
                width=image.get("width"),
                height=image.get("height"),
                license=lic.get("name", ""),
                license_id=image.get("license"),
                license_url=lic.get("url", ""),
                flickr_url=image.get("flickr_url", "") or "",
            )
        except (KeyError, TypeError, ValueError) as err:
            raise DataError(f"{path}: images[{index}] lacks a valid 'id' or 'file_name' ({err!r})") from None
    annotations = data["annotations"]
    order = sorted(range(len(annotations)), key=lambda i: _annotation_key(annotations[i], path, i))
    seen: dict[int, int] = {}
    for index in order:
        ann = annotations[index]
        where = f"{path.name}: annotations[{index}] (id {ann['id']})"
        if int(ann["id"]) in seen:  # one caption id must name one caption: keep the first, count the rest
            skips.add("duplicate annotation id", where, f"id already used by annotations[{seen[int(ann['id'])]}]")
            continue
        seen[int(ann["id"])] = index
        entry = entries.get(int(ann["image_id"]))
        if entry is None:
            skips.add("caption without image entry", where, f"image_id {ann['image_id']}")
            continue
        _add_caption(entry, f"c{ann['id']}", ann.get("caption"), where, skips)
    return [entries[i] for i in sorted(entries)]


def _check_repeated_image(path: Path, index: int, first: int, entry: ImageEntry, image: dict) -> None:
    """A repeated ``images`` entry is harmless when it names the same file; else which one is meant?"""
    if str(image["file_name"]) != entry.file_name:
        raise DataError(
            f"{path}: images[{index}] repeats id {entry.image_id} of images[{first}] with a different file_name "
            f"({image['file_name']!r} vs {entry.file_name!r}); give each image its own id"
        )


def _annotation_key(ann, path: Path, index: int) -> tuple[int, int]:
    try:
        return int(ann["image_id"]), int(ann["id"])
    except (KeyError, TypeError, ValueError) as err:
        raise DataError(f"{path}: annotations[{index}] lacks a valid 'image_id' or 'id' ({err!r})") from None


def read_karpathy(path: str | Path, skips: SkipLog) -> list[ImageEntry]:
    """Read the Karpathy split in the ALBEF/BLIP list format ``[{"image": ..., "caption": [...]}]``."""
    path = Path(path)
    data = load_json(path)
    if not isinstance(data, list):
        raise DataError(f"{path}: expected a JSON list of {{'image', 'caption'}} objects, got a {type(data).__name__}")
    entries: dict[int, ImageEntry] = {}
    for index, item in enumerate(data):
        if not isinstance(item, dict) or "image" not in item or "caption" not in item:
            raise DataError(f"{path}: entry [{index}] needs 'image' and 'caption' keys")
        image_id = _karpathy_image_id(path, index, item)
        entry = entries.setdefault(image_id, ImageEntry(image_id=image_id, file_name=str(item["image"])))
        captions = item["caption"] if isinstance(item["caption"], list) else [item["caption"]]
        for raw in captions:
            n = len(entry.captions)
            _add_caption(entry, f"k{image_id}_{n}", raw, f"{path.name}: entry [{index}]", skips)
    return [entries[i] for i in sorted(entries)]


def _karpathy_image_id(path: Path, index: int, item: dict) -> int:
    """The entry's integer ``image_id`` (an int or a string of digits), else the digits of its file name."""
    image_id = item.get("image_id")
    if image_id is None:
        match = _DIGITS.search(str(item["image"]))
        if match is None:
            raise DataError(f"{path}: entry [{index}] has no 'image_id' and no numeric id in its file name "
                            f"{item['image']!r}; add an integer 'image_id'")
        return int(match.group(1))
    if isinstance(image_id, int) and not isinstance(image_id, bool):
        return image_id
    if isinstance(image_id, str) and image_id.isascii() and image_id.isdigit():
        return int(image_id)
    raise DataError(f"{path}: entry [{index}] has image_id {image_id!r}; an image_id must be an integer")


def read_captions(path: str | Path, skips: SkipLog) -> list[ImageEntry]:
    """Read either format, detected from the top-level JSON type."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"captions file not found: {path}")
    with open(path, "rb") as handle:
        head = handle.read(4096).lstrip()
    return read_karpathy(path, skips) if head.startswith(b"[") else read_coco_captions(path, skips)


def select_images(
    entries: list[ImageEntry],
    *,
    num_images: int | None,
    captions_per_image: int | None,
    seed: int,
    license_ids: set[int] | None = None,
    image_ids: set[int] | None = None,
    skips: SkipLog,
) -> list[ImageEntry]:
    """Seeded sample of ``num_images`` images with captions; keep the first N captions of each (all: None).

    ``license_ids`` and ``image_ids`` restrict the pool first (a subset chosen on purpose, not a
    skip). Images without any usable caption are counted as skipped. The sample depends only on the
    set of image ids and the seed, not on file order.
    """
    if captions_per_image is not None and captions_per_image < 1:
        raise DataError(f"--captions-per-image must be at least 1, got {captions_per_image}")
    pool = []
    for entry in sorted(entries, key=lambda e: e.image_id):
        if license_ids is not None and entry.license_id not in license_ids:
            continue
        if image_ids is not None and entry.image_id not in image_ids:
            continue
        if not entry.captions:
            skips.add("image without usable captions", f"image_id {entry.image_id}")
            continue
        pool.append(entry)
    if image_ids is not None:
        unknown = image_ids - {e.image_id for e in entries}
        if unknown:
            raise DataError(f"--image-ids names {len(unknown)} image(s) absent from the captions file, e.g. {min(unknown)}")
    if num_images is not None:
        if num_images < 1:
            raise DataError(f"--num-images must be at least 1, got {num_images}")
        if num_images > len(pool):
            raise DataError(f"--num-images {num_images} but only {len(pool)} image(s) with usable captions are "
                            f"available; pass --num-images {len(pool)} or leave it out to take all")
        if num_images < len(pool):
            pool = sorted(random.Random(seed).sample(pool, num_images), key=lambda e: e.image_id)
    for entry in pool:
        extra = entry.captions[captions_per_image:] if captions_per_image is not None else []
        if extra:
            skips.add("caption beyond --captions-per-image (cap)", f"image_id {entry.image_id}", count=len(extra))
        entry.captions = entry.captions[:captions_per_image]
    return pool
