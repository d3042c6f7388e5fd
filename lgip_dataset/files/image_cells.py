"""The ``image`` cells of an LGIP dataset's ``images`` config, read from its parquet shards in pieces.

The JPEG bytes are read a few rows at a time, forward, by each process on its own file handle:
never the whole column, which would count in the process's memory (a memory-mapped table's touched
pages do) and grow with the number of images. No torch: the scoring engine's image loader and the
report's thumbnails read images through the same class.
"""
from __future__ import annotations

import os
from bisect import bisect_right
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from lgip_dataset.errors import DataError

READ_ROWS = 16  # image rows decoded from parquet at a time
IMAGE_COLUMNS = ("image_id", "image")


class ImageCells:
    """The ``image`` cells of the images config's parquet ``files``, by row over all files in order.

    ``cell(row)`` reads forward from the last row asked for (cheap when rows come in increasing order,
    as the engine asks for them) and reopens the row group otherwise; a process that did not open
    the current reader (a forked DataLoader worker) opens its own.
    """

    def __init__(self, files: list[Path]):
        self.files = list(files)
        self.groups: list[tuple[int, int, int]] = []  # (first row, file, row group), in row order
        first = 0
        for f, path in enumerate(self.files):
            meta = pq.ParquetFile(path).metadata
            missing = [c for c in IMAGE_COLUMNS if c not in meta.schema.to_arrow_schema().names]
            if missing:
                raise DataError(f"{path}: the images config lacks the columns {missing}; rebuild it with `lgip build`")
            for g in range(meta.num_row_groups):
                self.groups.append((first, f, g))
                first += meta.row_group(g).num_rows
        self.starts = [start for start, _, _ in self.groups]
        self._reader = None  # (pid, group index, batches, first row of ``_cells``, cells)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_reader": None}  # an open reader never travels to another process

    def image_ids(self) -> np.ndarray:
        """The ``image_id`` of every row."""
        return pq.read_table(self.files, columns=["image_id"]).column("image_id").to_numpy()

    def cell(self, row: int) -> dict | None:
        """The ``image`` cell (``{"bytes", "path"}``) of ``row``."""
        group = bisect_right(self.starts, row) - 1
        reader = self._reader
        if reader is None or reader[0] != os.getpid() or reader[1] != group or row < reader[3]:
            start, f, g = self.groups[group]
            batches = pq.ParquetFile(self.files[f], buffer_size=1 << 20, pre_buffer=False).iter_batches(
                batch_size=READ_ROWS, row_groups=[g], columns=["image"], use_threads=False)
            reader = (os.getpid(), group, batches, start, [])
        pid, group, batches, first, cells = reader
        while row >= first + len(cells):
            first += len(cells)
            batch = next(batches)
            # rows before the one asked for (another worker's) are stepped over without becoming Python objects
            cells = batch.column("image").to_pylist() if row < first + batch.num_rows else [None] * batch.num_rows
        self._reader = (pid, group, batches, first, cells)
        return cells[row - first]
