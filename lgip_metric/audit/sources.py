"""The audit's inputs: an ``lgip build`` folder, a SugarCrepe folder or a table of pairs, read into a
:class:`Source`, and the flip rows of any of them checked and completed (:func:`flip_rows`)."""
from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from lgip_dataset import schema
from lgip_dataset.errors import DataError
from lgip_dataset.perturb import MAX_CAPTION_CHARS
from lgip_dataset.perturb.perturber import valid_unicode
from lgip_metric import stats
from lgip_metric.audit.blocks import HARD_BLOCK

DEFAULT_TYPE = stats.FLIP  # the type of every pair of a table without a type column
PAIR_FILE_SUFFIXES = (".parquet", ".csv", ".jsonl")
TEXT_COLUMNS = ("caption", "variant")


@dataclass
class Source:
    """The pairs of one input (every row it has, flips or not), where they came from, and their fingerprint."""

    frame: pd.DataFrame
    name: str  # what the user named: a folder or a file
    format: str  # "lgip build", "sugarcrepe" or "pairs table"
    sha256: str  # of the bytes read
    file_names: dict = field(default_factory=dict)  # image_id -> image file name, where the input has them
    skipped: dict = field(default_factory=dict)  # reason -> {"count", "examples"}
    in_sample: dict = field(default_factory=dict)  # type or block -> the build's own learner figure (lgip_build.json)


def _digest(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode() + b"\0")
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def from_build(folder: str | Path, config: str = schema.PAIRS) -> Source:
    """The ``config`` (``pairs`` or ``validated``) of an ``lgip build`` folder (and the image file names of its
    ``images`` config)."""
    import pyarrow.parquet as pq

    from lgip_dataset.files import hub_io

    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(f"{folder}: not a folder; pass an `lgip build` output folder, or --from sugarcrepe DIR "
                        "or --pairs FILE")
    if config not in (schema.PAIRS, schema.VALIDATED):
        raise DataError(f"--config {config}: audit {schema.PAIRS} or {schema.VALIDATED}")
    if config == schema.VALIDATED and not (folder / schema.VALIDATED).is_dir():
        raise DataError(f"--config {config}: {folder} has no {config} config (built without labels); audit its pairs, "
                        "or build it with `lgip build --judged STORE`")
    shards = hub_io.config_files(folder, config)
    wanted = ["row_id", "caption_id", "image_id", "caption", "variant", "kind", "type", "original", "replacement"]
    rows = hub_io.load_config(folder, config)
    frame = rows.select_columns([c for c in wanted if c in rows.column_names]).to_pandas()
    file_names = {}
    if any((folder / schema.IMAGES).glob("*.parquet")):
        for shard in hub_io.config_files(folder, schema.IMAGES):
            table = pq.read_table(shard, columns=["image_id", "file_name"])
            file_names.update(zip(table.column("image_id").to_pylist(), table.column("file_name").to_pylist()))
    return Source(frame, str(folder), "lgip build", _digest(shards), file_names, in_sample=_in_sample(folder))


