"""LGIP statistics in pure NumPy: E_inv, E_sens and PR with counts and image-bootstrap intervals.

This file imports nothing but NumPy, so `evaluate` can copy it beside ``lgip_metric.py`` when the
metric is loaded from a folder or from the Hub.

Definitions, as in the LGIP paper (Lee). For one base pair (image I, caption c) and its variants::

    E_inv  = mean over (I,c) [ mean over paraphrases c'  |s(I,c) - s(I,c')| ]
    E_sens = mean over (I,c) [ mean over flips c†       s(I,c) - s(I,c†)   ]
    PR     = mean over (I,c) [ mean over flips c†       1[s(I,c) > s(I,c†)] ]   (a tie is not positive)

The outer mean runs over the base pairs with at least one variant of that kind (or type). With
``pair_level=True`` every variant row weighs the same instead; outputs carry the label
``averaging: "base_pair" | "pair_level"``. Intervals are percentile intervals of a cluster
bootstrap that resamples images (all captions and variants of an image move together).

Headline vs per type: the global E_inv/E_sens/PR (the paper's Table 1) average over the paper's
core types only (``CORE_TYPES``: template/marker paraphrases, object/color/count flips), so they
stay comparable with the paper whatever other families a dataset holds; every type, core or not,
is reported in ``per_type``. A kind with no core type present falls back to all its types; the
result's ``headline_types`` names the types each headline kind averages over. The hard flips
(``HARD_TYPES``, plausible in context) have a headline block of their own, ``result["hard"]``
(E_sens, PR over the hard types present; ``headline_types["hard"]`` names them), beside Table 1.

n-way scoring (SNARE) for the word-order scrambles (``NWAY_TYPES``): per base pair,
``1[s(I,c) > max over its scrambles of that type s(I,c~)]`` (a tie fails), averaged over the base
pairs with at least one scramble of that type (``nway_accuracy``, always base-pair averaged).

Pipeline: ``summarize`` (rows -> per base pair sums; summaries of disjoint row sets ``merge``)
-> ``statistics`` (point estimates, counts, intervals). ``compare`` does the paired comparison
of two models scored on the same rows (paired bootstrap and McNemar's exact test).
"""
from __future__ import annotations

import operator
import warnings
from collections import defaultdict, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import count as counter

import numpy as np

from .variant_types import VARIANT_TYPES

PARAPHRASE, FLIP = "paraphrase", "flip"
KINDS = (PARAPHRASE, FLIP)
# The variant types LGIP's perturbation engine emits, with the kind (statistic) each feeds, from the
# table generated from the family registry (variant_types.py; see builders/derive_variant_types.py).
DECLARED_TYPES = {name: entry["kind"] for name, entry in VARIANT_TYPES.items()}
CORE_TYPES = tuple(name for name, entry in VARIANT_TYPES.items() if entry["group"] == "core")  # Table 1
HARD_TYPES = tuple(name for name, entry in VARIANT_TYPES.items() if entry["group"] == "hard")  # its own block
NWAY_TYPES = tuple(name for name, entry in VARIANT_TYPES.items() if entry["scoring"] == "nway")  # also n-way
HARD = "hard"  # the result's key of the hard flips' headline block
METRICS = {PARAPHRASE: ("E_inv",), FLIP: ("E_sens", "PR")}
NWAY = "nway_accuracy"
AVERAGING = {
    "base_pair": "mean over base (image, caption) pairs of the mean over their variants",
    "pair_level": "pair-level mean: every (image, caption, variant) row weighted equally",
}
# Similarities are bounded; past this, sums of score differences (and their bootstrap) could overflow float64.
MAX_ABS_SCORE = 1e100
_CHUNK_CELLS = 1 << 22  # bootstrap weights generated ~4M cells at a time
_EXACT_INTEGERS = 2**53  # float64 holds every integer up to this one
_AHEAD = 2  # chunks of bootstrap weights the drawing thread may prepare ahead of their product


class LGIPInputError(ValueError):
    """Inputs the statistics cannot be computed from; the message names the input and the row."""


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


