"""What the engine reads from a dataset: the rows (and those the validated rule keeps), their unique texts and
images, content keys."""
from __future__ import annotations

from collections import Counter
from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from lgip_dataset import schema
from lgip_dataset.errors import DataError
from lgip_dataset.files.hub_io import DatasetFiles
from lgip_dataset.files.image_cells import ImageCells
from lgip_dataset.judging import RULE, validated_mask
from lgip_metric.scoring.cache import content_key

ROW_COLUMNS = tuple(c for c in schema.SCORE_COLUMNS if c not in schema.SCORE_VALUES)


def read_rows(files: DatasetFiles, config: str, limit: int | None) -> pa.Table:
    """The row columns of ``config`` of the dataset ``files`` as an Arrow table (first ``limit`` rows when given)."""
    dataset = files.dataset
    missing = [c for c in ROW_COLUMNS if c not in files.column_names(config)]
    if missing:
        raise DataError(f"config {config!r} of {dataset} lacks the columns {missing}; score the 'pairs' config")
    table = files.table(config, list(ROW_COLUMNS))
    if limit is not None:
        table = table.slice(0, limit)
    _check_unique_row_ids(table, dataset, config)
    return table


def validated_rows(files: DatasetFiles, config: str, rows: pa.Table) -> np.ndarray:
    """Per row of ``rows`` (the first rows of ``config``, :func:`read_rows`), whether the validated rule keeps it:
    of ``pairs``, the rows of the folder's ``validated`` config where it has one (the build chose its compositional
    flips among the valid ones, :mod:`lgip_dataset.judging.validated_choice`), else
    :func:`lgip_dataset.judging.validated` (a folder built before labels has none, so its unlabelled flips of the
    extended and imported types are dropped); DataError before any scoring when it keeps no row."""
    if config == schema.PAIRS and files.has(schema.VALIDATED):
        chosen = files.table(schema.VALIDATED, ["row_id"]).column("row_id")
        keep = pc.is_in(rows.column("row_id"), value_set=chosen).to_numpy(zero_copy_only=False)
    else:
        labels = [None] * rows.num_rows
        if "judged" in files.column_names(config):
            judged = files.table(config, ["judged"]).slice(0, rows.num_rows).column("judged")
            labels = pc.struct_field(judged, "labels").to_pylist()
        keep = validated_mask(rows.column("kind").to_pylist(), rows.column("type").to_pylist(), labels)
    if not keep.any():
        raise DataError(f"--validated: the validated rule keeps none of the {rows.num_rows:,} rows of config {config!r} "
                        f"of {files.dataset} (it keeps {RULE}); score them without --validated")
    return keep


def split_validated(table: pa.Table, kept: np.ndarray) -> tuple[pa.Table, pa.Table, dict]:
    """A scored table's rows the validated rule keeps (``kept``, :func:`validated_rows`), those it drops, and
    their counts (``kept_rows``, ``dropped_rows``, ``dropped_per_type``)."""
    rule = pa.array(kept)
    out, dropped = table.filter(rule), table.filter(pc.invert(rule))
    per_type = Counter(dropped.column("type").to_pylist())
    return out, dropped, {"kept_rows": out.num_rows, "dropped_rows": dropped.num_rows,
                          "dropped_per_type": dict(sorted(per_type.items()))}


def _check_unique_row_ids(rows: pa.Table, dataset, config: str) -> None:
    """Refuse repeated ``row_id``s: scores, joins and statistics key rows by them."""
    if len(pc.unique(rows.column("row_id"))) == rows.num_rows:  # hashed in Arrow, no Python strings
        return
    ids = rows.column("row_id").to_pandas()
    repeated = ids.duplicated(keep=False)
    if repeated.any():
        first = ids[repeated].iloc[0]
        where = ", ".join(str(i) for i in ids.index[ids == first][:3])
        raise DataError(f"config {config!r} of {dataset} has {int(ids.duplicated().sum())} repeated row_id(s), e.g. "
                        f"{first!r} at rows {where}; row ids must be unique (rebuild the dataset with `lgip build`)")


GROUP_TEXTS = ("caption_a", "caption_b")
GROUP_IMAGES = ("image_a", "image_b")


def read_groups(files: DatasetFiles) -> pa.Table | None:
    """The ``groups`` config (2x2 groups) as an Arrow table, or None when the dataset has none (a build
    writes it only when it mined at least one group)."""
    return files.table(schema.GROUPS) if files.has(schema.GROUPS) else None


