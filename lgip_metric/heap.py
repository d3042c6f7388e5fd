"""The C heap of a scoring process: large blocks get their own mappings, so freeing them returns them.

glibc's ``malloc`` serves a block of at least ``M_MMAP_THRESHOLD`` bytes (128 KiB at start) from its
own ``mmap`` and returns it to the system when freed; but each such free raises the threshold to that
block's size (up to 32 MiB), after which blocks of that size are carved from the heap. The engine
frees large temporaries of many sizes (batches of embeddings, their float64 copies) while the image
embeddings and the held text embeddings stay, so those carvings left the heap fragmented: measured
with ``benchmarks/bench_scale.py`` (d = 1024), tens of MB of peak RSS per 1,000 images that no
object held. Fixing the threshold (``mallopt``) stops the adjustment. Elsewhere (no glibc) nothing changes.
"""
from __future__ import annotations

import ctypes

M_MMAP_THRESHOLD = -3  # mallopt's parameter number, <malloc.h>
MMAP_THRESHOLD_BYTES = 128 * 1024  # glibc's own starting value


def map_large_blocks() -> bool:
    """Fix glibc's mmap threshold at its starting value for this process; False where there is no ``mallopt``."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))