@dataclass(frozen=True, eq=False)
class _Rows:
    """Encoded rows: stratum and cell code of every row, and the cells' base pair and stratum."""

    stratum: np.ndarray
    cell: np.ndarray
    cell_pair: np.ndarray
    cell_stratum: np.ndarray
    strata: tuple[tuple[str, str], ...]
    pair_image: np.ndarray
    pair_caption: np.ndarray
    image_keys: np.ndarray


# --------------------------------------------------------------------------------------------
# Encoding and validation


def _as_array(values, name: str, dtype=None) -> np.ndarray:
    array = values if isinstance(values, np.ndarray) else np.asarray(values, dtype=dtype)
    if array.ndim != 1:
        raise LGIPInputError(f"{name} must be one-dimensional, got shape {array.shape}")
    return array


def score_array(values, name: str) -> np.ndarray:
    """``values`` as float64, refusing booleans, NaN/inf and magnitudes over ``MAX_ABS_SCORE`` (row named)."""
    if isinstance(values, np.ndarray) and values.dtype == bool:
        raise LGIPInputError(f"{name} must be numbers, got booleans")
    if not isinstance(values, np.ndarray):
        flag = next((i for i, v in enumerate(values) if isinstance(v, (bool, np.bool_))), None)
        if flag is not None:
            raise LGIPInputError(f"{name} must be numbers; row {flag} is the boolean {values[flag]!r}")
    try:
        array = _as_array(values, name).astype(np.float64, copy=False)
    except (TypeError, ValueError) as err:
        raise LGIPInputError(f"{name} must be numbers: {err}") from None
    if not array.size or (array.min() >= -MAX_ABS_SCORE and array.max() <= MAX_ABS_SCORE):  # NaN fails too
        return array
    bad = ~np.isfinite(array)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise LGIPInputError(
            f"{name} has {int(bad.sum())} NaN/inf value(s); the first is row {first} ({float(array[first])})"
        )
    huge = np.abs(array) > MAX_ABS_SCORE
    first = int(np.flatnonzero(huge)[0])
    raise LGIPInputError(f"{name} has {int(huge.sum())} value(s) beyond ±{MAX_ABS_SCORE:g}; the first is row "
                         f"{first} ({float(array[first])}); rescale the scores (their differences would overflow)")


def _check_lengths(**arrays: np.ndarray) -> None:
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) != 1:
        raise LGIPInputError(
            "inputs must have one entry per variant row; got lengths "
            + ", ".join(f"{name}={n}" for name, n in lengths.items())
        )
    if not next(iter(lengths.values())):
        raise LGIPInputError("no rows: the inputs are empty")


