"""Text side of the engine: token lengths for planning, batches by token length, model inputs per batch.

Tokenising is the slow part of the text phase on a GPU (open_clip's tokenizer cleans every text
with ftfy, one text at a time), so both passes run in DataLoader workers when the engine has
them: the length pass over chunks of texts, the encoding pass over the planned batches, each
batch tokenised and padded while the model encodes the one before. Token ids exist per batch only.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
from tqdm.auto import tqdm

from lgip_metric.scoring.image_data import PREFETCH_BATCHES
from lgip_metric.models.base import Batch, Encoder

TOKENIZE_CHUNK = 4096


class _LengthChunks(torch.utils.data.Dataset):
    """Item ``i`` is the token lengths of the ``i``-th chunk of ``texts``."""

    def __init__(self, encoder: Encoder, texts: Sequence[str]):
        self.encoder, self.texts = encoder, texts

    def __len__(self) -> int:
        return -(-len(self.texts) // TOKENIZE_CHUNK)

    def __getitem__(self, i: int) -> np.ndarray:
        chunk = list(self.texts[i * TOKENIZE_CHUNK : (i + 1) * TOKENIZE_CHUNK])
        return np.array([len(ids) for ids in self.encoder.tokenize(chunk)], np.int64)


class _BatchInputs(torch.utils.data.Dataset):
    """Item ``i`` is the model inputs of ``batches[i]``: its texts tokenised and padded."""

    def __init__(self, encoder: Encoder, texts: Sequence[str], batches: Sequence[np.ndarray]):
        self.encoder, self.texts, self.batches = encoder, texts, batches

    def __len__(self) -> int:
        return len(self.batches)

    def __getitem__(self, i: int) -> Batch:
        return self.encoder.text_batch(self.encoder.tokenize([self.texts[p] for p in self.batches[i]]))


def _loader(items: torch.utils.data.Dataset, num_workers: int, pin_memory: bool = False) -> torch.utils.data.DataLoader:
    """The items in order, made by ``num_workers`` processes (0: in this one)."""
    return torch.utils.data.DataLoader(items, batch_size=None, num_workers=num_workers, pin_memory=pin_memory,
                                       prefetch_factor=PREFETCH_BATCHES if num_workers else None)


def token_lengths(encoder: Encoder, texts: Sequence[str], show: bool, num_workers: int = 0) -> np.ndarray:
    """The number of token ids of every text, tokenised in chunks (by ``num_workers`` processes)
    whose ids are dropped at once."""
    lengths = np.zeros(len(texts), np.int64)
    with tqdm(total=len(texts), desc="tokenize", unit="text", disable=not show or None, leave=False) as bar:
        for i, chunk in enumerate(_loader(_LengthChunks(encoder, texts), num_workers)):
            lengths[i * TOKENIZE_CHUNK : i * TOKENIZE_CHUNK + len(chunk)] = chunk
            bar.update(len(chunk))
    return lengths


def batch_inputs(encoder: Encoder, texts: Sequence[str], batches: Sequence[np.ndarray], num_workers: int):
    """The model inputs of every batch of ``texts`` positions in order, made ahead by ``num_workers``
    processes (pinned for a CUDA model) while the model encodes."""
    return iter(_loader(_BatchInputs(encoder, texts, batches), num_workers, pin_memory=encoder.device.type == "cuda"))


def length_batches(lengths: Sequence[int], batch_size: int, by_length: bool) -> list[np.ndarray]:
    """Batches of indices into ``lengths``: longest first when ``by_length`` (so padding is minimal),
    ties and the unsorted case in index order."""
    lengths = np.asarray(lengths, np.int64)
    order = np.lexsort((np.arange(len(lengths)), -lengths)) if by_length else np.arange(len(lengths))
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
