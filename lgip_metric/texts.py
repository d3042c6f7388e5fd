"""Text side of the engine: token lengths for planning, batches by token length, token ids per batch."""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from tqdm.auto import tqdm

TOKENIZE_CHUNK = 4096


def token_lengths(tokenize: Callable[[list[str]], list[list[int]]], texts: Sequence[str], show: bool) -> np.ndarray:
    """The number of token ids of every text, tokenised in chunks whose ids are dropped at once."""
    lengths = np.zeros(len(texts), np.int64)
    with tqdm(total=len(texts), desc="tokenize", unit="text", disable=not show or None, leave=False) as bar:
        for start in range(0, len(texts), TOKENIZE_CHUNK):
            chunk = texts[start : start + TOKENIZE_CHUNK]
            lengths[start : start + len(chunk)] = [len(ids) for ids in tokenize(list(chunk))]
            bar.update(len(chunk))
    return lengths


def length_batches(lengths: Sequence[int], batch_size: int, by_length: bool) -> list[np.ndarray]:
    """Batches of indices into ``lengths``: longest first when ``by_length`` (so padding is minimal),
    ties and the unsorted case in index order."""
    lengths = np.asarray(lengths, np.int64)
    order = np.lexsort((np.arange(len(lengths)), -lengths)) if by_length else np.arange(len(lengths))
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
