"""Read, decode and preprocess images of the ``images`` config in DataLoader workers.

The JPEG bytes are read from the config's parquet shards a few rows at a time, forward, by each
process on its own file handle: never the whole column, which would count in the process's memory
(a memory-mapped table's touched pages do) and grow with the number of images.
A row that cannot be used (no bytes, corrupt JPEG, decompression bomb) comes back as a failure
with its reason instead of a tensor; the engine counts and reports it and scores the rest.
"""
from __future__ import annotations

import os
from bisect import bisect_right
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow.parquet as pq
import torch
from PIL import Image

from lgip_dataset.errors import DataError
from lgip_dataset.images import ImageError, decode_image

READ_ROWS = 16  # image rows decoded from parquet at a time
IMAGE_COLUMNS = ("image_id", "image")

Batch = dict[str, torch.Tensor]


def cell_image(cell: dict | None) -> Image.Image:
    """The RGB image of an ``Image()`` cell from its embedded bytes (builds always embed them), or
    :class:`~lgip_dataset.images.ImageError` with the reason."""
    return decode_image(cell.get("bytes") if cell else None)


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
            cells = next(batches).column("image").to_pylist()
        self._reader = (pid, group, batches, first, cells)
        return cells[row - first]


class ImageRows(torch.utils.data.Dataset):
    """Item ``i`` is ``(i, inputs or None, failure reason)`` for row ``positions[i]`` of ``source`` (-1: absent)."""

    def __init__(self, source: ImageCells, positions: list[int], transform: Callable[[Image.Image], Batch]):
        self.source, self.positions, self.transform = source, positions, transform

    def __len__(self) -> int:
        return len(self.positions)

    def __getitem__(self, i: int):
        position = self.positions[i]
        try:
            if position < 0:
                raise ImageError("image_id not in the images config")
            return i, self.transform(cell_image(self.source.cell(position))), ""
        except ImageError as err:
            return i, None, str(err)


def collate(items: list) -> tuple[list[int], Batch | None, list[tuple[int, str]]]:
    """Stack the decoded items; failures travel beside them as ``(index, reason)``."""
    ok = [(i, inputs) for i, inputs, _ in items if inputs is not None]
    failures = [(i, reason) for i, inputs, reason in items if inputs is None]
    if not ok:
        return [], None, failures
    batch = {key: torch.stack([inputs[key] for _, inputs in ok]) for key in ok[0][1]}
    return [i for i, _ in ok], batch, failures


def image_loader(rows: ImageRows, batches: list[list[int]], num_workers: int, pin_memory: bool) -> torch.utils.data.DataLoader:
    """A DataLoader yielding exactly ``batches`` (lists of item indices), decoded in ``num_workers`` processes."""
    return torch.utils.data.DataLoader(
        rows,
        batch_sampler=batches,
        num_workers=num_workers,
        collate_fn=collate,
        pin_memory=pin_memory,
        persistent_workers=False,
        prefetch_factor=4 if num_workers else None,
    )
