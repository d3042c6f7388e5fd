"""The C heap of a scoring process: blocks of 4 MiB and more get their own mappings, so freeing them returns them.

glibc's ``malloc`` serves a block of at least ``M_MMAP_THRESHOLD`` bytes (128 KiB at start) from its
own ``mmap`` and returns it to the system when freed; but each such free raises the threshold to that
block's size (up to 32 MiB), after which blocks of that size are carved from the heap. The engine
frees large temporaries of many sizes while the image embeddings and the held text embeddings stay,
and those carvings fragment the heap. Fixing the threshold (``mallopt``) stops the adjustment. At
128 KiB every decoded image and batch of embeddings is a fresh mapping (page faults, zeroing): with
``benchmarks/bench_scale.py`` (d = 1024, 2 CPU cores) peak RSS grew 44 and 49 MB per 1,000 images at
4 MiB, 40 and 54 at 128 KiB, 54 to 64 without a fixed threshold, while ViT-L/14 scoring on an H100
(``benchmarks/bench_scoring.py``, batch 256) ran 4,486 and 4,324 pairs/s at 4 MiB, 4,208 and 4,232 at
128 KiB. Elsewhere (no glibc) nothing changes.

The flip side: a temporary at or above the threshold is mapped and faulted in afresh every time. The
CPU text phase therefore keeps each layer's activations below it (:func:`heap_rows`): packed ViT-B/16
batches of about 1,000 tokens (8 KiB per token in the MLP) took twice the page faults of the plain
path's batches, and ran 1.3x where a floor that reused the freed heap ran 1.9x.
"""
from __future__ import annotations

import ctypes

M_MMAP_THRESHOLD = -3  # mallopt's parameter number, <malloc.h>
MMAP_THRESHOLD_BYTES = 4 * 2**20  # above a decoded COCO image and a batch's embeddings; glibc's ceiling is 32 MiB


def map_large_blocks() -> bool:
    """Fix glibc's mmap threshold at ``MMAP_THRESHOLD_BYTES`` for this process; False where there is no ``mallopt``."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))


def heap_rows(row_bytes: int) -> int:
    """The most rows of ``row_bytes`` bytes that one block holds while staying below ``MMAP_THRESHOLD_BYTES``
    (so it is carved from the heap and reused), at least one."""
    return max(1, (MMAP_THRESHOLD_BYTES - 1) // max(1, row_bytes))
