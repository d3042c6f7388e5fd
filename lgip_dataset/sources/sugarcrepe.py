"""Read SugarCrepe-format probe sets into LGIP build records (``lgip build --from sugarcrepe DIR``).

A SugarCrepe folder holds JSON files ``{id: {"filename", "caption", "negative_caption"}}`` (the
layout of RAIVNLab/sugar-crepe's ``data/`` that CLIP_benchmark also reads); every file is one
subset. Each instance becomes a flip of its caption whose type is ``sugarcrepe_<file stem>``
(``sugarcrepe_replace_obj``, ...; the registry's ``IMPORTED_TYPES``). The same (image, caption) in
several files is one caption with several imported flips, and every image is stored once.

Instances are counted in the build's skip log, never dropped silently: an image file missing from
``--images``, an unusable caption or negative, or a negative equal to its caption.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from lgip_dataset.errors import DataError
from lgip_dataset.perturb import MAX_CAPTION_CHARS, Variant
from lgip_dataset.perturb.registry import imported_type
from lgip_dataset.schema import FLIP
from lgip_dataset.sources.coco import Caption, ImageEntry, clean_caption, kept_caption, load_json, valid_unicode
from lgip_dataset.sources.skips import SkipLog

FORMAT = "sugarcrepe"  # the probe set: `lgip build --from` value and its types' prefix
TITLE = "LGIP with SugarCrepe flips (COCO val2017)"
CARD_SECTION = """## SugarCrepe flips

Besides LGIP's own paraphrases and flips of each caption, every SugarCrepe instance (Hsieh et al.,
NeurIPS 2023 Datasets and Benchmarks; https://github.com/RAIVNLab/sugar-crepe, MIT license) whose
image is present adds its `negative_caption` as a flip of its `caption`, with the type
`sugarcrepe_<subset>` (`sugarcrepe_replace_obj`, `sugarcrepe_swap_att`, ...; no edit span is
recorded). A SugarCrepe subset's accuracy is the pair-level PR of its type: the share of its
instances whose caption scores above the negative. Instances whose image is missing are counted
under Skipped and cleaned input.

```bibtex
@inproceedings{hsieh2023sugarcrepe,
  title     = {SugarCrepe: Fixing Hackable Benchmarks for Vision-Language Compositionality},
  author    = {Hsieh, Cheng-Yu and Zhang, Jieyu and Ma, Zixian and Kembhavi, Aniruddha and Krishna, Ranjay},
  booktitle = {NeurIPS Datasets and Benchmarks},
  year      = {2023}
}
```"""
_DIGITS = re.compile(r"(\d+)\.\w+$")


def source_files(folder: str | Path) -> list[Path]:
    """The subset files of a SugarCrepe folder, sorted; a DataError when there are none."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(f"--from sugarcrepe {folder}: not a folder")
    files = sorted(folder.glob("*.json"))
    if not files:
        raise DataError(f"--from sugarcrepe {folder}: no *.json subset files (expected e.g. replace_obj.json)")
    return files


def sha256(folder: str | Path) -> str:
    """One digest of every subset file's name and bytes (the build's source fingerprint)."""
    digest = hashlib.sha256()
    for path in source_files(folder):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _load(path: Path) -> dict:
    data = load_json(path, "SugarCrepe file", "a SugarCrepe file {id: {filename, caption, negative_caption}}")
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected an object {{id: {{filename, caption, negative_caption}}}}, "
                        f"got a {type(data).__name__}")
    return data


def _image_id(path: Path, key: str, filename: str) -> int:
    match = _DIGITS.search(filename)
    if match is None:
        raise DataError(f"{path}: instance {key!r} has no numeric COCO id in its file name {filename!r}")
    return int(match.group(1))