def _in_sample(folder: Path) -> dict:
    """The build's own learner figures of its hard flips (``lgip_build.json``), per type and for the hard
    flips together: ``{name: {"accuracy", "interval"}}``; empty for a build without them."""
    import json

    from lgip_dataset.files.hub_io import BUILD_INFO

    try:
        balance = json.loads((folder / BUILD_INFO).read_text(encoding="utf-8"))["hard_flips"]["balance"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    figures = {t: f for t, f in (balance.get("per_type") or {}).items()}
    if isinstance(balance.get("hard_set"), dict):
        figures[HARD_BLOCK] = balance["hard_set"]
    return {name: {"accuracy": f.get("learner_accuracy"), "interval": f.get("learner_interval")}
            for name, f in figures.items() if isinstance(f, dict) and isinstance(f.get("learner_accuracy"), float)}


def from_sugarcrepe(folder: str | Path) -> Source:
    """Every SugarCrepe-format file of ``folder`` (``{id: {filename, caption, negative_caption}}``), text only:
    each file is a type ``sugarcrepe_<file stem>``, the image id comes from the file name."""
    from lgip_dataset.sources import sugarcrepe
    from lgip_dataset.sources.skips import SkipLog

    skips = SkipLog()
    records, file_names, caption_ids = [], {}, {}
    for one in sugarcrepe.read_instances(folder, skips):
        file_names.setdefault(one.image_id, one.filename)
        cid = caption_ids.setdefault((one.image_id, one.caption), sugarcrepe.caption_id(one))
        records.append({"row_id": f"{one.path.stem}-{one.key}", "caption_id": cid, "image_id": one.image_id,
                        "caption": one.caption, "variant": one.negative, "kind": stats.FLIP, "type": one.type})
    if not records:
        raise DataError(f"--from sugarcrepe {folder}: no usable instance in its *.json files "
                        f"({skips.total} skipped); each needs a caption and a different negative_caption")
    return Source(pd.DataFrame.from_records(records), str(folder), "sugarcrepe",
                  _digest(sugarcrepe.source_files(folder)), file_names, skips.as_dict())


def from_pairs_file(path: str | Path) -> Source:
    """A table of pairs (.parquet, .csv or .jsonl) with ``image_id``, ``caption``, ``variant`` or
    ``negative_caption`` and optionally ``type`` (default: one type, ``flip``), ``caption_id``, ``row_id``,
    ``kind``, ``original``/``replacement``, ``file_name``."""
    path = Path(path)
    if path.suffix.lower() not in PAIR_FILE_SUFFIXES:
        raise DataError(f"--pairs {path}: unknown table format {path.suffix or '(no suffix)'!r}; "
                        f"use one of {', '.join(PAIR_FILE_SUFFIXES)}")
    if not path.is_file():
        raise DataError(f"--pairs {path}: no such file")
    if path.stat().st_size == 0:
        raise DataError(f"--pairs {path}: the file is empty; it needs a header/rows with image_id, caption, variant")
    try:
        if path.suffix.lower() == ".parquet":
            frame = pd.read_parquet(path)
        elif path.suffix.lower() == ".csv":
            frame = pd.read_csv(path, dtype={"caption": str, "variant": str, "negative_caption": str, "type": str},
                                keep_default_na=False, na_values=[""])
        else:
            frame = pd.read_json(path, lines=True, dtype=False)
    except Exception as err:  # readers raise many types: name the file and the cause
        raise DataError(f"--pairs {path}: not a readable {path.suffix[1:]} table "
                        f"({type(err).__name__}: {str(err).splitlines()[0][:200] if str(err) else ''})") from None
    if "variant" not in frame and "negative_caption" in frame:
        frame = frame.rename(columns={"negative_caption": "variant"})
    file_names = {}
    if "file_name" in frame:
        file_names = {i: f for i, f in zip(frame["image_id"], frame["file_name"]) if isinstance(f, str)} \
            if "image_id" in frame else {}
    return Source(frame, str(path), "pairs table", _digest([path]), file_names)


def flip_rows(pairs: pd.DataFrame, *, types=None, where: str = "pairs") -> pd.DataFrame:
    """The flip rows of ``pairs`` to audit (those of ``types`` when given), checked and completed: a
    missing ``type`` is ``flip``, a missing ``caption_id`` numbers the distinct (image, caption) pairs, a
    missing ``row_id`` is the row's position. ``where`` names the input in messages."""
    if "variant" not in pairs and "negative_caption" in pairs:
        pairs = pairs.rename(columns={"negative_caption": "variant"})
    missing = [c for c in ("image_id", *TEXT_COLUMNS) if c not in pairs]
    if missing:
        raise DataError(f"{where}: no column {', '.join(repr(c) for c in missing)} (has {', '.join(map(str, pairs.columns))});"
                        " a pairs table needs image_id, caption and variant (or negative_caption), and may have type")
    if pairs.empty:
        raise DataError(f"{where}: no rows; it needs one row per (caption, negative) pair")
    frame = pairs.reset_index(drop=True)
    for column in ("image_id", *TEXT_COLUMNS, *(c for c in ("type", "kind", "caption_id", "row_id") if c in frame)):
        text = column in TEXT_COLUMNS  # must be a string; the labels may be numbers
        bad = np.array([not (isinstance(v, str) and v.strip()) if text or isinstance(v, str) else pd.isna(v)
                        for v in frame[column]], dtype=bool)
        if bad.any():
            raise DataError(f"{where}: row {int(np.flatnonzero(bad)[0])} has no {column!r} ({int(bad.sum())} such "
                            "rows); fill it or drop the row")
    _check_texts(frame, where)
    if "kind" in frame:
        unknown = sorted(set(frame["kind"]) - set(stats.KINDS))
        if unknown:
            row = int(np.flatnonzero(frame["kind"].isin(unknown).to_numpy())[0])
            raise DataError(f"{where}: row {row} has kind {unknown[0]!r}; kind must be one of {', '.join(stats.KINDS)}")
        frame = frame.loc[(frame["kind"] == stats.FLIP).to_numpy()]
        if frame.empty:
            raise DataError(f"{where}: no flip rows (kind 'flip'); the audit reads (caption, negative) pairs")
    else:
        frame = frame.assign(kind=stats.FLIP)
    frame = frame.assign(type=frame["type"].astype(str)) if "type" in frame else frame.assign(type=DEFAULT_TYPE)
    if types:
        present = sorted(set(frame["type"]))
        unknown = [t for t in types if t not in present]
        if unknown:
            raise DataError(f"{where}: no flip rows of type {', '.join(map(repr, unknown))}; its types are "
                            f"{', '.join(present)}")
        frame = frame.loc[frame["type"].isin(types).to_numpy()]
    frame = frame.assign(caption_id=caption_ids(frame, where))
    if "row_id" not in frame:
        frame = frame.assign(row_id=[str(i) for i in frame.index])
    _check_unique(frame["row_id"], "row_id", where)
    return frame.reset_index(drop=True)


def _check_texts(frame: pd.DataFrame, where: str) -> None:
    """Every caption and variant valid Unicode and at most ``MAX_CAPTION_CHARS`` long, and no variant equal to
    its caption (once both are NFC with single spaces)."""
    for column in TEXT_COLUMNS:
        invalid = np.flatnonzero([not valid_unicode(text) for text in frame[column]])
        if len(invalid):
            raise DataError(f"{where}: row {int(invalid[0])} has a {column!r} that is not valid Unicode (an unpaired "
                            f"surrogate, which no UTF-8 file can hold; {len(invalid)} such rows): fix or drop those rows")
        long = np.flatnonzero(frame[column].str.len().to_numpy() > MAX_CAPTION_CHARS)
        if len(long):
            raise DataError(f"{where}: row {int(long[0])} has a {column!r} of {len(frame[column].iat[long[0]]):,} "
                            f"characters ({len(long)} such rows); a caption is at most {MAX_CAPTION_CHARS:,}: "
                            "shorten or drop those rows")
    same = np.flatnonzero([_plain_text(c) == _plain_text(v) for c, v in zip(frame["caption"], frame["variant"])])
    if len(same):
        raise DataError(f"{where}: row {int(same[0])} has a variant equal to its caption ({len(same)} such rows): "
                        "a pair needs a negative that differs from its caption; drop those rows")


def _plain_text(text: str) -> str:
    return unicodedata.normalize("NFC", " ".join(text.split()))


def caption_ids(frame: pd.DataFrame, where: str = "pairs") -> list:
    """The caption of each row, as the audit nests and trains by it: one per (image, caption text). A
    given ``caption_id`` is kept (the first given to that caption: ids given per row, not per caption,
    are grouped back); without one, the captions are numbered ``caption-<k>``. A caption_id given to two
    different captions is refused (DataError)."""
    keys = pd.MultiIndex.from_arrays([frame["image_id"].astype(str), frame["caption"]]).factorize()[0]
    if "caption_id" not in frame:
        return [f"caption-{k}" for k in keys]
    given = frame["caption_id"].to_numpy()
    first_key: dict = {}
    for row, cid, key in zip(frame.index, given, keys):
        seen = first_key.setdefault(cid, (key, row))
        if seen[0] != key:
            raise DataError(f"{where}: rows {seen[1]} and {row} share caption_id {cid!r} but not their image and "
                            "caption; a caption_id names one human caption on one image (the same on every "
                            "negative of it): fix the ids or drop the caption_id column")
    first_id = pd.Series(given).groupby(keys).transform("first")
    return first_id.tolist()


def _check_unique(values: pd.Series, column: str, where: str) -> None:
    repeated = values.duplicated(keep=False).to_numpy()
    if repeated.any():
        rows = values.index[repeated]
        raise DataError(f"{where}: {column} {values[rows[0]]!r} repeats (rows {', '.join(map(str, rows[:3]))}"
                        f"{', ...' if len(rows) > 3 else ''}); every row needs its own {column}: fix it or drop the "
                        "column")
