"""The ids of the metric's rows: the missing ones (None, NaN) found as given, and the codes of the rest; part of
:mod:`lgip_metric.stats`. Pure NumPy, beside the ``evaluate`` module (which imports every ``stats_*`` file)."""
from __future__ import annotations

import numpy as np


def first_missing(ids) -> tuple[int, int] | None:
    """(first row, count) of the missing ids (None or NaN) among ``ids`` as given, or None when there are none."""
    if isinstance(ids, np.ndarray) and ids.dtype.kind != "O":
        missing = np.isnan(ids) if ids.dtype.kind == "f" else np.zeros(0, dtype=bool)
    else:
        missing = np.fromiter((v is None or (isinstance(v, float) and v != v) for v in ids), dtype=bool)
    return (int(np.flatnonzero(missing)[0]), int(missing.sum())) if missing.any() else None


def factorize_ids(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
