"""Text side of the engine: token counts for planning, batches by token length or tree packs, model
inputs per batch.

Tokenising is the slow part of the text phase on a GPU (open_clip's tokenizer cleans every text
with ftfy, one text at a time), so it runs in DataLoader workers when the engine has them, and once:
the counting pass tokenises chunks of texts and keeps their ids (:class:`TokenIds`, two bytes a token
where the vocabulary fits), the plan reads each text's length and the ids it shares with the text
before it, and the encoding pass pads (or tree-packs) each planned batch from the kept ids while the
model encodes the one before. Models padded to a fixed length have no counting pass: their batches
are tokenised as they are made.

Tree packing (causal towers, :mod:`lgip_metric.models.tree_pack`): the texts are planned in sorted
order, where texts sharing a prefix sit together; a run of texts that each share more than the start
token with the one before becomes a pack, one sequence of its trie's nodes, up to ``PACK_TOKENS``
nodes; packs of similar size are batched together up to the padded tokens of the plain path's
largest batch, and on the CPU below the heap's mmap threshold (:func:`pack_budget`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch
from tqdm.auto import tqdm

from lgip_metric.scoring.distributed import Context
from lgip_metric.scoring.image_data import PREFETCH_BATCHES
from lgip_metric.models.base import Batch, Encoder
from lgip_metric.scoring.heap import heap_rows
from lgip_metric.scoring.input_cache import TokenStore

TOKENIZE_CHUNK = 1024  # texts a worker tokenises at a time in the counting pass (small: the workers finish together)
PACK_TOKENS = 256  # most trie nodes in one packed sequence (a text longer than this is a pack of its own)
MIN_SHARED = 2  # a text joins the pack of the text before it only when they share more than the start token
MIN_FILL = 0.75  # a pack joins a batch only when it fills at least this share of the batch's padded width


class TokenIds:
    """Token ids of some texts, by text position: one flat array (``uint16`` where every id fits, else
    ``int32``) and each text's slice of it. Kept from the counting pass to the batches, so that each
    text is tokenised once; DataLoader workers started after it share it (fork) or get a copy (spawn)."""

    def __init__(self, count: int, positions: np.ndarray, chunks: Sequence[tuple[np.ndarray, np.ndarray]]):
        """``chunks``: ``(flat ids, lengths)`` of ``positions`` in order, chunk after chunk; ``count``: all texts."""
        self.flat = np.concatenate([flat for flat, _ in chunks]) if chunks else np.zeros(0, np.uint16)
        lengths = np.concatenate([n for _, n in chunks]) if chunks else np.zeros(0, np.int64)
        self.bounds = np.concatenate([[0], np.cumsum(lengths)])
        self.slot = np.full(count, -1, np.int64)
        self.slot[positions] = np.arange(len(positions))

    def known(self, positions: np.ndarray) -> np.ndarray:
        """Per position, whether its ids are kept here."""
        return self.slot[positions] >= 0

    def row(self, k: int) -> np.ndarray:
        """The ids of the ``k``-th text kept (in the order given)."""
        return self.flat[self.bounds[k] : self.bounds[k + 1]]

    def ids(self, position: int) -> list[int]:
        """The token ids of the text at ``position``."""
        k = self.slot[position]
        if k < 0:
            raise KeyError(f"text {position} was not tokenised")
        return self.row(k).tolist()


def _flat_ids(ids: list[list[int]]) -> np.ndarray:
    """``ids`` end to end in the smallest of ``uint16``/``int32`` that holds them."""
    return _smallest(np.fromiter((t for row in ids for t in row), np.int64, sum(map(len, ids))))


def _smallest(flat: np.ndarray) -> np.ndarray:
    """Token ids in the smallest of ``uint16``/``int32`` that holds them."""
    return flat.astype(np.uint16 if flat.size == 0 or (flat.min() >= 0 and flat.max() < 2**16) else np.int32)


class _CountChunks(torch.utils.data.Dataset):
    """Item ``i`` is ``(ids, lengths)`` of the ``chunks[i]``-th chunk of ``texts``: its texts' token ids end to
    end (:func:`_flat_ids`) and each text's number of ids."""

    def __init__(self, encoder: Encoder, texts: Sequence[str], chunks: Sequence[int]):
        self.encoder, self.texts, self.chunks = encoder, texts, chunks

    def __len__(self) -> int:
        return len(self.chunks)

    def __getitem__(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        start = self.chunks[i] * TOKENIZE_CHUNK
        ids = self.encoder.tokenize(list(self.texts[start : start + TOKENIZE_CHUNK]))
        return _flat_ids(ids), np.array([len(row) for row in ids], np.int64)


class _BatchInputs(torch.utils.data.Dataset):
    """Item ``i`` is the model inputs of ``batches[i]``: its texts padded, or (a list of packs) tree-packed,
    from their kept ``tokens`` (tokenised here where there are none)."""

    def __init__(self, encoder: Encoder, texts: Sequence[str], batches: Sequence[np.ndarray | list[np.ndarray]],
                 tokens: TokenIds | None = None):
        self.encoder, self.texts, self.batches, self.tokens = encoder, texts, batches, tokens

    def __len__(self) -> int:
        return len(self.batches)

    def _ids(self, positions: np.ndarray) -> list[list[int]]:
        if self.tokens is None:
            return self.encoder.tokenize([self.texts[p] for p in positions])
        return [self.tokens.ids(p) for p in positions]

    def __getitem__(self, i: int) -> Batch:
        batch = self.batches[i]
        if isinstance(batch, list):
            return self.encoder.tree_batch([self._ids(pack) for pack in batch])
        return self.encoder.text_batch(self._ids(batch))


def _as_is(item):
    """A DataLoader item passed on unchanged (NumPy arrays stay arrays)."""
    return item


def _loader(items: torch.utils.data.Dataset, num_workers: int, pin_memory: bool = False,
            collate_fn=None) -> torch.utils.data.DataLoader:
    """The items in order, made by ``num_workers`` processes (0: in this one)."""
    return torch.utils.data.DataLoader(items, batch_size=None, num_workers=num_workers, pin_memory=pin_memory,
                                       collate_fn=collate_fn, prefetch_factor=PREFETCH_BATCHES if num_workers else None)


def count_chunks(n_texts: int) -> int:
    """How many tokenising chunks ``n_texts`` texts make."""
    return -(-n_texts // TOKENIZE_CHUNK)


def token_counts(encoder: Encoder, texts: Sequence[str], show: bool, num_workers: int,
                 chunks: Sequence[int]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """``(ids, lengths)`` (see :class:`_CountChunks`) of each of ``chunks`` of ``texts``, tokenised
    by ``num_workers`` processes; by chunk index."""
    counts = {}
    total = sum(min(TOKENIZE_CHUNK, len(texts) - c * TOKENIZE_CHUNK) for c in chunks)
    with tqdm(total=total, desc="tokenize", unit="text", disable=not show or None, leave=False) as bar:
        for c, chunk in zip(chunks, _loader(_CountChunks(encoder, texts, chunks), num_workers, collate_fn=_as_is)):
            counts[c] = chunk
            bar.update(len(chunk[1]))
    return counts


def batch_inputs(encoder: Encoder, texts: Sequence[str], batches: Sequence[np.ndarray | list[np.ndarray]],
                 num_workers: int, tokens: TokenIds | None = None):
    """The model inputs of every batch of ``texts`` positions (or list of packs) in order, from the kept
    ``tokens`` where there are some, made ahead by ``num_workers`` processes (pinned for a CUDA model)
    while the model encodes."""
    items = _BatchInputs(encoder, texts, batches, tokens)
    return iter(_loader(items, num_workers, pin_memory=encoder.device.type == "cuda"))


def plan_batches(encoder: Encoder, texts: Sequence[str], positions: np.ndarray, batch_size: int, ctx: Context,
                 show: bool, num_workers: int, windows: np.ndarray | None = None, kept: KeptTokens | None = None,
                 ) -> tuple[list[np.ndarray | list[np.ndarray]], TokenIds | None]:
    """The batches that encode ``texts[positions]``, largest first: lists of tree packs (arrays of text
    positions) when the encoder packs, else arrays of text positions, sorted by token length when the
    model pads dynamically and in position order when it pads to a fixed length; and the token ids of
    ``texts[positions]`` where the plan counted them (None for a fixed length). Each ``ctx`` rank
    tokenises a strided share of the chunks. With ``windows`` (a window number per text position), each
    window's texts are planned on their own, window after window in ascending order (:func:`window_spans`).
    With ``kept``, the ids a model of the same tokenizer kept are read, not tokenised again (and the new ones
    kept when its store writes); the plan is the same either way."""
    spans = window_spans(positions, windows)
    if not counts_tokens(encoder):
        return [span[b] for span in spans for b in length_batches(np.zeros(len(span), np.int64), batch_size, False)], None
    if encoder.tree_packing:  # shared prefixes side by side
        spans = [np.array(sorted(span.tolist(), key=texts.__getitem__), np.int64) for span in spans]
    order = np.concatenate(spans) if spans else np.zeros(0, np.int64)
    tokens, lengths, shared = _gathered_counts(encoder, texts, order, ctx, show, num_workers, kept)
    bounds = np.cumsum([0, *map(len, spans)])
    parts = [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:])]
    if not encoder.tree_packing:
        return [order[part][b] for part in parts for b in length_batches(lengths[part], batch_size, True)], tokens
    budget = pack_budget(encoder, batch_size * int(lengths.max(initial=1)))
    plan = []
    for part in parts:  # a window's first text starts a pack: no pack spans two windows
        packs, nodes = tree_packs(lengths[part], shared[part])
        plan += [[order[part][pack] for pack in batch] for batch in pack_batches(packs, nodes, budget)]
    return plan, tokens


def counts_tokens(encoder: Encoder) -> bool:
    """Whether the plan tokenises its texts before batching them (and keeps their ids): where it packs trees or pads
    each batch to its longest text; a model padded to a fixed length tokenises each batch as it is made."""
    return encoder.tree_packing or encoder.dynamic_padding


def window_spans(positions: np.ndarray, windows: np.ndarray | None) -> list[np.ndarray]:
    """``positions`` split by their ``windows`` number, in ascending window order, each in the order given
    (all of them in one span without windows)."""
    if windows is None or not len(positions):
        return [positions]
    number = windows[positions]
    order = np.argsort(number, kind="stable")
    return np.split(positions[order], np.flatnonzero(np.diff(number[order])) + 1)


def image_windows(count: int, columns, images_per_window: int) -> np.ndarray:
    """A window number per text position: the last window of ``images_per_window`` images (by image
    position) whose rows name it, over ``columns`` of ``(image positions, text positions)``; 0 for a text no
    row names. Planning window by window bounds the texts the join holds for a partner, which grow with the
    whole set when every text is planned at once (a caption waits for its last variant). The engine runs
    the windows last first, so a text that rows of several windows name (a short caption's variant can be
    another image's too) comes with the first of them and is the one text held for the others."""
    window = np.zeros(count, np.int64)
    for images, text_positions in columns:
        np.maximum.at(window, np.asarray(text_positions, np.int64), np.asarray(images, np.int64) // images_per_window)
    return window


def pack_budget(encoder: Encoder, plain_tokens: int) -> int:
    """The most padded tokens of one packed batch: ``plain_tokens`` (the plain path's largest batch) on a
    GPU; on the CPU also few enough that a layer's widest activation stays below the heap's mmap
    threshold (:func:`~lgip_metric.scoring.heap.heap_rows`), so it is reused, not mapped and faulted afresh."""
    if encoder.device.type != "cpu":
        return plain_tokens
    return min(plain_tokens, heap_rows(encoder.text_token_bytes))


@dataclass
class KeptTokens:
    """A :class:`~lgip_metric.scoring.input_cache.TokenStore` of the encoder's tokenizer and every text's key in it;
    ``read`` counts the texts whose ids came from it."""

    store: TokenStore
    keys: Sequence[str]
    read: int = 0


KEPT_CHUNK = 500_000  # texts per chunk of kept token ids


def _gathered_counts(encoder: Encoder, texts: Sequence[str], positions: np.ndarray, ctx: Context, show: bool,
                     num_workers: int, kept: KeptTokens | None = None) -> tuple[TokenIds, np.ndarray, np.ndarray]:
    """The token ids of ``texts[positions]``, their lengths and the ids each shares with the text before it
    (in ``positions`` order): read from ``kept`` where it has them, the rest counted by all ranks."""
    known = kept.store.lookup([kept.keys[p] for p in positions]) if kept is not None else {}
    todo = np.setdiff1d(np.arange(len(positions)), np.fromiter(known, np.int64, len(known)))
    chunks = count_chunks(len(todo))
    counts = {}
    ordered = [texts[p] for p in positions[todo]]
    for part in ctx.all_gather(token_counts(encoder, ordered, show, num_workers, ctx.shard(list(range(chunks))))):
        counts.update(part)
    parts = [counts[c] for c in range(chunks)]
    if known:
        new = TokenIds(len(todo), np.arange(len(todo)), parts)
        rows = dict(known)
        rows.update((int(i), new.flat[new.bounds[k] : new.bounds[k + 1]]) for k, i in enumerate(todo.tolist()))
        in_order = [rows[i] for i in range(len(positions))]
        flat = np.concatenate(in_order).astype(np.int64) if in_order else np.zeros(0, np.int64)
        parts = [(_smallest(flat), np.array([len(row) for row in in_order], np.int64))]
        kept.read = len(known)
    tokens = TokenIds(len(texts), positions, parts)
    if kept is not None and kept.store.write_new and ctx.is_main and len(todo):
        for start in range(0, len(todo), KEPT_CHUNK):
            chosen = todo[start : start + KEPT_CHUNK]
            kept.store.write([kept.keys[p] for p in positions[chosen]], [tokens.row(k) for k in chosen.tolist()])
    lengths = np.diff(tokens.bounds)
    return tokens, lengths, shared_prefixes(tokens.flat, tokens.bounds)


SHARED_STEP = 4096  # texts compared at once by :func:`shared_prefixes` (a few MB, whatever the number of texts)


def shared_prefixes(flat: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """How many leading ids each text (``flat[bounds[k] : bounds[k + 1]]``) shares with the text before it
    (0 for the first): :func:`~lgip_metric.models.tree_pack.shared_prefix` of each neighbouring pair, in blocks."""
    count = len(bounds) - 1
    lengths = np.diff(bounds)
    out = np.zeros(max(count, 0), np.int64)
    for start in range(1, count, SHARED_STEP):
        rows = np.arange(start, min(start + SHARED_STEP, count))
        width = int(max(1, np.minimum(lengths[rows], lengths[rows - 1]).max()))
        before, after = _padded(flat, bounds, rows - 1, width, -1), _padded(flat, bounds, rows, width, -2)
        same = before == after
        out[rows] = np.where(same.all(axis=1), width, same.argmin(axis=1))
    return out


def _padded(flat: np.ndarray, bounds: np.ndarray, rows: np.ndarray, width: int, fill: int) -> np.ndarray:
    """The first ``width`` ids of each of ``rows``, one row each, filled with ``fill`` past a text's end."""
    out = np.full((len(rows), width), fill, np.int32 if flat.dtype != np.int64 else np.int64)
    lengths = np.minimum(np.diff(bounds)[rows], width)
    which = np.repeat(np.arange(len(rows)), lengths)
    column = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    out[which, column] = flat[bounds[rows][which] + column]
    return out


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