def _text(raw, what: str, where: str, skips: SkipLog, cleaned: SkipLog | None) -> Caption | None:
    """The cleaned ``raw`` (:func:`~lgip_dataset.sources.coco.kept_caption`; its cleanings counted in ``cleaned``),
    or None with the reason counted in ``skips``."""
    cleaning = clean_caption(raw) if isinstance(raw, str) else ("", [])
    text = cleaning[0]
    if text and not valid_unicode(text):
        skips.add(f"SugarCrepe {what} not valid Unicode (an unpaired surrogate)", where)
    elif not text:
        skips.add(f"SugarCrepe instance with an empty or missing {what}", where)
    elif len(text) > MAX_CAPTION_CHARS:
        skips.add(f"SugarCrepe {what} longer than {MAX_CAPTION_CHARS} characters", where)
    else:
        return kept_caption("", raw, cleaning, f"{where} ({what})", cleaned)
    return None


@dataclass(frozen=True)
class Instance:
    """One usable SugarCrepe instance: its subset file, id, flip type, image and texts (normalised)."""

    path: Path
    key: str
    type: str
    image_id: int
    filename: str
    caption: str
    negative: str
    caption_source: str | None = None  # the file's caption, where cleaning changed more than its whitespace


def read_instances(folder: str | Path, skips: SkipLog,
                   keep: Callable[[str, str], bool] = lambda where, filename: True,
                   cleaned: SkipLog | None = None) -> Iterator[Instance]:
    """The instances of a SugarCrepe folder (files sorted by name, each file's instances in order).

    ``keep(where, filename)`` may leave an instance out first (counting its own skip); an unusable
    caption or negative, or a negative equal to its caption, is counted in ``skips`` and left out;
    the cleanings of the texts kept are counted in ``cleaned``.
    """
    for path in source_files(folder):
        type_ = imported_type(FORMAT, path.stem)
        for key, item in _load(path).items():
            where = f"{path.name}: {key}"
            if not isinstance(item, dict) or not isinstance(item.get("filename"), str):
                raise DataError(f"{path}: instance {key!r} needs 'filename', 'caption' and 'negative_caption'")
            if not keep(where, item["filename"]):
                continue
            caption = _text(item.get("caption"), "caption", where, skips, cleaned)
            negative = caption and _text(item.get("negative_caption"), "negative_caption", where, skips, cleaned)
            if not negative:
                continue
            if negative.text == caption.text:
                skips.add("SugarCrepe negative_caption equal to its caption", where)
                continue
            yield Instance(path, key, type_, _image_id(path, key, item["filename"]), item["filename"], caption.text,
                           negative.text, caption.source)


def caption_id(instance: Instance) -> str:
    """The caption id of the first instance with that caption on that image: ``sc-<file stem>-<id>``."""
    return f"sc-{instance.path.stem}-{instance.key}"


def read_sugarcrepe(folder: str | Path, images_dir: str | Path, skips: SkipLog,
                    cleaned: SkipLog | None = None) -> tuple[list[ImageEntry], dict[str, list[Variant]]]:
    """The images with their captions, and the imported flips per caption id, of a SugarCrepe folder.

    Caption ids are :func:`caption_id` of the first instance (files sorted by name) that has that
    caption on that image.
    """
    images_dir = Path(images_dir)
    entries: dict[int, ImageEntry] = {}
    caption_ids: dict[tuple[int, str], str] = {}
    flips: dict[str, list[Variant]] = {}

    def image_present(where: str, filename: str) -> bool:
        if (images_dir / filename).is_file():
            return True
        skips.add("SugarCrepe instance whose image file is not in --images", where, filename)
        return False

    for one in read_instances(folder, skips, image_present, cleaned):
        entry = entries.setdefault(one.image_id, ImageEntry(image_id=one.image_id, file_name=one.filename))
        cid = caption_ids.get((one.image_id, one.caption))
        if cid is None:
            cid = caption_ids[one.image_id, one.caption] = caption_id(one)
            entry.captions.append(Caption(cid, one.caption, one.caption_source))
        flips.setdefault(cid, []).append(Variant(text=one.negative, kind=FLIP, type=one.type))
    return [entries[i] for i in sorted(entries)], flips
