"""Readers for COCO caption annotations: the official captions JSON and the Karpathy list format.

Both yield the same records: one :class:`ImageEntry` per image with its captions. Problems in the
input either raise :class:`~lgip_dataset.errors.DataError` naming the file and entry (malformed
files) or are counted in a :class:`~lgip_dataset.sources.skips.SkipLog` (unusable rows), never dropped
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
from lgip_dataset.perturb.perturber import valid_unicode
from lgip_dataset.sources.skips import SkipLog

_DIGITS = re.compile(r"(\d+)\.\w+$")


@dataclass(frozen=True)
class Caption:
    caption_id: str
    text: str  # as stored: :func:`normalise_caption` of the source's text
    source: str | None = None  # the source's text, where cleaning changed more than its whitespace


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


ZWJ = "\u200d"
_EMOJI_MODIFIERS = {"\ufe0f", *map(chr, range(0x1F3FB, 0x1F400))}  # emoji presentation selector, skin tones
FORMAT_REMOVED = "Unicode format or control character removed"
NFC_CHANGED = "text changed by Unicode NFC normalisation"


def clean_caption(text: str) -> tuple[str, list[str]]:
    """The caption as a build stores it, and what that changed beyond its whitespace (:data:`NFC_CHANGED`,
    :data:`FORMAT_REMOVED`: the reasons a build counts): NFC, without Unicode format or control characters (a
    zero-width space, a right-to-left override, ...; :func:`_is_removed`), whitespace collapsed to single
    spaces (COCO captions carry stray spaces and newlines)."""
    nfc = unicodedata.normalize("NFC", text)
    kept = [c for i, c in enumerate(nfc) if not _is_removed(nfc, i)]
    reasons = [reason for reason, changed in ((NFC_CHANGED, nfc != text), (FORMAT_REMOVED, len(kept) < len(nfc)))
               if changed]
    return " ".join("".join(kept).split()), reasons


def normalise_caption(text: str) -> str:
    """The caption as a build stores it (:func:`clean_caption`)."""
    return clean_caption(text)[0]


def caption_cleanings(text: str) -> list[str]:
    """What :func:`normalise_caption` changes in ``text`` beyond its whitespace (:func:`clean_caption`)."""
    return clean_caption(text)[1]


def _is_removed(text: str, i: int) -> bool:
    """Whether ``text[i]`` is a format (Cf) or control (Cc) character that is not whitespace, other than a
    zero-width joiner between two emoji (a "family" or "woman technologist" sequence)."""
    char = text[i]
    if char.isspace() or unicodedata.category(char) not in ("Cf", "Cc"):
        return False
    if char != ZWJ:
        return True
    before = text[:i].rstrip("".join(_EMOJI_MODIFIERS))
    return not (before and _is_emoji(before[-1]) and i + 1 < len(text) and _is_emoji(text[i + 1]))


def _is_emoji(char: str) -> bool:
    return unicodedata.category(char) == "So" and ord(char) >= 0x2000


INVALID_UNICODE = "caption not valid Unicode (an unpaired surrogate, which no UTF-8 file can hold)"


def kept_caption(caption_id: str, raw: str, cleaning: tuple[str, list[str]], where: str,
                 cleaned: SkipLog | None) -> Caption:
    """The :class:`Caption` of the source text ``raw`` whose :func:`clean_caption` is ``cleaning``: ``raw`` is
    kept where cleaning changed more than its whitespace, and what it changed is counted in ``cleaned``
    (``where`` names the row)."""
    text, reasons = cleaning
    for reason in reasons if cleaned is not None else ():
        cleaned.add(reason, where, ascii(raw)[:120])
    return Caption(caption_id, text, raw if reasons else None)


MAX_ID = 2**63 - 1  # ids are stored as int64


def whole_id(value, where: str, what: str = "id") -> int:
    """``value`` as an id: a JSON integer (not a boolean) from 0 to 2**63 - 1, or a string of the ASCII digits
    0-9; DataError naming ``where`` for anything else (139.7, true, "+5", " 12", non-ASCII digits, Infinity)."""
    digits = isinstance(value, str) and value.isascii() and value.isdigit()
    if not (digits or (isinstance(value, int) and not isinstance(value, bool))) or not 0 <= int(value) <= MAX_ID:
        raise DataError(f"{where}: {what} {value!r} is not a whole number from 0 to 2**63 - 1; give each {what} as an "
                        "integer (or a string of the digits 0-9)")
    return int(value)


def load_json(path: Path, what: str = "captions file",
              expected: str = "an official COCO captions file or a Karpathy-format list"):
    """The JSON document in ``path``; a DataError naming the file (and the line and column of a syntax
    error) says what to pass instead when it is missing, malformed or not UTF-8."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        raise DataError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise DataError(f"{path}: a folder, not a {what}; pass {expected}") from None
    except PermissionError:
        raise DataError(f"{path}: the {what} cannot be read (permission denied)") from None
    except RecursionError:
        raise DataError(f"{path}: JSON nested too deeply to be {expected}") from None
    except json.JSONDecodeError as err:
        raise DataError(
            f"{path}: malformed JSON at line {err.lineno}, column {err.colno}: {err.msg}; pass {expected}"
        ) from None
    except UnicodeDecodeError as err:
        raise DataError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None


