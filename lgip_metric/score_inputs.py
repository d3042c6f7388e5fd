"""What the engine reads from a dataset: the rows, their unique texts and images, content keys."""
from __future__ import annotations

from typing import Callable

import datasets
import numpy as np
import pandas as pd
import pyarrow as pa

from lgip_dataset import hub_io, schema
from lgip_dataset.errors import DataError
from lgip_metric.cache import content_key

ROW_COLUMNS = tuple(c for c in schema.SCORE_COLUMNS if c not in ("s_original", "s_variant"))


def read_rows(dataset, config: str, limit: int | None) -> pa.Table:
    """The row columns of ``config`` as an Arrow table (first ``limit`` rows when given)."""
    rows = hub_io.load_config(dataset, config)
    missing = [c for c in ROW_COLUMNS if c not in rows.column_names]
    if missing:
        raise DataError(f"config {config!r} of {dataset} lacks the columns {missing}; score the 'pairs' config")
    if limit is not None:
        rows = rows.select(range(min(limit, rows.num_rows)))
    return rows.select_columns(list(ROW_COLUMNS)).with_format("arrow")[:]


def unique_texts(rows: pa.Table, normalize: Callable[[str], str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Unique normalised texts over captions and variants, and each row's index into them for both."""
    raw = rows.column("caption").to_pylist() + rows.column("variant").to_pylist()
    bad = next((i for i, x in enumerate(raw) if not isinstance(x, str)), None)
    if bad is not None:
        row = rows.column("row_id")[bad % rows.num_rows].as_py()
        raise DataError(f"row {row!r} of the dataset has no caption/variant text")
    raw_codes, raw_unique = pd.factorize(pd.Series(raw, dtype=object))
    codes, uniques = pd.factorize(pd.Series([normalize(x) for x in raw_unique], dtype=object), sort=True)
    codes = codes[raw_codes]
    return list(uniques), codes[: rows.num_rows], codes[rows.num_rows :]


def image_positions(dataset, image_ids: np.ndarray):
    """The images config (undecoded) and, per wanted image id, its row there (-1 when absent)."""
    table = hub_io.load_config(dataset, schema.IMAGES).cast_column("image", datasets.Image(decode=False))
    where = {int(i): p for p, i in enumerate(table.with_format("arrow")["image_id"].to_pylist())}
    return table, [where.get(int(i), -1) for i in image_ids]


def keys_of_images(table, positions: list[int], image_ids: np.ndarray) -> list[str]:
    """Content hash of each wanted image's bytes (a per-id key where the bytes are absent)."""
    keys = []
    for position, image_id in zip(positions, image_ids):
        cell = table[position]["image"] if position >= 0 else None
        data = cell.get("bytes") if cell else None
        keys.append(content_key(data) if data else f"absent-{int(image_id)}")
    return keys
