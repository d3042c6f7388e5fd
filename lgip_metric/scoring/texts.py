"""Text side of the engine: token counts for planning, batches by token length or tree packs, model
inputs per batch.

Tokenising is the slow part of the text phase on a GPU (open_clip's tokenizer cleans every text
with ftfy, one text at a time), so both passes run in DataLoader workers when the engine has
them: the counting pass over chunks of texts, the encoding pass over the planned batches, each
batch tokenised and padded (or tree-packed) while the model encodes the one before. Token ids exist
per batch only: the plan needs only each text's length and the ids it shares with the text before it.

Tree packing (causal towers, :mod:`lgip_metric.models.tree_pack`): the texts are planned in sorted
order, where texts sharing a prefix sit together; a run of texts that each share more than the start
token with the one before becomes a pack, one sequence of its trie's nodes, up to ``PACK_TOKENS``
nodes; packs of similar size are batched together up to the padded tokens of the plain path's
largest batch, and on the CPU below the heap's mmap threshold (:func:`pack_budget`).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
from tqdm.auto import tqdm

from lgip_metric.scoring.distributed import Context
from lgip_metric.scoring.image_data import PREFETCH_BATCHES
from lgip_metric.models.base import Batch, Encoder
from lgip_metric.models.tree_pack import shared_prefix
from lgip_metric.scoring.heap import heap_rows

TOKENIZE_CHUNK = 4096
PACK_TOKENS = 256  # most trie nodes in one packed sequence (a text longer than this is a pack of its own)
MIN_SHARED = 2  # a text joins the pack of the text before it only when they share more than the start token
MIN_FILL = 0.75  # a pack joins a batch only when it fills at least this share of the batch's padded width


class _CountChunks(torch.utils.data.Dataset):
    """Item ``i`` is ``[lengths, shared]`` of the ``chunks[i]``-th chunk of ``texts``: each text's
    number of token ids and how many leading ids it shares with the text before it (0 for the first)."""

    def __init__(self, encoder: Encoder, texts: Sequence[str], chunks: Sequence[int]):
        self.encoder, self.texts, self.chunks = encoder, texts, chunks

    def __len__(self) -> int:
        return len(self.chunks)

    def __getitem__(self, i: int) -> np.ndarray:
        start = self.chunks[i] * TOKENIZE_CHUNK
        ids = self.encoder.tokenize(list(self.texts[max(start - 1, 0) : start + TOKENIZE_CHUNK]))
        ids = ids if start else [[], *ids]  # the first text has none before it
        return np.array([[len(b) for b in ids[1:]], [shared_prefix(a, b) for a, b in zip(ids, ids[1:])]], np.int64)


class _BatchInputs(torch.utils.data.Dataset):
    """Item ``i`` is the model inputs of ``batches[i]``: its texts tokenised and padded, or (a list of
    packs) tree-packed."""

    def __init__(self, encoder: Encoder, texts: Sequence[str], batches: Sequence[np.ndarray | list[np.ndarray]]):
        self.encoder, self.texts, self.batches = encoder, texts, batches

    def __len__(self) -> int:
        return len(self.batches)

    def __getitem__(self, i: int) -> Batch:
        batch, tokenize = self.batches[i], self.encoder.tokenize
        if isinstance(batch, list):
            return self.encoder.tree_batch([tokenize([self.texts[p] for p in pack]) for pack in batch])
        return self.encoder.text_batch(tokenize([self.texts[p] for p in batch]))


def _loader(items: torch.utils.data.Dataset, num_workers: int, pin_memory: bool = False) -> torch.utils.data.DataLoader:
    """The items in order, made by ``num_workers`` processes (0: in this one)."""
    return torch.utils.data.DataLoader(items, batch_size=None, num_workers=num_workers, pin_memory=pin_memory,
                                       prefetch_factor=PREFETCH_BATCHES if num_workers else None)


def count_chunks(n_texts: int) -> int:
    """How many tokenising chunks ``n_texts`` texts make."""
    return -(-n_texts // TOKENIZE_CHUNK)


def token_counts(encoder: Encoder, texts: Sequence[str], show: bool, num_workers: int,
                 chunks: Sequence[int]) -> dict[int, np.ndarray]:
    """``[lengths, shared]`` (see :class:`_CountChunks`) of each of ``chunks`` of ``texts``, tokenised
    by ``num_workers`` processes, the ids dropped at once; by chunk index."""
    counts = {}
    total = sum(min(TOKENIZE_CHUNK, len(texts) - c * TOKENIZE_CHUNK) for c in chunks)
    with tqdm(total=total, desc="tokenize", unit="text", disable=not show or None, leave=False) as bar:
        for c, chunk in zip(chunks, _loader(_CountChunks(encoder, texts, chunks), num_workers)):
            counts[c] = np.asarray(chunk)
            bar.update(chunk.shape[1])
    return counts


def batch_inputs(encoder: Encoder, texts: Sequence[str], batches: Sequence[np.ndarray | list[np.ndarray]],
                 num_workers: int):
    """The model inputs of every batch of ``texts`` positions (or list of packs) in order, made ahead
    by ``num_workers`` processes (pinned for a CUDA model) while the model encodes."""
    return iter(_loader(_BatchInputs(encoder, texts, batches), num_workers, pin_memory=encoder.device.type == "cuda"))


def plan_batches(encoder: Encoder, texts: Sequence[str], positions: np.ndarray, batch_size: int, ctx: Context,
                 show: bool, num_workers: int) -> list[np.ndarray | list[np.ndarray]]:
    """The batches that encode ``texts[positions]``, largest first: lists of tree packs (arrays of text
    positions) when the encoder packs, else arrays of text positions, sorted by token length when the
    model pads dynamically and in position order when it pads to a fixed length. Each ``ctx`` rank
    tokenises a strided share of the chunks."""
    if encoder.tree_packing:
        order = np.array(sorted(positions.tolist(), key=texts.__getitem__), np.int64)  # shared prefixes side by side
        lengths, shared = _gathered_counts(encoder, [texts[p] for p in order], ctx, show, num_workers)
        packs, nodes = tree_packs(lengths, shared)
        budget = pack_budget(encoder, batch_size * int(lengths.max(initial=1)))
        return [[order[pack] for pack in batch] for batch in pack_batches(packs, nodes, budget)]
    lengths = np.zeros(len(positions), np.int64)
    if encoder.dynamic_padding:
        lengths = _gathered_counts(encoder, [texts[p] for p in positions], ctx, show, num_workers)[0]
    return [positions[b] for b in length_batches(lengths, batch_size, encoder.dynamic_padding)]


def pack_budget(encoder: Encoder, plain_tokens: int) -> int:
    """The most padded tokens of one packed batch: ``plain_tokens`` (the plain path's largest batch) on a
    GPU; on the CPU also few enough that a layer's widest activation stays below the heap's mmap
    threshold (:func:`~lgip_metric.scoring.heap.heap_rows`), so it is reused, not mapped and faulted afresh."""
    if encoder.device.type != "cpu":
        return plain_tokens
    return min(plain_tokens, heap_rows(encoder.text_token_bytes))


def _gathered_counts(encoder: Encoder, texts: Sequence[str], ctx: Context, show: bool,
                     num_workers: int) -> tuple[np.ndarray, np.ndarray]:
    """Token lengths of ``texts`` and the ids each shares with the text before it, counted by all ranks."""
    chunks = count_chunks(len(texts))
    counts = {}
    for part in ctx.all_gather(token_counts(encoder, texts, show, num_workers, ctx.shard(list(range(chunks))))):
        counts.update(part)
    joined = np.concatenate([counts[c] for c in range(chunks)], axis=1) if chunks else np.zeros((2, 0), np.int64)
    return joined[0], joined[1]


def length_batches(lengths: Sequence[int], batch_size: int, by_length: bool) -> list[np.ndarray]:
    """Batches of indices into ``lengths``: longest first when ``by_length`` (so padding is minimal),
    ties and the unsorted case in index order."""
    lengths = np.asarray(lengths, np.int64)
    order = np.lexsort((np.arange(len(lengths)), -lengths)) if by_length else np.arange(len(lengths))
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def tree_packs(lengths: Sequence[int], shared: Sequence[int], pack_tokens: int = PACK_TOKENS) -> tuple[list[np.ndarray], np.ndarray]:
    """Packs of consecutive texts (index arrays into ``lengths``, in sorted-text order) and each pack's
    node bound: a text joins the pack before it when it shares at least ``MIN_SHARED`` leading ids with
    the text before it and the pack stays within ``pack_tokens`` nodes. The bound (a pack's lengths less
    what each text shares with the one before) is never below the pack's trie size."""
    lengths, shared = np.asarray(lengths, np.int64), np.asarray(shared, np.int64)
    starts, nodes = [], []
    for i, (length, common) in enumerate(zip(lengths.tolist(), shared.tolist())):
        grown = nodes[-1] + length - common if nodes else 0
        if nodes and common >= MIN_SHARED and grown <= pack_tokens:
            nodes[-1] = grown
        else:
            starts.append(i)
            nodes.append(length)
    bounds = [*starts, len(lengths)]
    return [np.arange(a, b) for a, b in zip(bounds, bounds[1:])], np.array(nodes, np.int64)


def pack_batches(packs: list[np.ndarray], nodes: np.ndarray, batch_tokens: int) -> list[list[np.ndarray]]:
    """Packs grouped into batches, largest first, each padded to its largest pack within ``batch_tokens``
    tokens (at least one pack per batch); a pack below ``MIN_FILL`` of the batch's width starts the next
    batch, so that padding stays small where pack sizes differ a lot."""
    order = np.lexsort((np.arange(len(nodes)), -nodes))
    batches: list[list[np.ndarray]] = []
    width = 0
    for i in order.tolist():
        if batches and (len(batches[-1]) + 1) * width <= batch_tokens and nodes[i] >= MIN_FILL * width:
            batches[-1].append(packs[i])
        else:
            batches.append([packs[i]])
            width = int(nodes[i])
    return batches
