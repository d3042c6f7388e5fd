"""Caption files added to the hard flips' statistics (``lgip build --statistics-captions``).

The hard families choose each replacement with COCO caption statistics (:mod:`lgip_dataset.perturb.plausibility`):
the shipped table (Karpathy test captions) plus the build's own captions. Their coverage grows with
the captions counted (``benchmarks/hard_coverage.py``), so a build may count more: any COCO or
Karpathy captions file, for example the 2017 train captions. Each image's captions are counted
once: an image the build, the shipped table or an earlier file already counted is left out and
reported. Every counted caption falls in its image's fold, so the flips stay cross-fitted.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from lgip_dataset.errors import DataError
from lgip_dataset.sources.coco import ImageEntry, read_captions
from lgip_dataset.sources.skips import SkipLog

OPTION = "--statistics-captions"


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class StatisticsFile:
    """One captions file read for the statistics, with the rows it could not use."""
    path: Path
    sha256: str
    entries: list[ImageEntry]
    skips: SkipLog


def read_statistics_files(paths: Iterable[Path]) -> list[StatisticsFile]:
    """Read every file (COCO or Karpathy format, as ``--captions``); a missing or malformed one is
    refused with a message naming the option and the file, before any other work."""
    files = []
    for path in map(Path, paths):
        skips = SkipLog()
        try:
            entries = read_captions(path, skips)
        except DataError as err:
            raise DataError(f"{OPTION} {path}: {err}") from None
        if not entries:
            raise DataError(f"{OPTION} {path}: no usable caption in the file ({'; '.join(skips.lines()) or 'empty'})")
        files.append(StatisticsFile(path, file_sha256(path), entries, skips))
    return files


def statistics_captions(files: list[StatisticsFile], counted: set) -> tuple[Iterator[tuple[object, str]], list[dict]]:
    """The (image id, caption) pairs of the images of ``files`` not in ``counted`` (the image ids
    already counted: the build's and the shipped table's), each image once, and one record per file:
    its name, SHA-256, images and captions counted, images left out as already counted, and its
    unusable rows."""
    counted = set(counted)
    kept, records = [], []
    for file in files:
        fresh = [e for e in file.entries if e.image_id not in counted]
        counted.update(e.image_id for e in fresh)
        kept += fresh
        records.append({"file": file.path.name, "sha256": file.sha256, "images": len(fresh),
                        "captions": sum(len(e.captions) for e in fresh),
                        "images_already_counted": len(file.entries) - len(fresh),
                        "rows_skipped": file.skips.as_dict()})
    return ((e.image_id, c.text) for e in kept for c in e.captions), records