def unique_texts(rows: pa.Table, normalize: Callable[[str], str], groups: pa.Table | None = None):
    """Unique normalised texts over captions, variants (and group captions), and the index into them
    of each row's caption and variant (and of each group's ``caption_a``/``caption_b``).

    The text columns are hashed in Arrow: Python strings are made for the distinct raw texts only,
    not for every cell (a caption repeats in each of its rows), which left the heap holding freed
    strings between the kept ones."""
    columns = [rows.column(name) for name in ("caption", "variant")]
    columns += [groups.column(name) for name in GROUP_TEXTS] if groups is not None else []
    for k, column in enumerate(columns):
        if column.null_count:
            bad = pc.index(pc.is_null(column), True).as_py()
            if k < 2:
                raise DataError(f"row {rows.column('row_id')[bad].as_py()!r} of the dataset has no caption/variant text")
            raise DataError(f"group {groups.column('group_id')[bad].as_py()!r} of the dataset's groups config has no caption text")
    raw = pa.chunked_array([chunk for column in columns for chunk in column.cast(columns[0].type).chunks], columns[0].type)
    raw_unique = pc.unique(raw)
    raw_codes = pc.index_in(raw, value_set=raw_unique).to_numpy()
    codes, uniques = pd.factorize(pd.Series([normalize(x) for x in raw_unique.to_pylist()], dtype=object), sort=True)
    codes = codes[raw_codes]
    bounds = np.cumsum([0] + [len(c) for c in columns])
    return list(uniques), *(codes[a:b] for a, b in zip(bounds[:-1], bounds[1:]))


def long_pairs(encoder, rows: pa.Table, caption_idx: np.ndarray, variant_idx: np.ndarray) -> np.ndarray:
    """The rows whose caption and variant differ once normalised and are both at least the model's context long
    in characters: a text shorter than the context is never truncated, so only these can reach the model as the
    same token ids although they differ, as with an edit past the context (about 4% of a val2017 build's rows)."""
    context = int(encoder.settings()["text"]["context_length"])  # not the provenance: it waits for the weights hash
    long = pc.and_(pc.greater_equal(pc.utf8_length(rows.column("caption")), context),
                   pc.greater_equal(pc.utf8_length(rows.column("variant")), context))
    return np.flatnonzero(long.to_numpy(zero_copy_only=False) & (caption_idx != variant_idx))


def folded_pairs(rows: pa.Table, caption_idx: np.ndarray, variant_idx: np.ndarray) -> np.ndarray:
    """The rows whose caption and variant differ once normalised but are one text after case folding and with
    runs of white space made one space: most tokenizers drop such a difference (CLIP's lower-cases and splits
    at white space), so these too can reach the model as the same token ids, at any length."""
    def folded(name: str) -> pa.ChunkedArray:
        text = pc.utf8_lower(rows.column(name))
        return pc.utf8_trim_whitespace(pc.replace_substring_regex(text, r"\s+", " "))

    same = pc.equal(folded("caption"), folded("variant")).to_numpy(zero_copy_only=False)
    return np.flatnonzero(same & (caption_idx != variant_idx))


def read_alike(encoder, texts: list[str], caption_idx: np.ndarray, variant_idx: np.ndarray, candidates: np.ndarray,
               tokens=None) -> np.ndarray:
    """Per row, whether its caption and variant reach the model as the same token ids although the texts differ:
    one text once the model's ``normalize_text`` has run (the unique-text codes of ``texts`` say so: case, for
    SigLIP 2, which lower-cases there), or two of the ``candidates`` rows (:func:`long_pairs`,
    :func:`folded_pairs`) whose token ids match. Their ids come from ``tokens`` (the engine's :class:`~lgip_metric.scoring.texts.TokenIds`) where it
    holds them; the other texts are tokenised here, each distinct text once."""
    alike = caption_idx == variant_idx
    if candidates.size:
        left, right = caption_idx[candidates], variant_idx[candidates]
        distinct = np.unique(np.concatenate([left, right]))  # a caption heads many rows: read once
        kept = tokens.known(distinct) if tokens is not None else np.zeros(len(distinct), bool)
        ids = {int(p): tokens.ids(p) for p in distinct[kept]}
        rest = distinct[~kept].tolist()
        if rest:  # every id may be kept already, and a tokenizer may refuse an empty batch
            ids.update(zip(rest, encoder.tokenize([texts[p] for p in rest])))
        alike[candidates] = [ids[a] == ids[b] for a, b in zip(left.tolist(), right.tolist())]
    return alike


def image_positions(files: DatasetFiles, image_ids: np.ndarray) -> tuple[ImageCells, list[int]]:
    """The images config's cells (read in pieces, undecoded) and, per wanted image id, its row there (-1 when absent)."""
    source = ImageCells(files.shards(schema.IMAGES))
    where = {int(i): p for p, i in enumerate(source.image_ids())}
    return source, [where.get(int(i), -1) for i in image_ids]


def keys_of_images(source: ImageCells, positions: list[int], image_ids: np.ndarray) -> list[str]:
    """Content hash of each wanted image's bytes (a per-id key where the bytes are absent), read in row order."""
    keys = [""] * len(positions)
    for i in sorted(range(len(positions)), key=positions.__getitem__):
        cell = source.cell(positions[i]) if positions[i] >= 0 else None
        data = cell.get("bytes") if cell else None
        keys[i] = content_key(data) if data else f"absent-{int(image_ids[i])}"
    return keys
