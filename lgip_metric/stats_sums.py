"""The rows reduced to per base pair and stratum sums (:class:`Summary`), summaries of disjoint row sets
merged, and the blocks (strata) each reported number averages over; part of :mod:`lgip_metric.stats`."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .stats_inputs import LGIPInputError, Rows, base_pairs, cells, encode, stratum_order
from .stats_names import CORE_TYPES, FLIP, HARD, HARD_TYPES, KINDS, NWAY_TYPES


@dataclass(frozen=True, eq=False)
class Summary:
    """Per base pair and variant type sums: everything the statistics need from the rows.

    One entry per cell, a (base pair, stratum) combination with at least one row, in (pair,
    stratum) order: ``cell_pair`` indexes the base pairs and ``cell_stratum`` the ``strata``
    ((type, kind) pairs). ``count`` is the cell's rows, ``value`` sums |s - s'| for paraphrases
    and s - s† for flips; ``positive`` counts s > s† (flips only). ``original_max`` and
    ``variant_max`` are the largest s(I,c) and s(I,variant) of each cell (-inf outside
    ``NWAY_TYPES``). Only cells with rows are held: the others would add +0.0 to every sum.
    """

    image_keys: np.ndarray  # (G,) image ids, sorted
    pair_image: np.ndarray  # (P,) index into image_keys
    pair_caption: np.ndarray  # (P,) caption id of each base pair
    strata: tuple[tuple[str, str], ...]
    cell_pair: np.ndarray  # (C,) index into the base pairs, nondecreasing
    cell_stratum: np.ndarray  # (C,) index into strata
    count: np.ndarray
    value: np.ndarray
    positive: np.ndarray
    original_max: np.ndarray
    variant_max: np.ndarray

    def merge(self, *others: "Summary") -> "Summary":
        """The summary of the union of disjoint row sets (e.g. shards scored on different ranks)."""
        return merge(self, *others)


def aggregate(rows: Rows, original: np.ndarray, variant: np.ndarray) -> Summary:
    """Per cell sums of ``rows``: the rows of a cell are added in row order."""
    n_cells = len(rows.cell_pair)
    is_flip = np.array([kind == FLIP for _, kind in rows.strata])[rows.stratum]
    diff = original - variant
    value = np.where(is_flip, diff, np.abs(diff))
    positive = is_flip & (original > variant)
    nway = np.flatnonzero(np.array([type_ in NWAY_TYPES for type_, _ in rows.strata], dtype=bool)[rows.stratum])
    nway_cell = rows.cell[nway]
    return Summary(
        image_keys=rows.image_keys,
        pair_image=rows.pair_image,
        pair_caption=rows.pair_caption,
        strata=rows.strata,
        cell_pair=rows.cell_pair,
        cell_stratum=rows.cell_stratum,
        count=np.bincount(rows.cell, minlength=n_cells),
        value=np.bincount(rows.cell, weights=value, minlength=n_cells),
        positive=np.bincount(rows.cell, weights=positive, minlength=n_cells),
        original_max=cell_max(nway_cell, original[nway], n_cells),
        variant_max=cell_max(nway_cell, variant[nway], n_cells),
    )


def cell_max(cell: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """The largest value per cell (-inf for cells without rows)."""
    out = np.full(size, -np.inf)
    np.maximum.at(out, cell, values)
    return out


def summarize(
    original_scores,
    variant_scores,
    variant_kinds,
    variant_types,
    caption_ids,
    image_ids,
    *,
    extra_types=(),
) -> Summary:
    """Validate one row per (image, caption, variant) and reduce the rows to per-pair sums.

    ``original_scores[i]`` is s(I, c) and ``variant_scores[i]`` s(I, variant) of row i;
    ``variant_kinds`` is ``"paraphrase"``/``"flip"``; ``variant_types`` a declared type
    (``DECLARED_TYPES``) or one listed in ``extra_types``. A base pair is an
    (``image_ids``, ``caption_ids``) combination.
    """
    scores, rows = encode(
        {"original_scores": original_scores, "variant_scores": variant_scores},
        variant_kinds, variant_types, caption_ids, image_ids, extra_types,
    )
    return aggregate(rows, scores["original_scores"], scores["variant_scores"])


def merge(*summaries: Summary) -> Summary:
    """Combine summaries of disjoint row sets; a base pair split across them is summed."""
    strata = tuple(sorted({s for summary in summaries for s in summary.strata}, key=stratum_order))
    types = [type_ for type_, _ in strata]
    if len(set(types)) != len(types):
        raise LGIPInputError(f"the summaries disagree on the kind of a variant type: {list(strata)}")
    images = np.concatenate([s.image_keys[s.pair_image] for s in summaries])
    captions = np.concatenate([s.pair_caption for s in summaries])
    pair, pair_image, pair_caption, image_keys = base_pairs(captions, images)
    offsets = np.cumsum([0] + [len(s.pair_caption) for s in summaries])
    cell_pair = np.concatenate([pair[offset + s.cell_pair] for s, offset in zip(summaries, offsets)])
    cell_stratum = np.concatenate([np.array([strata.index(t) for t in s.strata], dtype=np.int64)[s.cell_stratum]
                                   for s in summaries])
    # the summaries' cells are the rows of the merged summary: a cell's parts are added in summary order
    cell, cell_pair, cell_stratum = cells(cell_pair, cell_stratum, len(pair_caption), len(strata))
    n_cells = len(cell_pair)

    def total(field: str) -> np.ndarray:
        return np.bincount(cell, weights=np.concatenate([getattr(s, field) for s in summaries]), minlength=n_cells)

    def largest(field: str) -> np.ndarray:
        return cell_max(cell, np.concatenate([getattr(s, field) for s in summaries]), n_cells)

    return Summary(
        image_keys=image_keys,
        pair_image=pair_image,
        pair_caption=pair_caption,
        strata=strata,
        cell_pair=cell_pair,
        cell_stratum=cell_stratum,
        count=total("count").astype(np.int64),
        value=total("value"),
        positive=total("positive"),
        original_max=largest("original_max"),
        variant_max=largest("variant_max"),
    )


def headline_columns(strata: tuple[tuple[str, str], ...], kind: str) -> list[int]:
    """Stratum columns the headline statistic of ``kind`` averages over: its core types present,
    else (a dataset of custom types only) all its types."""
    columns = [i for i, (_, k) in enumerate(strata) if k == kind]
    core = [i for i in columns if strata[i][0] in CORE_TYPES]
    return core or columns


def hard_columns(strata: tuple[tuple[str, str], ...]) -> list[int]:
    """Stratum columns of the hard flips' headline block (``HARD_TYPES`` present)."""
    return [i for i, (type_, kind) in enumerate(strata) if kind == FLIP and type_ in HARD_TYPES]


def report_blocks(summary: Summary) -> list[tuple[str | tuple | None, str, list[int]]]:
    """(None for the global block, a type, or ``(HARD,)`` for the hard block; kind, stratum
    columns) for every reported block."""
    blocks = []
    for kind in KINDS:
        columns = headline_columns(summary.strata, kind)
        if columns:
            blocks.append((None, kind, columns))
    if hard := hard_columns(summary.strata):
        blocks.append(((HARD,), FLIP, hard))
    blocks += [(type_, kind, [i]) for i, (type_, kind) in enumerate(summary.strata)]
    return blocks