def _factorize_ids(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes into the sorted unique ids; non-numeric ids are compared as text.

    Ids already in order (as a table grouped by image and caption holds them) are coded in a pass
    or two over neighbours, Python strings without a text copy; others are sorted.
    """
    if _ordered_ids(values, np.greater):  # sorted and unique, as ids often are
        return np.arange(values.size, dtype=np.int64), values
    if not _ordered_ids(values, np.greater_equal):
        if values.dtype.kind not in "iub":
            values = values.astype(str)
        if not _ordered_ids(values, np.greater_equal):
            keys, codes = np.unique(values, return_inverse=True)
            return codes.astype(np.int64, copy=False), keys
    first = np.ones(values.size, dtype=bool)  # each id's first row
    np.not_equal(values[1:], values[:-1], out=first[1:])
    return np.cumsum(first) - 1, values[first]


def _ordered_ids(values: np.ndarray, order) -> bool:
    """Whether ``order(next, previous)`` holds for all neighbours in ``values`` (numbers, text, or
    Python strings).

    An object array qualifies only if it holds Python strings: its first value is one, and any
    other type beside a string fails the comparison with TypeError.
    """
    if values.dtype == object and not (values.size and isinstance(values[0], str)):
        return False
    try:
        return bool(order(values[1:], values[:-1]).all())
    except TypeError:
        return False


def _factorize_labels(values: np.ndarray, name: str) -> tuple[np.ndarray, list]:
    """Codes into the labels of a low-cardinality string column, labels in order of first
    appearance (one hashed pass)."""
    items = values if values.dtype == object else values.tolist()  # Python objects, read once
    seen = defaultdict(counter().__next__)  # label -> code, in order of first appearance
    try:  # up to 256 labels: a byte per row; itemgetter looks the rows up in one C loop, the cheapest pass
        looked_up = operator.itemgetter(*items)(seen) if len(items) > 1 else [seen[item] for item in items]
        codes = np.frombuffer(bytearray(looked_up), dtype=np.uint8)
    except ValueError:  # a 257th label
        seen = defaultdict(counter().__next__)
        codes = np.fromiter(map(seen.__getitem__, items), dtype=np.int64, count=len(items))
    except TypeError:  # an unhashable label (a list, a dict): name the first row that is not a string
        row = next(i for i, label in enumerate(items) if not isinstance(label, str))
        raise LGIPInputError(f"{name} must be strings; row {row} is {items[row]!r}") from None
    bad = [label for label in seen if not isinstance(label, str)]
    if bad:
        raise LGIPInputError(f"{name} must be strings; row {int(np.argmax(codes == seen[bad[0]]))} is {bad[0]!r}")
    return codes, list(seen)


def _names(values, limit: int = 8) -> str:
    values = sorted(values)
    return repr(values[:limit])[:-1] + (f", ... {len(values) - limit} more]" if len(values) > limit else "]")


def _strata(kinds: np.ndarray, types: np.ndarray, extra_types) -> tuple[np.ndarray, tuple]:
    """Stratum code per row and the strata ((type, kind) pairs) in canonical order.

    A type feeds one kind: a declared type its declared kind, an extra type the kind of its
    first row. Every row's kind must agree.
    """
    type_codes, type_labels = _factorize_labels(types, "variant_types")
    declared = {**{str(extra): None for extra in extra_types or ()}, **DECLARED_TYPES}
    unknown = set(type_labels) - set(declared)
    if unknown:
        first = int(np.flatnonzero(np.isin(type_codes, [type_labels.index(u) for u in unknown]))[0])
        raise LGIPInputError(
            f"unknown variant type(s) {_names(unknown)} (first at row {first}); declared types are "
            f"{_names(declared)}; pass the types of your own perturbations in extra_types"
        )
    kind_of = [declared[t] or kinds[int(np.argmax(type_codes == c))] for c, t in enumerate(type_labels)]
    if not (set(kind_of) <= set(KINDS) and _kinds_agree(kinds, type_codes, kind_of)):
        _check_kinds(kinds, types, type_codes, type_labels, kind_of)
    strata = tuple(sorted(zip(type_labels, kind_of), key=_stratum_order))
    remap = np.array([strata.index(s) for s in zip(type_labels, kind_of)], dtype=np.int64)
    return remap[type_codes], strata


def _kinds_agree(kinds: np.ndarray, type_codes: np.ndarray, kind_of: list) -> bool:
    """Whether every row's kind is its type's kind (``kind_of[type_codes]``), for text kinds: one
    comparison per row."""
    if kinds.dtype.kind not in "OUT":
        return False
    expected = np.array(kind_of, dtype=object if kinds.dtype == object else None)[type_codes]
    return bool((kinds == expected).all())


def _check_kinds(kinds: np.ndarray, types: np.ndarray, type_codes: np.ndarray, type_labels: list, kind_of: list):
    """Refuse the first row whose kind is unknown or disagrees with its type's kind (``kind_of``)."""
    expected = np.empty(len(type_labels), dtype=object)
    expected[:] = kind_of
    wrong = np.flatnonzero(kinds != expected[type_codes])
    if wrong.size or not set(kind_of) <= set(KINDS):
        row = int(wrong[0]) if wrong.size else int(np.flatnonzero(~np.isin(kinds, KINDS))[0])
        kind, type_ = kinds[row : row + 1].tolist()[0], types[row : row + 1].tolist()[0]
        if kind not in KINDS:
            raise LGIPInputError(f"unknown variant kind {kind!r} at row {row}; kinds are {list(KINDS)}")
        raise LGIPInputError(
            f"row {row} has variant type {type_!r} with kind {kind!r}, but {type_!r} is a "
            f"{expected[type_labels.index(type_)]} type"
        )


def _pairs(captions: np.ndarray, images: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Base pair code per row, each pair's image code and caption id, and the sorted image ids."""
    starts = np.ones(len(captions), dtype=bool)
    np.not_equal(captions[1:], captions[:-1], out=starts[1:])
    starts[1:] |= images[1:] != images[:-1]
    heads = np.flatnonzero(starts)
    run = np.repeat(np.arange(heads.size), np.diff(heads, append=starts.size))  # each row's run of one pair
    cap_codes, cap_keys = _factorize_ids(captions[heads])
    img_codes, img_keys = _factorize_ids(images[heads])
    head_pair, combined = _factorize_ids(img_codes * len(cap_keys) + cap_codes)
    _warn_shared_captions(combined % len(cap_keys), combined // len(cap_keys), cap_keys, img_keys)
    in_order = head_pair.size == combined.size and bool((head_pair[1:] > head_pair[:-1]).all())  # runs are pairs
    return run if in_order else head_pair[run], combined // len(cap_keys), cap_keys[combined % len(cap_keys)], img_keys


class SharedCaptionWarning(UserWarning):
    """A caption id occurs with several image ids: each (image, caption) is scored as its own base pair."""


def _warn_shared_captions(pair_caps: np.ndarray, pair_imgs: np.ndarray, cap_keys, img_keys) -> None:
    """Say so when a caption id occurs with two or more image ids (never silently).

    A base pair is (image, caption), so such rows are counted as separate base pairs, which is right
    for per-image caption numbering ("0", "1", ... on every image) and wrong for mislabelled rows of
    an LGIP dataset, whose caption ids are unique.
    """
    counts = np.bincount(pair_caps, minlength=len(cap_keys))
    shared = np.flatnonzero(counts > 1)
    if shared.size:
        images = img_keys[pair_imgs[pair_caps == shared[0]][:2]].tolist()
        warnings.warn(
            f"{shared.size} caption id(s) occur with more than one image id, e.g. caption_ids "
            f"{cap_keys[shared[0]].item()!r} with image_ids {images[0]!r} and {images[1]!r}; each (image, caption) "
            "is counted as its own base pair. If caption ids should be unique, the rows are mislabelled.",
            SharedCaptionWarning, stacklevel=4,
        )


def _encode(scores: dict, variant_kinds, variant_types, caption_ids, image_ids, extra_types):
    """Check the lengths of all inputs, then validate and encode them: (float scores, rows)."""
    labels = {
        "variant_kinds": _as_array(variant_kinds, "variant_kinds", dtype=object),  # labels: no str copies
        "variant_types": _as_array(variant_types, "variant_types", dtype=object),
        "caption_ids": _as_array(caption_ids, "caption_ids"),
        "image_ids": _as_array(image_ids, "image_ids"),
    }
    arrays = {name: _as_array(values, name) for name, values in scores.items()}
    _check_lengths(**arrays, **labels)
    arrays = {name: score_array(values, name) for name, values in arrays.items()}
    stratum, strata = _strata(labels["variant_kinds"], labels["variant_types"], extra_types)
    pair, pair_image, pair_caption, image_keys = _pairs(labels["caption_ids"], labels["image_ids"])
    cell, cell_pair, cell_stratum = _cells(pair, stratum, len(pair_caption), len(strata))
    return arrays, _Rows(stratum, cell, cell_pair, cell_stratum, strata, pair_image, pair_caption, image_keys)


def _cells(pair: np.ndarray, stratum: np.ndarray, n_pairs: int, n_strata: int) -> tuple:
    """Cell code of every row, and each cell's base pair and stratum, cells in (pair, stratum) order.

    A cell is a (base pair, stratum) combination with rows. Where each base pair's rows are
    contiguous (a table grouped by image and caption), a pair's strata are the bits of one integer
    and a row's cell is its pair's first cell plus the number of the pair's strata below its own;
    other rows are sorted.
    """
    first = np.ones(pair.size, dtype=bool)  # first row of each run of one base pair
    np.not_equal(pair[1:], pair[:-1], out=first[1:])
    runs = np.flatnonzero(first)
    if runs.size != n_pairs or n_strata > 62:
        keys, cell = np.unique(pair * n_strata + stratum, return_inverse=True)
        return cell, keys // n_strata, keys % n_strata
    bit = np.left_shift(1, stratum)
    strata = np.empty(n_pairs, dtype=np.int64)  # each base pair's strata, as bits
    strata[pair[runs]] = np.bitwise_or.reduceat(bit, runs)
    per_pair = np.bitwise_count(strata).astype(np.int64)
    cell = (np.cumsum(per_pair) - per_pair)[pair] + np.bitwise_count(strata[pair] & (bit - 1))
    cell_stratum = np.empty(int(per_pair.sum()), dtype=np.int64)
    cell_stratum[cell] = stratum
    return cell, np.repeat(np.arange(n_pairs), per_pair), cell_stratum


def _aggregate(rows: _Rows, original: np.ndarray, variant: np.ndarray) -> Summary:
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
        original_max=_cell_max(nway_cell, original[nway], n_cells),
        variant_max=_cell_max(nway_cell, variant[nway], n_cells),
    )


def _cell_max(cell: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
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
    scores, rows = _encode(
        {"original_scores": original_scores, "variant_scores": variant_scores},
        variant_kinds, variant_types, caption_ids, image_ids, extra_types,
    )
    return _aggregate(rows, scores["original_scores"], scores["variant_scores"])


def merge(*summaries: Summary) -> Summary:
    """Combine summaries of disjoint row sets; a base pair split across them is summed."""
    strata = tuple(sorted({s for summary in summaries for s in summary.strata}, key=_stratum_order))
    types = [type_ for type_, _ in strata]
    if len(set(types)) != len(types):
        raise LGIPInputError(f"the summaries disagree on the kind of a variant type: {list(strata)}")
    images = np.concatenate([s.image_keys[s.pair_image] for s in summaries])
    captions = np.concatenate([s.pair_caption for s in summaries])
    pair, pair_image, pair_caption, image_keys = _pairs(captions, images)
    offsets = np.cumsum([0] + [len(s.pair_caption) for s in summaries])
    cell_pair = np.concatenate([pair[offset + s.cell_pair] for s, offset in zip(summaries, offsets)])
    cell_stratum = np.concatenate([np.array([strata.index(t) for t in s.strata], dtype=np.int64)[s.cell_stratum]
                                   for s in summaries])
    # the summaries' cells are the rows of the merged summary: a cell's parts are added in summary order
    cell, cell_pair, cell_stratum = _cells(cell_pair, cell_stratum, len(pair_caption), len(strata))
    n_cells = len(cell_pair)

    def total(field: str) -> np.ndarray:
        return np.bincount(cell, weights=np.concatenate([getattr(s, field) for s in summaries]), minlength=n_cells)

    def largest(field: str) -> np.ndarray:
        return _cell_max(cell, np.concatenate([getattr(s, field) for s in summaries]), n_cells)

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


def _stratum_order(stratum: tuple[str, str]) -> tuple:
    """Canonical order: paraphrase types first, declared types in declared order, then extras."""
    type_, kind = stratum
    order = list(DECLARED_TYPES)
    return KINDS.index(kind), order.index(type_) if type_ in DECLARED_TYPES else len(order), type_


# --------------------------------------------------------------------------------------------
# Blocks: which strata a reported number averages over, and its per-image numerator/denominator


def headline_columns(strata: tuple[tuple[str, str], ...], kind: str) -> list[int]:
    """Stratum columns the headline statistic of ``kind`` averages over: its core types present,
    else (a dataset of custom types only) all its types."""
    columns = [i for i, (_, k) in enumerate(strata) if k == kind]
    core = [i for i in columns if strata[i][0] in CORE_TYPES]
    return core or columns


def hard_columns(strata: tuple[tuple[str, str], ...]) -> list[int]:
    """Stratum columns of the hard flips' headline block (``HARD_TYPES`` present)."""
    return [i for i, (type_, kind) in enumerate(strata) if kind == FLIP and type_ in HARD_TYPES]


def _blocks(summary: Summary) -> list[tuple[str | tuple | None, str, list[int]]]:
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


def _per_image(summary: Summary, pair_level: bool) -> tuple[list, np.ndarray, np.ndarray, np.ndarray, list]:
    """Columns (type, kind, metric), per-image numerators, the per-image denominators (one per
    block: its metrics share it) with each column's denominator, and the support.

    Every statistic is sum(numerator) / sum(denominator) over images, so a resample of images
    with multiplicities w gives w @ numerator / w @ denominator.
    """
    columns, numerators, denominators, which, support = [], [], [], [], []
    n_images, n_strata = len(summary.image_keys), len(summary.strata)
    bins = summary.cell_stratum * n_images + summary.pair_image[summary.cell_pair]  # (stratum, image) of each cell
    by_stratum = _image_sums(bins, summary.count, summary.value, summary.positive, n_strata, n_images, pair_level)
    blocks = _blocks(summary)
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


# --------------------------------------------------------------------------------------------
# Bootstrap


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


def _multiplicities(n_images: int, n_resamples: int, seed: int):
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


def _replicates(numerators: np.ndarray, denominators: np.ndarray, which: np.ndarray, resamples,
                n_resamples: int) -> np.ndarray:
    """(n_resamples, columns) bootstrap replicates of numerators[:, j] / denominators[:, which[j]]
    over the image multiplicities ``resamples`` (``_multiplicities``); NaN where a resample has no
    base pair.

    One product per chunk of resamples: image multiplicities times the numerators and the
    distinct denominator columns, side by side.
    """
    n_images, n_columns = numerators.shape
    position = {}  # a denominator column's bytes -> its index among the distinct columns
    distinct = np.array([position.setdefault(column.tobytes(), len(position)) for column in denominators.T])
    which = distinct[which]
    packed, unpack = _packed_counts(denominators[:, np.unique(distinct, return_index=True)[1]], n_images)
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


def _packed_counts(counts: np.ndarray, n_images: int):
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


def _interval(replicates: np.ndarray, confidence: float) -> np.ndarray:
    """Percentile intervals, one (low, high) row per column; NaN replicates are left out."""
    alpha = (1.0 - confidence) / 2.0
    quantile = np.nanquantile if np.isnan(replicates).any() else np.quantile  # equal without NaN, faster
    return quantile(replicates, [alpha, 1.0 - alpha], axis=0).T


def check_options(bootstrap: int, confidence: float) -> None:
    """Refuse a negative or fractional number of resamples, or a coverage outside (0, 1)."""
    if int(bootstrap) != bootstrap or bootstrap < 0:
        raise LGIPInputError(f"bootstrap must be a non-negative number of resamples, got {bootstrap!r}")
    if not 0.0 < confidence < 1.0:
        raise LGIPInputError(f"confidence must be in (0, 1), got {confidence!r}")


def _require_both_kinds(summary: Summary) -> None:
    present = {summary.strata[i][1] for i in np.flatnonzero(np.bincount(summary.cell_stratum))}  # cells have rows
    for kind, what in ((FLIP, "E_sens and PR"), (PARAPHRASE, "E_inv")):
        if kind not in present:
            raise LGIPInputError(f"the {kind} set is empty: no row has kind {kind!r}, so {what} cannot be computed")


def _bootstrap_info(bootstrap: int, seed: int, confidence: float) -> dict:
    return {"resamples": int(bootstrap), "seed": int(seed), "confidence": float(confidence),
            "unit": "image", "method": "percentile"}


# --------------------------------------------------------------------------------------------
# Results


def _block(kinds, extra: tuple[str, ...]) -> dict:
    """An empty block with its keys in reading order: metrics, then ``extra`` sub-dicts."""
    return {**dict.fromkeys(m for kind in kinds for m in METRICS[kind]), **{key: {} for key in extra}}


def _result(columns: list, extra: tuple[str, ...], pair_level: bool) -> dict:
    """The empty result for ``columns``: label, global block, then one block per type."""
    result = {"averaging": "pair_level" if pair_level else "base_pair", **_block(KINDS, extra)}
    if any(type_ == (HARD,) for type_, _, _ in columns):
        result[HARD] = _block([FLIP], extra)
    result["per_type"] = {}
    for type_, kind, _ in columns:
        if isinstance(type_, str):
            result["per_type"].setdefault(type_, {"kind": kind, **_block([kind], extra)})
    return result


def _place(result: dict, type_: str | None) -> dict:
    """The block of the global result (type None), of the hard flips (``(HARD,)``) or of one type."""
    if type_ is None:
        return result
    return result[HARD] if type_ == (HARD,) else result["per_type"][type_]


def statistics(
    summary: Summary,
    *,
    pair_level: bool = False,
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    require_both_kinds: bool = True,
) -> dict:
    """E_inv, E_sens, PR globally and per type, with counts and (if ``bootstrap``) intervals.

    Returns a JSON-ready dict: ``averaging`` (``"base_pair"`` or ``"pair_level"``), the three
    metrics, ``counts`` (per metric: ``base_pairs``, ``variant_rows``, ``images``), ``intervals``
    (per metric: ``[low, high]``), ``per_type`` (the same per type, with its ``kind``) and
    ``bootstrap`` (resamples, seed, confidence, unit "image").

    A kind without rows is an error unless ``require_both_kinds=False`` (e.g. one caption with no
    word to flip): then its metrics are None, with no counts or intervals.
    """
    check_options(bootstrap, confidence)
    if require_both_kinds:
        _require_both_kinds(summary)
    resamples = _multiplicities(len(summary.image_keys), bootstrap, seed) if bootstrap else None  # drawn meanwhile
    columns, numerators, denominators, which, support = _per_image(summary, pair_level)
    values = numerators.sum(axis=0) / denominators.sum(axis=0)[which]
    intervals = (_interval(_replicates(numerators, denominators, which, resamples, bootstrap), confidence)
                 if bootstrap else None)
    result = _result(columns, ("counts", "intervals") if bootstrap else ("counts",), pair_level)
    for j, ((type_, _, metric), (image_pairs, image_rows)) in enumerate(zip(columns, support)):
        block = _place(result, type_)
        block[metric] = float(values[j])
        block["counts"][metric] = {
            "base_pairs": int(image_pairs.sum()),
            "variant_rows": int(image_rows.sum()),
            "images": int((image_pairs > 0).sum()),
        }
        if intervals is not None:
            block["intervals"][metric] = [float(intervals[j, 0]), float(intervals[j, 1])]
    result["headline_types"] = {kind: [summary.strata[i][0] for i in headline_columns(summary.strata, kind)]
                                for kind in KINDS}
    if hard := hard_columns(summary.strata):
        result["headline_types"][HARD] = [summary.strata[i][0] for i in hard]
    result["bootstrap"] = _bootstrap_info(bootstrap, seed, confidence)
    return result


def lgip_statistics(
    original_scores,
    variant_scores,
    variant_kinds,
    variant_types,
    caption_ids,
    image_ids,
    *,
    extra_types=(),
    pair_level: bool = False,
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    require_both_kinds: bool = True,
) -> dict:
    """``statistics(summarize(...))``: the LGIP statistics of one model straight from its rows
    (``require_both_kinds=False``: flips alone, or paraphrases alone, are enough; see ``statistics``)."""
    summary = summarize(original_scores, variant_scores, variant_kinds, variant_types, caption_ids, image_ids,
                        extra_types=extra_types)
    return statistics(summary, pair_level=pair_level, bootstrap=bootstrap, seed=seed, confidence=confidence,
                      require_both_kinds=require_both_kinds)


# --------------------------------------------------------------------------------------------
# Paired comparison of two models on the same rows


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value: binomial test of ``a_only`` of ``a_only + b_only`` at 1/2.

    Equals ``scipy.stats.binomtest(a_only, a_only + b_only, 0.5).pvalue``; computed in log space.
    """
    n, k = int(a_only) + int(b_only), min(int(a_only), int(b_only))
    if n == 0 or 2 * k == n:
        return 1.0
    i = np.arange(1, k + 1, dtype=np.float64)
    log_pmf = np.concatenate([[0.0], np.cumsum(np.log(n - i + 1) - np.log(i))]) - n * np.log(2.0)
    top = log_pmf.max()
    return float(min(1.0, 2.0 * np.exp(top + np.log(np.exp(log_pmf - top).sum()))))


def _mcnemar(positive_a: np.ndarray, positive_b: np.ndarray) -> dict:
    a_only = int((positive_a & ~positive_b).sum())
    b_only = int((~positive_a & positive_b).sum())
    return {
        "both": int((positive_a & positive_b).sum()),
        "a_only": a_only,
        "b_only": b_only,
        "neither": int((~positive_a & ~positive_b).sum()),
        "p_value": mcnemar_exact(a_only, b_only),
    }


def compare(
    original_scores_a,
    variant_scores_a,
    original_scores_b,
    variant_scores_b,
    variant_kinds,
    variant_types,
    caption_ids,
    image_ids,
    *,
    extra_types=(),
    pair_level: bool = False,
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict:
    """Model A minus model B on the same rows: differences with paired image-bootstrap intervals.

    Both models' replicates use the same resampled images. ``mcnemar`` tests whether the two
    models order original-vs-flip differently (exact binomial McNemar on the discordant flip
    rows; rows are treated as independent, which clustering by image makes optimistic - prefer
    the bootstrap interval of the PR difference), on the headline flip types and per flip type.
    """
    check_options(bootstrap, confidence)
    scores, rows = _encode(
        {"original_scores_a": original_scores_a, "variant_scores_a": variant_scores_a,
         "original_scores_b": original_scores_b, "variant_scores_b": variant_scores_b},
        variant_kinds, variant_types, caption_ids, image_ids, extra_types,
    )
    a = _aggregate(rows, scores["original_scores_a"], scores["variant_scores_a"])
    b = _aggregate(rows, scores["original_scores_b"], scores["variant_scores_b"])
    _require_both_kinds(a)
    resamples = _multiplicities(len(a.image_keys), bootstrap, seed) if bootstrap else None  # drawn meanwhile
    columns, num_a, den, which, _ = _per_image(a, pair_level)
    _, num_b, _, _, _ = _per_image(b, pair_level)
    value_a, value_b = (num.sum(axis=0) / den.sum(axis=0)[which] for num in (num_a, num_b))
    intervals = None
    if bootstrap:
        reps = _replicates(np.hstack([num_a, num_b]), den, np.concatenate([which, which]), resamples, bootstrap)
        intervals = _interval(reps[:, : len(columns)] - reps[:, len(columns) :], confidence)
    result = _result(columns, (), pair_level)
    for j, (type_, _, metric) in enumerate(columns):
        entry = {"a": float(value_a[j]), "b": float(value_b[j]), "difference": float(value_a[j] - value_b[j])}
        if intervals is not None:
            entry["interval"] = [float(intervals[j, 0]), float(intervals[j, 1])]
        _place(result, type_)[metric] = entry
    flips = np.isin(rows.stratum, headline_columns(rows.strata, FLIP))
    pos_a = scores["original_scores_a"] > scores["variant_scores_a"]
    pos_b = scores["original_scores_b"] > scores["variant_scores_b"]
    result["mcnemar"] = {"test": "exact binomial McNemar, two-sided", **_mcnemar(pos_a[flips], pos_b[flips])}
    for code, (type_, kind) in enumerate(rows.strata):
        if kind == FLIP:
            mask = rows.stratum == code
            result["per_type"][type_]["mcnemar"] = _mcnemar(pos_a[mask], pos_b[mask])
    result["bootstrap"] = _bootstrap_info(bootstrap, seed, confidence)
    return result