def add_caption(entry: ImageEntry, caption_id: str, raw, where: str, skips: SkipLog, cleaned: SkipLog | None) -> None:
    """Add one raw caption to ``entry``, cleaned (what cleaning changed counted in ``cleaned``), or count the skip
    in ``skips`` at ``where``: every reader of captions takes them through here."""
    if not isinstance(raw, str):
        skips.add("caption not a string", where, repr(raw)[:80])
        return
    if not valid_unicode(raw):
        skips.add(INVALID_UNICODE, where, ascii(raw)[:80])
        return
    cleaning = clean_caption(raw)
    text = cleaning[0]
    if not text:
        skips.add("empty caption", where)
    elif len(text) > MAX_CAPTION_CHARS:
        skips.add(f"caption longer than {MAX_CAPTION_CHARS} characters", where, f"{len(text)} characters")
    else:
        entry.captions.append(kept_caption(caption_id, raw, cleaning, where, cleaned))


def read_coco_captions(path: str | Path, skips: SkipLog, cleaned: SkipLog | None = None) -> list[ImageEntry]:
    """Read an official COCO captions file (2014 or 2017): ``images``, ``annotations``, ``licenses``;
    unusable captions are counted in ``skips``, the cleanings of the kept ones in ``cleaned``."""
    path = Path(path)
    data = load_json(path)
    if not isinstance(data, dict) or "images" not in data or "annotations" not in data:
        kind = type(data).__name__
        hint = " (a list: did you mean the Karpathy format? it is detected automatically)" if kind == "list" else ""
        raise DataError(f"{path}: expected an object with 'images' and 'annotations', got a {kind}{hint}")
    for key in ("images", "annotations"):
        if not isinstance(data[key], list):
            raise DataError(f"{path}: {key!r} is a {type(data[key]).__name__}, not a list of objects; pass an official "
                            "COCO captions file")
    licenses = data.get("licenses", [])
    licenses = {lic.get("id"): lic for lic in (licenses if isinstance(licenses, list) else []) if isinstance(lic, dict)}
    entries: dict[int, ImageEntry] = {}
    first_index: dict[int, int] = {}
    for index, image in enumerate(data["images"]):
        if not isinstance(image, dict):
            raise DataError(f"{path}: images[{index}] is a {type(image).__name__}, not an object with 'id' and 'file_name'")
        image_id = whole_id(image.get("id"), f"{path}: images[{index}]")
        try:
            lic = licenses.get(image.get("license"), {})
            if image_id in entries:
                _check_repeated_image(path, index, first_index[image_id], entries[image_id], image)
                continue
            first_index[image_id] = index
            entries[image_id] = ImageEntry(
                image_id=image_id,
                file_name=_file_name(image["file_name"], f"{path}: images[{index}]"),
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
        image_id, ann_id = _annotation_key(ann, path, index)
        where = f"{path.name}: annotations[{index}] (id {ann_id})"
        if ann_id in seen:  # one caption id must name one caption: keep the first, count the rest
            skips.add("duplicate annotation id", where, f"id already used by annotations[{seen[ann_id]}]")
            continue
        seen[ann_id] = index
        entry = entries.get(image_id)
        if entry is None:
            skips.add("caption without image entry", where, f"image_id {ann['image_id']}")
            continue
        add_caption(entry, f"c{ann_id}", ann.get("caption"), where, skips, cleaned)
    return [entries[i] for i in sorted(entries)]


def _file_name(value, where: str) -> str:
    if not isinstance(value, str) or not value or not valid_unicode(value):
        raise DataError(f"{where}: file_name {ascii(value)[:80]} is not a file name (a non-empty string of valid Unicode)")
    return value


def _check_repeated_image(path: Path, index: int, first: int, entry: ImageEntry, image: dict) -> None:
    """A repeated ``images`` entry is harmless when it names the same file; else which one is meant?"""
    if str(image["file_name"]) != entry.file_name:
        raise DataError(
            f"{path}: images[{index}] repeats id {entry.image_id} of images[{first}] with a different file_name "
            f"({image['file_name']!r} vs {entry.file_name!r}); give each image its own id"
        )


def _annotation_key(ann, path: Path, index: int) -> tuple[int, int]:
    where = f"{path}: annotations[{index}]"
    if not isinstance(ann, dict) or "image_id" not in ann or "id" not in ann:
        raise DataError(f"{where} lacks a valid 'image_id' or 'id' (an object with both is needed)")
    return whole_id(ann["image_id"], where, "image_id"), whole_id(ann["id"], where)


def read_karpathy(path: str | Path, skips: SkipLog, cleaned: SkipLog | None = None) -> list[ImageEntry]:
    """Read the Karpathy split in the ALBEF/BLIP list format ``[{"image": ..., "caption": [...]}]``
    (``skips`` and ``cleaned`` as in :func:`read_coco_captions`)."""
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
            add_caption(entry, f"k{image_id}_{n}", raw, f"{path.name}: entry [{index}]", skips, cleaned)
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
    return whole_id(image_id, f"{path}: entry [{index}]", "image_id")


def read_captions(path: str | Path, skips: SkipLog, cleaned: SkipLog | None = None) -> list[ImageEntry]:
    """Read either format, detected from the top-level JSON type (``skips`` and ``cleaned`` as in
    :func:`read_coco_captions`)."""
    path = Path(path)
    if path.is_dir():
        raise DataError(f"{path}: a folder, not a captions file; pass an official COCO captions file or a Karpathy-format "
                        "list (a SugarCrepe folder is read with --from sugarcrepe)")
    if not path.is_file():
        raise DataError(f"captions file not found: {path}")
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096).lstrip()
    except OSError as err:
        raise DataError(f"{path}: the captions file cannot be read ({err.strerror or err})") from None
    read = read_karpathy if head.startswith(b"[") else read_coco_captions
    return read(path, skips, cleaned)


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
