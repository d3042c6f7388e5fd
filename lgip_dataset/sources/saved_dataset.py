"""Read your own images and captions from a local ``datasets`` dataset (``lgip build --from dataset DIR``).

``DIR`` is a dataset saved with ``save_to_disk`` (a ``Dataset`` or a ``DatasetDict``: every split is read) or a
folder ``load_dataset`` reads (parquet, CSV, JSON Lines files, ...), with an image column (a ``datasets.Image``
feature; ``image`` where there are several) and a caption column as in
:mod:`lgip_dataset.sources.imagefolder` (``--caption-column``; a text or a list of texts per row). Such a dataset holds
its images' bytes, not files the build can read: each distinct image is written once into the build's image
folder as ``<image_id><suffix>``, its ``image_id`` the first 63 bits of the SHA-256 of its bytes (the same
picture in several rows is one image). A row whose image has neither bytes nor a readable file is counted as a
skip with its captions; the build counts the images it cannot open.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import datasets
import pyarrow as pa
from datasets.exceptions import DatasetGenerationError

from lgip_dataset.errors import DataError
from lgip_dataset.sources.coco import ImageEntry
from lgip_dataset.sources.imagefolder import add_captions, caption_column, image_id
from lgip_dataset.sources.skips import SkipLog

FORMAT = "dataset"  # the `lgip build --from` value
SAVED = (datasets.config.DATASET_STATE_JSON_FILENAME, datasets.config.DATASETDICT_JSON_FILENAME)  # save_to_disk's
IMAGE_MISSING = "image with neither bytes nor a readable file"


def load_splits(folder: str | Path) -> datasets.DatasetDict:
    """Every split of the dataset at ``folder`` (saved with ``save_to_disk``, else read by ``load_dataset``); a
    DataError naming the folder and the library's reason when it cannot be read."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(f"--from {FORMAT} {folder}: not a folder; give a dataset saved with save_to_disk, or a "
                        "folder of data files load_dataset reads")
    saved = any((folder / name).is_file() for name in SAVED)
    try:
        loaded = datasets.load_from_disk(str(folder)) if saved else datasets.load_dataset(str(folder))
    except (DatasetGenerationError, pa.ArrowException, ValueError, OSError) as err:
        cause = err.__cause__ or err
        how = "load_from_disk" if saved else "load_dataset"
        raise DataError(f"--from {FORMAT} {folder}: datasets' {how} cannot read it ({type(cause).__name__}: "
                        f"{str(cause).splitlines()[0][:300]}); give a dataset saved with save_to_disk, or a folder "
                        "of data files with an image and a caption column") from None
    return loaded if isinstance(loaded, datasets.DatasetDict) else datasets.DatasetDict({"train": loaded})


def image_column(splits: datasets.DatasetDict, folder: Path) -> str:
    """The column of ``datasets.Image`` features (``image`` where there are several); a DataError otherwise."""
    columns = {name for rows in splits.values() for name, feature in rows.features.items()
               if isinstance(feature, datasets.Image)}
    if len(columns) == 1 or "image" in columns:
        return "image" if "image" in columns else columns.pop()
    found = f"several ({', '.join(sorted(columns))}), none named image" if columns else "none"
    raise DataError(f"--from {FORMAT} {folder}: one image column (a datasets.Image feature) is needed, found {found}; "
                    "cast the images to datasets.Image() (or rename the one to use to `image`) and save again")


def sha256(folder: str | Path) -> str:
    """One digest of every file's path inside ``folder`` and bytes (the build's source fingerprint)."""
    folder = Path(folder)
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def read_saved(folder: str | Path, wanted_column: str | None, images_dir: Path | None, skips: SkipLog,
               cleaned: SkipLog | None = None) -> tuple[list[ImageEntry], str]:
    """The images of the dataset at ``folder`` with their captions (every split's rows, in order) and the caption
    column read; each distinct image is written into ``images_dir`` (None: a text-only build, none written)."""
    folder = Path(folder)
    splits = load_splits(folder)
    images = image_column(splits, folder)
    column = caption_column(splits, wanted_column, f"--from {FORMAT} {folder}")
    entries: dict[int, ImageEntry] = {}
    for split in sorted(splits):
        rows = splits[split].cast_column(images, datasets.Image(decode=False))
        for index, (image, value) in enumerate(zip(rows[images], rows[column])):
            where = f"{folder.name}: {split} row {index}"
            data = _image_bytes(image)
            if data is None:
                skips.add(IMAGE_MISSING, where, str((image or {}).get("path")))
                skips.add("caption of a skipped image", where, count=len(value) if isinstance(value, list) else 1)
                continue
            key = image_id(data)
            file_name = f"{key}{Path((image or {}).get('path') or '').suffix.lower()}"
            if images_dir is not None and not (images_dir / file_name).exists():
                (images_dir / file_name).write_bytes(data)
            add_captions(entries, key, file_name, value, where, skips, cleaned)
    return [entries[i] for i in sorted(entries)], column


def _image_bytes(image: dict | None) -> bytes | None:
    """A row's image bytes: stored in the dataset, else read from its file; None when it has neither."""
    if not image:
        return None
    if image.get("bytes"):
        return image["bytes"]
    path = Path(image["path"]) if image.get("path") else None
    try:
        return path.read_bytes() if path is not None and path.is_file() else None
    except OSError:
        return None
