"""Per-image numerators and denominators of every reported number, and the image bootstrap over them
(resampled multiplicities, replicates, percentile intervals); part of :mod:`lgip_metric.stats`."""
from __future__ import annotations

from collections import deque
from concurrent.futures import ThreadPoolExecutor
from itertools import count as counter

import numpy as np

from .stats_names import METRICS, NWAY, NWAY_TYPES
from .stats_sums import Summary, report_blocks


_CHUNK_CELLS = 1 << 22  # bootstrap weights generated ~4M cells at a time
_EXACT_INTEGERS = 2**53  # float64 holds every integer up to this one
_AHEAD = 2  # chunks of bootstrap weights the drawing thread may prepare ahead of their product


def per_image(summary: Summary, pair_level: bool) -> tuple[list, np.ndarray, np.ndarray, np.ndarray, list]:
    """Columns (type, kind, metric), per-image numerators, the per-image denominators (one per
    block: its metrics share it) with each column's denominator, and the support.

    Every statistic is sum(numerator) / sum(denominator) over images, so a resample of images
    with multiplicities w gives w @ numerator / w @ denominator.
    """
    columns, numerators, denominators, which, support = [], [], [], [], []
    n_images, n_strata = len(summary.image_keys), len(summary.strata)
    bins = summary.cell_stratum * n_images + summary.pair_image[summary.cell_pair]  # (stratum, image) of each cell
    by_stratum = _image_sums(bins, summary.count, summary.value, summary.positive, n_strata, n_images, pair_level)
    blocks = report_blocks(summary)
    pooled = iter(_pooled_image_sums(summary, [strata for _, _, strata in blocks if len(strata) > 1], pair_level))
    wins = None  # SNARE n-way, per stratum and image: base pairs whose caption beats every scramble
    nway = np.array([type_ in NWAY_TYPES for type_, _ in summary.strata])
    if nway.any():
        cells = np.flatnonzero(nway[summary.cell_stratum])
        wins = np.bincount(bins[cells], weights=summary.original_max[cells] > summary.variant_max[cells],
                           minlength=n_strata * n_images)
    for type_, kind, strata in blocks:
        if len(strata) == 1:
            image_pairs, image_rows, *sums = (m[strata[0]] for m in by_stratum)
        else:
            image_pairs, image_rows, *sums = next(pooled)
        denominators.append(image_rows if pair_level else image_pairs)
        for metric, numerator in zip(METRICS[kind], sums):
            numerators.append(numerator)
            which.append(len(denominators) - 1)
            columns.append((type_, kind, metric))
            support.append((image_pairs, image_rows))
        if type_ in NWAY_TYPES:
            numerators.append(wins.reshape(n_strata, n_images)[strata[0]])
            if pair_level:
                denominators.append(image_pairs)
            which.append(len(denominators) - 1)
            columns.append((type_, kind, NWAY))
            support.append((image_pairs, image_rows))
    return columns, np.stack(numerators, axis=1), np.stack(denominators, axis=1), np.array(which), support


def _image_sums(bins, count, value, positive, n_blocks: int, n_images: int, pair_level: bool) -> tuple:
    """Per image sums of per base pair sums, one row per block.

    The inputs hold one entry per (block, base pair) with rows, base pairs ascending within a
    block; ``bins`` is block * n_images + the pair's image. Returns (blocks, images) float arrays:
    base pairs with rows, variant rows, and the numerators of the value and positive statistics
    (sums, or per-pair means unless ``pair_level``).
    """
    def per_image(weights=None):
        return np.bincount(bins, weights=weights, minlength=n_blocks * n_images).reshape(-1, n_images)

    sums = (value, positive) if pair_level else (value / count, positive / count)
    return (per_image().astype(np.float64), per_image(count), *map(per_image, sums))


def _pooled_image_sums(summary: Summary, blocks: list[list[int]], pair_level: bool) -> list[tuple]:
    """``_image_sums`` of each block of several strata (ascending): per base pair sums over the
    block's strata, added in stratum order, then per image. Blocks without a shared stratum take
    one pass together."""
    n_pairs, n_images, out = len(summary.pair_caption), len(summary.image_keys), {}
    while len(out) < len(blocks):
        group, used = [], set()
        for b, strata in enumerate(blocks):
            if b not in out and used.isdisjoint(strata):
                group.append(b)
                used.update(strata)
        block_of = np.full(len(summary.strata), -1)
        for j, b in enumerate(group):
            block_of[blocks[b]] = j
        which = block_of[summary.cell_stratum]
        cells = np.flatnonzero(which >= 0)
        key, size = which[cells] * n_pairs + summary.cell_pair[cells], len(group) * n_pairs  # (block, pair)
        count = np.bincount(key, weights=summary.count[cells], minlength=size)
        filled = np.flatnonzero(count)
        value, positive = (np.bincount(key, weights=m[cells], minlength=size)[filled]
                           for m in (summary.value, summary.positive))
        bins = filled // n_pairs * n_images + summary.pair_image[filled % n_pairs]
        sums = _image_sums(bins, count[filled], value, positive, len(group), n_images, pair_level)
        out.update({b: tuple(m[j] for m in sums) for j, b in enumerate(group)})
    return [out[b] for b in range(len(blocks))]


