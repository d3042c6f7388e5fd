"""Read, decode and preprocess images of the ``images`` config in DataLoader workers.

The JPEG bytes come from :class:`~lgip_dataset.image_cells.ImageCells`, a few rows at a time.
A row that cannot be used (no bytes, corrupt JPEG, decompression bomb) comes back as a failure
with its reason instead of a tensor; the engine counts and reports it and scores the rest.
"""
from __future__ import annotations

from typing import Callable, Iterator

import torch
from PIL import Image

from lgip_dataset.image_cells import ImageCells
from lgip_dataset.images import ImageError, decode_image
from lgip_metric.scoring.heap import heap_rows

Batch = dict[str, torch.Tensor]
PREFETCH_BATCHES = 4  # batches each DataLoader worker makes ahead (image pieces here, texts in lgip_metric.scoring.texts)
PIECE_IMAGES = 16  # images a worker decodes at a time: 2,000 images in batches of 256 were 8 items for 15 workers


def cell_image(cell: dict | None) -> Image.Image:
    """The RGB image of an ``Image()`` cell from its embedded bytes (builds always embed them), or
    :class:`~lgip_dataset.images.ImageError` with the reason."""
    return decode_image(cell.get("bytes") if cell else None)


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


def image_batch_size(encoder, batch_size: int) -> int:
    """Images per forward pass: ``batch_size``; on the CPU also few enough that the image tower's widest
    activation stays below the heap's mmap threshold (:func:`~lgip_metric.scoring.heap.heap_rows`), so it
    is reused, not mapped and faulted afresh (where the tower's activations are known: ``image_row_bytes``)."""
    if encoder.device.type != "cpu" or encoder.image_row_bytes is None:
        return batch_size
    return min(batch_size, heap_rows(encoder.image_row_bytes))


def image_batches(rows: ImageRows, batches: list[list[int]], num_workers: int, device: torch.device) -> Iterator[tuple]:
    """``(indices, batch, failures)`` (see :func:`collate`) of each of ``batches`` (non-empty lists of item
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


def _joined(parts: list[tuple], device: torch.device) -> tuple[list[int], Batch | None, list[tuple[int, str]]]:
    """The pieces of one batch as the batch itself: their indices, inputs and failures end to end."""
    done = [i for indices, _, _ in parts for i in indices]
    failures = [f for _, _, failed in parts for f in failed]
    inputs = [batch for _, batch, _ in parts if batch is not None]
    if len(inputs) <= 1:
        return done, (inputs or [None])[0], failures
    batch = {key: torch.cat([piece[key].to(device, non_blocking=True) for piece in inputs]) for key in inputs[0]}
    return done, batch, failures
