"""Warnings for a run over few images, by the rule ``lgip audit`` applies (:mod:`lgip_dataset.selection.measurable`).

A cross-fitted text-only figure over fewer than ``measurable.WARN_IMAGES`` images has a wide interval, and
over fewer than ``measurable.MIN_IMAGES`` the audit reports none at all; ``lgip evaluate`` still prints the
model's and the text-only scorers' figures of a small run (``--limit``, a small dataset), so it warns in the
same words, per headline block.
"""
from __future__ import annotations

from lgip_dataset.selection import measurable
from lgip_metric import stats
from lgip_metric.results.record import Results

BLOCKS = (("paper flips", None), ("hard flips", stats.HARD))  # headline blocks: (name, key in the statistics)


def _images(block: dict) -> int:
    return max(counts["images"] for counts in block["counts"].values() if counts)


def few_images_warnings(results: Results) -> list[str]:
    """The warnings of one run: its blocks over fewer than ``WARN_IMAGES`` images (none when every block has enough)."""
    statistics = results.statistics
    images = {name: _images(statistics[key] if key else statistics)
              for name, key in BLOCKS if key is None or key in statistics}
    counts = results.data.get("provenance", {}).get("counts", {})
    limit = results.data.get("settings", {}).get("limit")
    where = (f"{results.label} on {counts.get('scored_rows', '?')} of {counts.get('rows', '?')} rows"
             + (f" (--limit {limit}: raise or drop it for more images)" if limit else ""))
    warnings = measurable.few_images_warning(images, where)
    too_few = [f"{name} ({n})" for name, n in images.items() if n < measurable.MIN_IMAGES]
    if too_few:
        warnings.append(f"{where}: {', '.join(too_few)} images: `lgip audit` gives no text-only figure over fewer "
                        f"than {measurable.MIN_IMAGES} images ({measurable.RULE}); here the text-only figures and "
                        "every interval rest on a handful of images: read them as not measured")
    return warnings
