"""Read, decode and preprocess images of the ``images`` config in DataLoader workers.

The JPEG bytes come from :class:`~lgip_dataset.files.image_cells.ImageCells`, a few rows at a time.
A row that cannot be used (no bytes, corrupt JPEG, decompression bomb) comes back as a failure
with its reason instead of a tensor; the engine counts and reports it and scores the rest. With a
:class:`~lgip_metric.scoring.input_cache.PixelStore`, an image whose pixels a model of the same
preprocessing kept is not decoded: its kept pixels are finished (bit for bit the same inputs).
"""
from __future__ import annotations

from typing import Callable, Iterator

import torch
from PIL import Image

from lgip_dataset.files.image_cells import ImageCells
from lgip_dataset.files.images import ImageError, decode_image
from lgip_metric.models.pixel_stages import PixelStages
from lgip_metric.scoring.heap import heap_rows
from lgip_metric.scoring.input_cache import PixelStore

Batch = dict[str, torch.Tensor]
PREFETCH_BATCHES = 4  # batches each DataLoader worker makes ahead (image pieces here, texts in lgip_metric.scoring.texts)
PIECE_IMAGES = 16  # images a worker decodes at a time: 2,000 images in batches of 256 were 8 items for 15 workers


def cell_image(cell: dict | None) -> Image.Image:
    """The RGB image of an ``Image()`` cell from its embedded bytes (builds always embed them), or
    :class:`~lgip_dataset.files.images.ImageError` with the reason."""
    return decode_image(cell.get("bytes") if cell else None)


class ImageRows(torch.utils.data.Dataset):
    """Item ``i`` is ``(i, inputs or None, failure reason, whether kept pixels were read)`` for row ``positions[i]``
    of ``source`` (-1: absent). With ``kept`` (``(stages, store, keys)``: the preprocessing's halves, the store of its
    pixels and each item's image key) kept pixels are read where there are some, and new ones kept when the store writes."""

    def __init__(self, source: ImageCells, positions: list[int], transform: Callable[[Image.Image], Batch],
                 kept: tuple[PixelStages, PixelStore, list[str]] | None = None):
        self.source, self.positions, self.transform, self.kept = source, positions, transform, kept

    def __len__(self) -> int:
        return len(self.positions)

    def __getitem__(self, i: int):
        position = self.positions[i]
        try:
            if position < 0:
                raise ImageError("image_id not in the images config")
            if self.kept is None:
                return i, self.transform(cell_image(self.source.cell(position))), "", False
            stages, store, keys = self.kept
            pixels = store.read(keys[i])
            if pixels is not None:
                return i, stages.finish(pixels), "", True
            if not store.write_new:  # nothing to keep: the whole transform at once
                return i, self.transform(cell_image(self.source.cell(position))), "", False
            pixels = stages.prefix(cell_image(self.source.cell(position)))
            store.write(keys[i], pixels)
            return i, stages.finish(pixels), "", False
        except ImageError as err:
            return i, None, str(err), False


def collate(items: list) -> tuple[list[int], Batch | None, list[tuple[int, str]], int]:
    """Stack the decoded items; failures travel beside them as ``(index, reason)``, then how many came from kept pixels."""
    ok = [(i, inputs) for i, inputs, _, _ in items if inputs is not None]
    failures = [(i, reason) for i, inputs, reason, _ in items if inputs is None]
    kept = sum(from_kept for *_, from_kept in items)
    if not ok:
        return [], None, failures, kept
    batch = {key: torch.stack([inputs[key] for _, inputs in ok]) for key in ok[0][1]}
    return [i for i, _ in ok], batch, failures, kept


def image_batch_size(encoder, batch_size: int) -> int:
    """Images per forward pass: ``batch_size``; on the CPU also few enough that the image tower's widest
    activation stays below the heap's mmap threshold (:func:`~lgip_metric.scoring.heap.heap_rows`), so it
    is reused, not mapped and faulted afresh (where the tower's activations are known: ``image_row_bytes``)."""
    if encoder.device.type != "cpu" or encoder.image_row_bytes is None:
        return batch_size
    return min(batch_size, heap_rows(encoder.image_row_bytes))


def image_batches(rows: ImageRows, batches: list[list[int]], num_workers: int, device: torch.device) -> Iterator[tuple]:
    """``(indices, batch, failures, kept)`` (see :func:`collate`) of each of ``batches`` (non-empty lists of item
    indices), in order. With workers, each batch is decoded in pieces of at most ``PIECE_IMAGES`` images, so that every
    worker has work and the first batch is ready after one piece per worker; the pieces are joined on
    ``device`` (pinned on the way to a GPU) into exactly the batch asked for."""
    step = PIECE_IMAGES if num_workers else max(map(len, batches), default=1)
    pieces = [(b, batch[start : start + step]) for b, batch in enumerate(batches) for start in range(0, len(batch), step)]
    loader = torch.utils.data.DataLoader(
        rows,
        batch_sampler=[piece for _, piece in pieces],
        num_workers=num_workers,
        collate_fn=collate,
        pin_memory=device.type == "cuda",
        persistent_workers=False,
        prefetch_factor=PREFETCH_BATCHES if num_workers else None,
    )
    parts: list[tuple] = []
    for (b, _), part in zip(pieces, loader):
        parts.append(part)
        if len(parts) == -(-len(batches[b]) // step):  # the batch's last piece
            yield _joined(parts, device)
            parts = []


def _joined(parts: list[tuple], device: torch.device) -> tuple[list[int], Batch | None, list[tuple[int, str]], int]:
    """The pieces of one batch as the batch itself: their indices, inputs and failures end to end, their kept count summed."""
    done = [i for indices, *_ in parts for i in indices]
    failures = [f for _, _, failed, _ in parts for f in failed]
    kept = sum(count for *_, count in parts)
    inputs = [batch for _, batch, *_ in parts if batch is not None]
    if len(inputs) <= 1:
        return done, (inputs or [None])[0], failures, kept
    batch = {key: torch.cat([piece[key].to(device, non_blocking=True) for piece in inputs]) for key in inputs[0]}
    return done, batch, failures, kept
