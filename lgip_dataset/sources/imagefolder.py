"""Read a user's own images and captions into LGIP build records (``lgip build --from imagefolder DIR``).

The folder is a ``datasets`` ImageFolder: images beside a ``metadata.jsonl`` / ``.csv`` / ``.parquet`` whose
``file_name`` column names each image and whose caption column (``--caption-column``; by default ``text``,
else ``caption``) holds one caption or a list of them. An image may appear in several rows (one caption
each). ``datasets`` reads the folder; this module turns its rows into :class:`~lgip_dataset.sources.coco.ImageEntry`
records, with ids that depend only on the file name (``image_id``: the first 63 bits of the SHA-256 of the
image's path inside the folder; caption ids ``u<image_id>_<n>``, n counting the image's captions in row order).

Unusable captions (empty, not text, too long) are counted in the build's skip log, naming the image and row;
images the build cannot open (missing, not an image) are counted when the build checks them. The caption column,
the ids, the rows' captions and the card's section are shared with ``--from dataset``
(:mod:`lgip_dataset.sources.saved_dataset`).
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import datasets
import pyarrow as pa
from datasets.exceptions import DatasetGenerationError
from datasets.packaged_modules.imagefolder.imagefolder import ImageFolder

from lgip_dataset.errors import DataError
from lgip_dataset.sources.coco import ImageEntry, add_caption
from lgip_dataset.sources.skips import SkipLog

FORMAT = "imagefolder"  # the `lgip build --from` value
CAPTION_COLUMNS = ("text", "caption")  # the caption column when --caption-column is not given: the first present
METADATA_FILES = tuple(ImageFolder.METADATA_FILENAMES)  # the names ``datasets`` reads metadata from
TITLE = "LGIP probes of your own images and captions"


def metadata_files(folder: str | Path) -> list[Path]:
    """The metadata files of an ImageFolder (anywhere under it), sorted; a DataError when there are none."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(f"--from {FORMAT} {folder}: not a folder; give the folder holding your images and their "
                        f"{' or '.join(METADATA_FILES)}")
    files = sorted(p for name in METADATA_FILES for p in folder.rglob(name))
    if not files:
        raise DataError(f"--from {FORMAT} {folder}: no metadata file ({', '.join(METADATA_FILES)}); write one beside "
                        "the images with a `file_name` column (the image's path inside the folder) and a caption "
                        "column (`text`), e.g. a line {\"file_name\": \"0001.jpg\", \"text\": \"a dog on a sofa\"}")
    return files


def sha256(folder: str | Path) -> str:
    """One digest of every metadata file's path inside ``folder`` and bytes (the build's source fingerprint)."""
    digest = hashlib.sha256()
    for path in metadata_files(folder):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def load_rows(folder: str | Path) -> datasets.DatasetDict:
    """Every split of the ImageFolder at ``folder`` as ``datasets`` reads it, images undecoded (their paths);
    DataError naming the metadata files and the library's reason when it cannot be read."""
    files = metadata_files(folder)
    named = ", ".join(str(p) for p in files)
    shown = not datasets.utils.are_progress_bars_disabled()
    datasets.utils.disable_progress_bars()  # a bar per split for a read of seconds; the build shows its own
    try:
        splits = datasets.load_dataset(FORMAT, data_dir=str(folder))
    except (DatasetGenerationError, pa.ArrowException, ValueError, OSError) as err:
        cause = err.__cause__ or err
        raise DataError(f"--from {FORMAT} {folder}: datasets cannot read it as an ImageFolder ({type(cause).__name__}: "
                        f"{str(cause).splitlines()[0][:300]}); check {named}: one row per image (or per caption), "
                        "a `file_name` and a caption column of the same type in every row") from None
    finally:
        if shown:
            datasets.utils.enable_progress_bars()
    for split, rows in splits.items():
        if "image" not in rows.column_names:
            raise DataError(f"--from {FORMAT} {folder}: the {split!r} split has no images (columns: "
                            f"{', '.join(rows.column_names)}); check that `file_name` in {named} names image files")
    return datasets.DatasetDict({split: rows.cast_column("image", datasets.Image(decode=False))
                                 for split, rows in splits.items()})


