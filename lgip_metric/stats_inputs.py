"""The metric's inputs checked and encoded: one row per (image, caption, variant) with its two scores,
kind and type, turned into strata, base pairs and cells (:class:`Rows`); part of :mod:`lgip_metric.stats`.
Pure NumPy, beside the ``evaluate`` module (which imports every ``stats_*`` file so ``evaluate`` copies it)."""
from __future__ import annotations

import operator
import warnings
from collections import defaultdict
from dataclasses import dataclass
from itertools import count as counter

import numpy as np

from .stats_ids import factorize_ids, first_missing
from .stats_names import DECLARED_TYPES, KINDS

# Similarities are bounded; past this, sums of score differences (and their bootstrap) could overflow float64.
MAX_ABS_SCORE = 1e100


class LGIPInputError(ValueError):
    """Inputs the statistics cannot be computed from; the message names the input and the row."""


@dataclass(frozen=True, eq=False)
class Rows:
    """Encoded rows: stratum and cell code of every row, and the cells' base pair and stratum."""

    stratum: np.ndarray
    cell: np.ndarray
    cell_pair: np.ndarray
    cell_stratum: np.ndarray
    strata: tuple[tuple[str, str], ...]
    pair_image: np.ndarray
    pair_caption: np.ndarray
    image_keys: np.ndarray


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
    strata = tuple(sorted(zip(type_labels, kind_of), key=stratum_order))
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


def base_pairs(captions: np.ndarray, images: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Base pair code per row, each pair's image code and caption id, and the sorted image ids."""
    starts = np.ones(len(captions), dtype=bool)
    np.not_equal(captions[1:], captions[:-1], out=starts[1:])
    starts[1:] |= images[1:] != images[:-1]
    heads = np.flatnonzero(starts)
    run = np.repeat(np.arange(heads.size), np.diff(heads, append=starts.size))  # each row's run of one pair
    cap_codes, cap_keys = factorize_ids(captions[heads])
    img_codes, img_keys = factorize_ids(images[heads])
    head_pair, combined = factorize_ids(img_codes * len(cap_keys) + cap_codes)
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
            f"{_plain(cap_keys[shared[0]])!r} with image_ids {images[0]!r} and {images[1]!r}; each (image, caption) "
            "is counted as its own base pair. If caption ids should be unique, the rows are mislabelled.",
            SharedCaptionWarning, stacklevel=4,
        )


ORIGINAL_TOLERANCE = 1e-6  # rows of one base pair may give s(I, c) this far apart (recomputed in other batches)


def _plain(value):
    """A NumPy scalar as the Python value it holds (for messages), anything else as it is."""
    return value.item() if isinstance(value, np.generic) else value


def _check_one_original(original: np.ndarray, name: str, pair: np.ndarray, n_pairs: int, labels: dict) -> None:
    """Refuse a base pair whose rows give different s(I, c): it has one image and one caption, so one score."""
    first_row = np.full(n_pairs, original.size)
    np.minimum.at(first_row, pair, np.arange(original.size))
    first = original[first_row[pair]]
    bad = np.flatnonzero(np.abs(original - first) > ORIGINAL_TOLERANCE)
    if bad.size:
        row, other = int(bad[0]), int(first_row[pair[bad[0]]])
        raise LGIPInputError(
            f"{name}: row {row} gives {_plain(original[row])!r} and row {other} gives {_plain(original[other])!r} for the "
            f"same base pair (caption_ids {_plain(labels['caption_ids'][row])!r}, image_ids "
            f"{_plain(labels['image_ids'][row])!r}; {bad.size} such row(s)); "
            "a base pair has one image and one caption, so one original score")


def check_ids_present(ids, name: str) -> None:
    """Refuse a missing id (None or NaN) among ``ids`` as given (NumPy would make a NaN among strings "nan")."""
    missing = first_missing(ids)
    if missing is not None:
        raise LGIPInputError(f"{name}: row {missing[0]} has no id ({missing[1]} such row(s)); give every row its id")


def encode(scores: dict, variant_kinds, variant_types, caption_ids, image_ids, extra_types):
    """Check the lengths of all inputs, then validate and encode them: (float scores, rows)."""
    labels = {
        "variant_kinds": _as_array(variant_kinds, "variant_kinds", dtype=object),  # labels: no str copies
        "variant_types": _as_array(variant_types, "variant_types", dtype=object),
        "caption_ids": _as_array(caption_ids, "caption_ids"),
        "image_ids": _as_array(image_ids, "image_ids"),
    }
    arrays = {name: _as_array(values, name) for name, values in scores.items()}
    _check_lengths(**arrays, **labels)
    for name, ids in (("caption_ids", caption_ids), ("image_ids", image_ids)):
        check_ids_present(ids, name)
    arrays = {name: score_array(values, name) for name, values in arrays.items()}
    stratum, strata = _strata(labels["variant_kinds"], labels["variant_types"], extra_types)
    pair, pair_image, pair_caption, image_keys = base_pairs(labels["caption_ids"], labels["image_ids"])
    for name in (name for name in arrays if name.startswith("original")):
        _check_one_original(arrays[name], name, pair, len(pair_caption), labels)
    cell, cell_pair, cell_stratum = cells(pair, stratum, len(pair_caption), len(strata))
    return arrays, Rows(stratum, cell, cell_pair, cell_stratum, strata, pair_image, pair_caption, image_keys)


def cells(pair: np.ndarray, stratum: np.ndarray, n_pairs: int, n_strata: int) -> tuple:
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


def stratum_order(stratum: tuple[str, str]) -> tuple:
    """Canonical order: paraphrase types first, declared types in declared order, then extras."""
    type_, kind = stratum
    order = list(DECLARED_TYPES)
    return KINDS.index(kind), order.index(type_) if type_ in DECLARED_TYPES else len(order), type_
