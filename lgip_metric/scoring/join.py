"""Per-row cosines from text embeddings that arrive in any order, each kept only while a row needs it.

The engine streams the text embeddings (cache hits, then its length-sorted batches) through a
:class:`ScoreJoin`. An *image column* (``image_idx``, ``text_idx``) is a dot product of an image
embedding, all known up front, with a text: it is computed when the text arrives. The *text
column* (``left_idx``, ``right_idx``: caption and variant) needs both texts: it is computed when
the second one arrives, and a text stays in memory only until every text-column row that names it
is done. Since captions and their variants have nearly equal token lengths, few texts wait at once.

Every value is ``(a.double() * b.double()).sum()`` over one row, which torch computes the same way
whatever the number of rows in the call: the join's values are bit-identical to scoring every row
at once from one table of all embeddings.
"""
from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import torch


def cosines(left: torch.Tensor, right: torch.Tensor) -> np.ndarray:
    """Row-wise dot products of unit vectors, in float64."""
    return left.double().mul_(right).sum(dim=1).numpy()  # float32 x float32 is exact in float64: same products


BLOCK_BYTES = 1 << 20  # the float64 copy of one block of rows, at most; see ``row_blocks``


def row_blocks(count: int, dim: int):
    """Slices of ``count`` rows whose float64 copies of width ``dim`` take at most ``BLOCK_BYTES``.

    Scoring a batch's rows a bounded block at a time keeps every temporary tensor small and of a
    few sizes: large temporaries of changing sizes, freed while the bank and the image embeddings
    stay, leave the C allocator's heap fragmented, which grew this process by tens of MB per
    1,000 images. A row's value does not depend on the rows scored beside it."""
    rows = max(1, BLOCK_BYTES // (8 * dim))
    return (slice(start, min(start + rows, count)) for start in range(0, count, rows))


class _Index:
    """The entries of an index array grouped by value: ``members(values)`` lists the entries naming any of them."""

    def __init__(self, values: np.ndarray, size: int):
        kind = np.int32 if len(values) < 2**31 else np.int64  # held while every text streams: half the bytes
        self.order = np.argsort(values, kind="stable").astype(kind)
        self.starts = np.concatenate([[0], np.cumsum(np.bincount(values, minlength=size))]).astype(kind)

    def members(self, values: np.ndarray) -> np.ndarray:
        begin, end = self.starts[values], self.starts[values + 1]
        counts = end - begin
        total = int(counts.sum())
        if not total:
            return np.zeros(0, np.int64)
        offsets = np.repeat(begin - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
        return self.order[offsets + np.arange(total)]


BLOCK_ROWS = 4096  # text embeddings per block of the bank: each get and put loops over the blocks it touches, and
# a long-held text can sit in any block (with 512 the join of 118,641 texts took twice as long, in a thread beside the model)


class _Bank:
    """Embeddings kept between batches, in the slots of fixed-size blocks: growing never copies what is held."""

    def __init__(self, size: int, dim: int):
        self.slot = np.full(size, -1, np.int64)  # text position -> slot (block * BLOCK_ROWS + row), -1 when not held
        self.dim = dim
        self.blocks: list[torch.Tensor] = []
        self.free: list[int] = []

    def put(self, positions: np.ndarray, emb: torch.Tensor) -> None:
        while len(self.free) < len(positions):
            first = len(self.blocks) * BLOCK_ROWS
            self.blocks.append(torch.zeros(BLOCK_ROWS, self.dim))
            self.free.extend(range(first + BLOCK_ROWS - 1, first - 1, -1))
        slots = np.array(self.free[len(self.free) - len(positions) :][::-1], np.int64)  # popped from the end
        del self.free[len(self.free) - len(positions) :]
        self.slot[positions] = slots
        for block, rows, where in self._by_block(slots):  # index_copy_: indexed assignment costs ms per call
            self.blocks[block].index_copy_(0, rows, emb.index_select(0, where))

    def get(self, positions: np.ndarray) -> torch.Tensor:
        slots = self.slot[positions]
        out = torch.empty(len(slots), self.dim)
        for block, rows, where in self._by_block(slots):
            out.index_copy_(0, where, self.blocks[block].index_select(0, rows))
        return out

    @staticmethod
    def _by_block(slots: np.ndarray):
        """``(block, rows in it, where in slots)`` for every block that ``slots`` name."""
        blocks = slots // BLOCK_ROWS
        order = np.argsort(blocks, kind="stable")
        ordered = blocks[order]
        starts = np.flatnonzero(np.concatenate([[True], ordered[1:] != ordered[:-1]])) if len(order) else order
        for begin, end in zip(starts, [*starts[1:], len(order)]):
            where = order[begin:end]
            yield int(ordered[begin]), torch.from_numpy(slots[where] % BLOCK_ROWS), torch.from_numpy(where)

    def drop(self, positions: np.ndarray) -> None:
        self.free.extend(self.slot[positions].tolist())
        self.slot[positions] = -1

    def __len__(self) -> int:
        return int((self.slot >= 0).sum())


class ScoreJoin:
    """The values of some image columns and one text column over ``n_texts`` text positions."""

    def __init__(self, images: torch.Tensor, n_texts: int, image_columns: dict[str, tuple[np.ndarray, np.ndarray]],
                 text_column: tuple[np.ndarray, np.ndarray]):
        self.images = images
        self.image_columns = {name: (img, txt, _Index(txt, n_texts)) for name, (img, txt) in image_columns.items()}
        self.left, self.right = text_column
        self.by_left, self.by_right = _Index(self.left, n_texts), _Index(self.right, n_texts)
        self.values = {name: np.full(len(txt), np.nan) for name, (_, txt) in image_columns.items()}
        self.values["text"] = np.full(len(self.left), np.nan)
        self.waiting = (np.bincount(self.left, minlength=n_texts) + np.bincount(self.right, minlength=n_texts)).astype(np.int64)
        self.arrived = np.zeros(n_texts, bool)
        self.bank = _Bank(n_texts, images.shape[1])

    def add(self, positions, emb: torch.Tensor) -> None:
        """Take the embeddings of texts ``positions`` (each position arrives once)."""
        positions = np.asarray(positions, np.int64)
        if not len(positions):
            return
        self.bank.put(positions, emb)
        self.arrived[positions] = True
        order = np.argsort(positions)
        for name, (img, txt, index) in self.image_columns.items():
            entries = index.members(positions)
            if len(entries):  # these texts are all in this call: their rows of ``emb``, found by position
                rows_of_emb = order[np.searchsorted(positions[order], txt[entries])]
                for block in row_blocks(len(entries), emb.shape[1]):
                    self.values[name][entries[block]] = cosines(
                        self.images.index_select(0, torch.from_numpy(img[entries[block]])),
                        emb.index_select(0, torch.from_numpy(rows_of_emb[block])))
        rows = np.unique(np.concatenate([self.by_left.members(positions), self.by_right.members(positions)]))
        rows = rows[self.arrived[self.left[rows]] & self.arrived[self.right[rows]]]
        left, right = self.left[rows], self.right[rows]
        if len(rows):
            for block in row_blocks(len(rows), emb.shape[1]):
                self.values["text"][rows[block]] = cosines(self.bank.get(left[block]), self.bank.get(right[block]))
            np.subtract.at(self.waiting, left, 1)
            np.subtract.at(self.waiting, right, 1)
        touched = np.unique(np.concatenate([positions, left, right]))
        self.bank.drop(touched[self.waiting[touched] == 0])

    def held(self) -> int:
        """How many text embeddings are kept now (texts whose rows wait for a partner)."""
        return len(self.bank)


class Behind:
    """Runs calls in one background thread, in the order given, with at most ``depth`` waiting: the
    join's work on a batch overlaps the model's encoding of the next (torch releases the GIL in both).
    ``settle()`` waits for all of them and raises the first error; leaving the ``with`` block settles.
    ``inline`` runs each call at once in the caller's thread instead: on a CPU, where the model's forward
    passes already take every core, a second thread gains little and its own C heap (glibc gives each
    thread an arena) grew peak RSS by 10 MB per 1,000 images in ``benchmarks/bench_scale.py``."""

    def __init__(self, depth: int = 4, inline: bool = False):
        self.depth = depth
        self.pending: deque[Future] = deque()
        self.pool = None if inline else ThreadPoolExecutor(1, thread_name_prefix="lgip-join")

    def submit(self, call, *args) -> None:
        if self.pool is None:
            call(*args)
            return
        self.pending.append(self.pool.submit(call, *args))
        while len(self.pending) > self.depth:
            self.pending.popleft().result()

    def settle(self) -> None:
        while self.pending:
            self.pending.popleft().result()

    def __enter__(self) -> "Behind":
        return self

    def __exit__(self, kind, error, trace) -> None:
        try:
            if kind is None:
                self.settle()
        finally:
            if self.pool is not None:
                self.pool.shutdown(wait=True, cancel_futures=True)
