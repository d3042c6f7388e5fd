"""The C heap of a scoring process: which blocks get their own mappings, and whether freed ones stay.

glibc's ``malloc`` serves a block of at least ``M_MMAP_THRESHOLD`` bytes (128 KiB at start) from its
own ``mmap`` and returns it to the system when freed; but each such free raises the threshold to that
block's size (up to 32 MiB), after which blocks of that size are carved from the heap. The engine
frees large temporaries of many sizes while the image embeddings and the held text embeddings stay,
and those carvings fragment the heap. Fixing the threshold (``mallopt``) stops the adjustment. At
128 KiB every decoded image and batch of embeddings is a fresh mapping (page faults, zeroing): with
``benchmarks/bench_scale.py`` (d = 1024, 2 CPU cores) peak RSS grew 44 and 49 MB per 1,000 images at
4 MiB, 40 and 54 at 128 KiB, 54 to 64 without a fixed threshold, while ViT-L/14 scoring on an H100
(``benchmarks/bench_scoring.py``, batch 256) ran 4,486 and 4,324 pairs/s at 4 MiB, 4,208 and 4,232 at
128 KiB. So a scoring process fixes it at :data:`MMAP_THRESHOLD_BYTES`. Elsewhere (no glibc) nothing changes.

The flip side is a CPU model's forward passes: there every activation at or above the threshold was
mapped and faulted in afresh, layer after layer (ViT-B/16's image MLP is 2.4 MB an image, 77 MB for a
batch of 32), and the heap's free top, once over ``M_TRIM_THRESHOLD`` (128 KiB), was handed back and
faulted in again by the next batch. While a CPU model scores, the threshold is glibc's ceiling,
:data:`CPU_MMAP_THRESHOLD_BYTES`, the free top is kept up to :data:`CPU_TRIM_THRESHOLD_BYTES`, and the
engine sizes CPU batches so that a layer's widest activation fits below the threshold
(:func:`heap_rows`); after the last forward pass (:func:`end_passes`, before the scores are written) the 4 MiB
threshold and glibc's trim threshold come back and the freed heap is returned (``malloc_trim``). The peer
benchmark's ``lgip score`` (random ViT-B/16, 2 CPU cores) took 2.9 M minor page faults before, 0.4 M after.
"""
from __future__ import annotations

import ctypes
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    import torch

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers, <malloc.h>
MMAP_THRESHOLD_BYTES = 4 * 2**20  # above a decoded COCO image and a batch's embeddings
CPU_MMAP_THRESHOLD_BYTES = 32 * 2**20  # glibc's ceiling for the threshold on 64-bit systems
CPU_TRIM_THRESHOLD_BYTES = 2**30  # free heap kept while a CPU model scores, for the next batch's activations
TRIM_THRESHOLD_BYTES = 128 * 2**10  # glibc's default, restored afterwards


def _libc():
    """The C library's allocator calls, or None where there is no ``mallopt`` (not glibc)."""
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


@contextmanager
def scoring_heap(device: torch.device) -> Iterator[bool]:
    """The heap of one scoring run on ``device`` (see the module docstring); yields whether the C
    library took the settings. The 4 MiB threshold stays fixed after the run."""
    libc = _libc()
    if libc is None:
        yield False
        return
    cpu = device.type == "cpu"
    ok = bool(libc.mallopt(M_MMAP_THRESHOLD, CPU_MMAP_THRESHOLD_BYTES if cpu else MMAP_THRESHOLD_BYTES))
    if cpu:
        ok = bool(libc.mallopt(M_TRIM_THRESHOLD, CPU_TRIM_THRESHOLD_BYTES)) and ok
    try:
        yield ok
    finally:
        end_passes(device)


def end_passes(device: torch.device) -> None:
    """After a CPU model's last forward pass: the 4 MiB threshold and glibc's trim threshold back, and the heap
    kept for the next batch given back, before the scores are written (it held 140 to 170 MB of free heap at 1,000
    to 3,000 images in ``benchmarks/bench_scale.py``). Nothing changes for other devices nor without glibc; the end of
    :func:`scoring_heap` calls it again, to no effect."""
    libc = _libc()
    if libc is None or device.type != "cpu":
        return
    libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
    libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)
    libc.malloc_trim(0)


def heap_rows(row_bytes: int) -> int:
    """The most rows of ``row_bytes`` bytes that one block holds while staying below the CPU threshold
    ``CPU_MMAP_THRESHOLD_BYTES`` (so it is carved from the heap and reused), at least one."""
    return max(1, (CPU_MMAP_THRESHOLD_BYTES - 1) // max(1, row_bytes))