def caption_column(splits: datasets.DatasetDict, wanted: str | None, where: str) -> str:
    """The column holding the captions: ``wanted``, else the first of :data:`CAPTION_COLUMNS` present; a DataError
    naming the columns there are (``where``: the metadata files) when it is absent."""
    columns = sorted({c for rows in splits.values() for c in rows.column_names} - {"image"})
    candidates = (wanted,) if wanted is not None else CAPTION_COLUMNS
    for name in candidates:
        missing = [split for split, rows in splits.items() if name not in rows.column_names]
        if not missing:
            return name
    asked = f"--caption-column {wanted!r}" if wanted is not None else f"caption column ({' or '.join(CAPTION_COLUMNS)})"
    raise DataError(f"{where}: no {asked} in every split; the columns are {', '.join(columns) or 'none'}: name the "
                    "one holding the captions with --caption-column")


def image_id(key: bytes) -> int:
    """An image's id: the first 63 bits of the SHA-256 of ``key`` (an ImageFolder's path inside the folder, a
    dataset's image bytes): stable, an int64."""
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") >> 1


def read_imagefolder(folder: str | Path, wanted_column: str | None, skips: SkipLog,
                     cleaned: SkipLog | None = None) -> tuple[list[ImageEntry], str]:
    """The images of an ImageFolder with their captions (every row's, in split then row order), and the caption
    column read; unusable captions are counted in ``skips``, the cleanings of the kept ones in ``cleaned``."""
    folder = Path(folder)
    splits = load_rows(folder)
    column = caption_column(splits, wanted_column, ", ".join(str(p) for p in metadata_files(folder)))
    entries: dict[int, ImageEntry] = {}
    for split in sorted(splits):
        rows = splits[split]
        for index, (image, value) in enumerate(zip(rows["image"], rows[column])):
            file_name = _inside(folder, Path(image["path"]))
            add_captions(entries, image_id(file_name.encode()), file_name, value, f"{file_name} ({split} row {index})",
                         skips, cleaned)
    return [entries[i] for i in sorted(entries)], column


def _inside(folder: Path, path: Path) -> str:
    """``path``'s name inside ``folder`` as ``datasets`` lists it (under the folder as given, or its real path; an
    image that is a link to elsewhere keeps its name in the folder)."""
    for root in (folder.absolute(), folder.resolve()):
        if path.is_relative_to(root):
            return path.relative_to(root).as_posix()
    raise DataError(f"--from {FORMAT} {folder}: datasets lists the image {path}, outside the folder; name images by "
                    "their path inside it in the metadata's file_name")


def add_captions(entries: dict[int, ImageEntry], image: int, file_name: str, value, where: str, skips: SkipLog,
                 cleaned: SkipLog | None) -> None:
    """Add one row's caption or list of captions ``value`` to the entry of image id ``image`` in ``entries`` (made
    when new), with caption ids ``u<image_id>_<n>``; unusable captions are counted in ``skips`` (``where``: the row)."""
    entry = entries.setdefault(image, ImageEntry(image, file_name))
    if entry.file_name != file_name:
        raise DataError(f"{where}: {file_name} and {entry.file_name} have the same image id; rename one")
    for raw in value if isinstance(value, list) else [value]:
        add_caption(entry, f"u{entry.image_id}_{len(entry.captions)}", raw, where, skips, cleaned)


def card_section(info: dict) -> str:
    """The card's section on a build of the user's own captions: where they came from, how many got a flip of each
    family, and that the rules were made on COCO captions."""
    counts = info["counts"]
    per_type = counts.get("captions_with_flip_per_type", {})
    rows = "\n".join(f"| {type_} | {n:,} | {n / counts['captions']:.1%} |" for type_, n in per_type.items())
    return f"""## Your own images and captions

Built from your own images and captions (`lgip build --from {info['source']['format']} {info['source']['captions']}`,
caption column `{info['source'].get('caption_column')}`), not from COCO: the sections above that name COCO
describe the rules and their provenance, not these images. Image ids are the first 63 bits of the SHA-256 of
each image's path inside an ImageFolder, or of its bytes in a saved dataset; caption ids are `u<image_id>_<n>`.

The paraphrase and flip rules, their lexicons and the hard flips' statistics were made on COCO captions of
everyday photographs. Captions of another domain may offer fewer words a family can flip, and more of the
flips made may be unsound: read a sample (`lgip judge`) before reading a model's figures. Of the
{counts['captions']:,} captions, {counts.get('captions_with_flip', 0):,} got at least one flip; per family:

| family | captions with a flip of it | share of the captions |
|---|---:|---:|
{rows}"""