def resample_images(n_images: int, n_resamples: int, seed: int):
    """Yield the bootstrap's image indices, ``(chunk, n_images)`` arrays, in order.

    Each row is one resample: ``n_images`` images drawn with replacement. Exposed so that tests
    (and users) can reproduce exactly which images every replicate used.
    """
    rng = np.random.default_rng(seed)
    chunk = _chunk_rows(n_images)
    for start in range(0, n_resamples, chunk):
        yield rng.integers(0, n_images, size=(min(chunk, n_resamples - start), n_images))


def _chunk_rows(n_images: int) -> int:
    return max(1, _CHUNK_CELLS // max(n_images, 1))


def multiplicities(n_images: int, n_resamples: int, seed: int):
    """The resamples of ``resample_images`` as float64 image multiplicities: an iterator of
    ``(chunk, n_images)`` arrays, each valid until the next one is asked for.

    A worker thread starts drawing and counting at once and keeps up to ``_AHEAD`` chunks ahead of
    the caller (NumPy's generator, bincount and BLAS release the GIL), each into its own buffer;
    the draws stay one sequential stream, so the values do not depend on the timing.
    """
    draws = resample_images(n_images, n_resamples, seed)

    def count(buffer: np.ndarray):
        index = next(draws, None)
        if index is None:
            return None
        weights = buffer[: len(index)]
        for row, drawn in zip(weights, index):  # a row's bincount stays in cache
            row[:] = np.bincount(drawn, minlength=n_images)
        return weights

    shape = (min(_chunk_rows(n_images), n_resamples), n_images)
    buffers = [np.empty(shape) for _ in range(_AHEAD + 1)]
    worker = ThreadPoolExecutor(max_workers=1)
    pending = deque(worker.submit(count, buffer) for buffer in buffers[:_AHEAD])

    def chunks():
        with worker:
            for turn in counter(_AHEAD):
                weights = pending.popleft().result()
                if weights is None:
                    return
                pending.append(worker.submit(count, buffers[turn % len(buffers)]))  # the buffer used before last
                yield weights

    return chunks()


def replicates(numerators: np.ndarray, denominators: np.ndarray, which: np.ndarray, resamples,
                n_resamples: int) -> np.ndarray:
    """(n_resamples, columns) bootstrap replicates of numerators[:, j] / denominators[:, which[j]]
    over the image multiplicities ``resamples`` (``multiplicities``); NaN where a resample has no
    base pair.

    One product per chunk of resamples: image multiplicities times the numerators and the
    distinct denominator columns, side by side.
    """
    n_images, n_columns = numerators.shape
    position = {}  # a denominator column's bytes -> its index among the distinct columns
    distinct = np.array([position.setdefault(column.tobytes(), len(position)) for column in denominators.T])
    which = distinct[which]
    packed, unpack = packed_counts(denominators[:, np.unique(distinct, return_index=True)[1]], n_images)
    sums = np.hstack([numerators, packed])
    out = np.empty((n_resamples, n_columns))
    done = 0
    for weights in resamples:
        product = weights @ sums
        with np.errstate(invalid="ignore", divide="ignore"):
            np.divide(product[:, :n_columns], unpack(product[:, n_columns:])[:, which],
                      out=out[done : done + len(weights)])
        done += len(weights)
    return out


def packed_counts(counts: np.ndarray, n_images: int):
    """Count columns (non-negative integers) packed several to a float64 column, and the function
    that recovers their resampled sums, exactly, from the packed columns' product with the multiplicities.

    A resample's sum of count column k is at most ``n_images * max(column k)`` (the multiplicities
    add up to ``n_images``), so column k becomes a digit of radix that bound + 1; digits share a
    column while its largest possible sum stays within 2**53, below which float64 adds integers
    exactly in any order. Fewer columns make the bootstrap's product cheaper.
    """
    packs = []  # per packed column: its span (product of radices) and [(column, place value, radix)]
    for column, top in enumerate(counts.max(axis=0, initial=0).tolist()):
        radix = n_images * int(top) + 1
        if not packs or packs[-1][0] * radix > _EXACT_INTEGERS:
            packs.append([1, []])
        packs[-1][1].append((column, packs[-1][0], radix))
        packs[-1][0] *= radix
    packed = np.zeros((len(counts), len(packs)))
    for p, (_, digits) in enumerate(packs):
        for column, place, _ in digits:
            packed[:, p] += counts[:, column] * place

    def unpack(product: np.ndarray) -> np.ndarray:
        sums = np.empty((len(product), counts.shape[1]))
        for p, (_, digits) in enumerate(packs):
            if len(digits) == 1:  # a column alone (perhaps too large to pack) is its own sum
                sums[:, digits[0][0]] = product[:, p]
                continue
            whole = product[:, p].astype(np.int64)
            for column, place, radix in digits:
                sums[:, column] = whole // place % radix
        return sums

    return packed, unpack


def interval(replicates: np.ndarray, confidence: float) -> np.ndarray:
    """Percentile intervals, one (low, high) row per column; NaN replicates are left out."""
    alpha = (1.0 - confidence) / 2.0
    quantile = np.nanquantile if np.isnan(replicates).any() else np.quantile  # equal without NaN, faster
    return quantile(replicates, [alpha, 1.0 - alpha], axis=0).T
