"""LGIP: Language-Guided Invariance Probing of CLIP-style vision-language models.

Given the similarity s(I, c) of an image and its human caption and s(I, v) of the same image and a
variant v of the caption, LGIP reports

* ``E_inv``  (lower is better): mean |s(I,c) - s(I,c')| over meaning-preserving paraphrases c';
* ``E_sens`` (higher is better): mean gap s(I,c) - s(I,c†) over meaning-changing flips c†
  (object, color or count);
* ``PR``     (higher is better): share of flips with s(I,c) > s(I,c†) (a tie is not positive),

each first averaged over the variants of a base (image, caption) pair and then over the base pairs
(``pair_level=True`` weighs every row equally instead), globally and per variant type, with the
counts behind every number and 95% bootstrap intervals that resample images.

Examples:

    >>> import evaluate
    >>> from lgip_metric import METRIC_PATH  # this module's folder in the installed package
    >>> lgip = evaluate.load(str(METRIC_PATH))  # "<org>/lgip" from the Hub
    >>> rows = dict(
    ...     original_scores=[0.31, 0.31, 0.31, 0.28, 0.28],
    ...     variant_scores=[0.30, 0.25, 0.33, 0.28, 0.21],
    ...     variant_kinds=["paraphrase", "flip", "flip", "paraphrase", "flip"],
    ...     variant_types=["template", "object", "color", "marker", "count"],
    ...     caption_ids=["c1", "c1", "c1", "c2", "c2"],
    ...     image_ids=[139, 139, 139, 285, 285],
    ... )
    >>> results = lgip.compute(**rows, bootstrap=0)
    >>> print(f"E_inv={results['E_inv']:.3f} E_sens={results['E_sens']:.3f} PR={results['PR']:.2f}")
    E_inv=0.005 E_sens=0.045 PR=0.75
    >>> results["averaging"]
    'base_pair'
    >>> results["counts"]["PR"]
    {'base_pairs': 2, 'variant_rows': 3, 'images': 2}
    >>> {name: block["PR"] for name, block in results["per_type"].items() if block["kind"] == "flip"}
    {'object': 1.0, 'color': 0.0, 'count': 1.0}

    Every flip row weighted equally instead (2 of 3 flips are ranked below the original):

    >>> round(lgip.compute(**rows, pair_level=True, bootstrap=0)["PR"], 4)
    0.6667

    A 95% interval from 1,000 image resamples (seeded):

    >>> results = lgip.compute(**rows, bootstrap=1000, seed=0)
    >>> low, high = results["intervals"]["E_sens"]
    >>> bool(low <= results["E_sens"] <= high), results["bootstrap"]["unit"]
    (True, 'image')

    Bad input is refused with the reason:

    >>> try:
    ...     lgip.compute(**{**rows, "variant_scores": [0.30, float("nan"), 0.33, 0.28, 0.21]})
    ... except ValueError as err:
    ...     print(err)
    variant_scores has 1 NaN/inf value(s); the first is row 1 (nan)
"""
from __future__ import annotations

import json

import datasets
import evaluate
import numpy as np

from .about import CITATION, CODEBASE_URLS, HOMEPAGE, LICENSE
from .stats import lgip_statistics, score_array
from .variant_types import VARIANT_TYPES

# ``evaluate`` copies only the files this module imports itself, so every file the statistics are
# made of is named here (a loaded copy runs on the Hub without the lgip package). No comment may
# follow a relative import: ``evaluate`` would read it as the address to download the file from.
from .stats_bootstrap import resample_images
from .stats_ids import factorize_ids
from .stats_inputs import LGIPInputError, check_ids_present
from .stats_names import KINDS
from .stats_paired import compare
from .stats_result import check_options
from .stats_sums import summarize

_DESCRIPTION = __doc__.split("\nExamples:")[0]

def _type_names(kind: str) -> str:
    return ", ".join(f'"{name}"' for name, entry in VARIANT_TYPES.items() if entry["kind"] == kind)


_KWARGS_DESCRIPTION = f"""\
Args (one entry per (image, caption, variant) row; rows may come in any order; scores are finite
numbers within ±1e100, booleans are refused):
    original_scores (`list` of `float`): s(I, c), the similarity of the image and its caption.
    variant_scores (`list` of `float`): s(I, v), the similarity of the image and the variant.
    variant_kinds (`list` of `str`): "paraphrase" (feeds E_inv) or "flip" (feeds E_sens and PR).
    variant_types (`list` of `str`): {_type_names("paraphrase")} (paraphrases),
        {_type_names("flip")} (flips), or a type named in `extra_types`.
    caption_ids (`list` of `str` or `int`): id of the base caption c (the dataset's `caption_id`); an
        id met with several image ids counts once per image, with a `SharedCaptionWarning`.
    image_ids (`list` of `int` or `str`): id of the image I (the dataset's `image_id`); a base pair
        is (image, caption) and the bootstrap resamples images. Ids may be strings or numbers, mixed.
    pair_level (`bool`, default False): average over rows instead of over base pairs first.
    bootstrap (`int`, default 1000): image resamples for the intervals; 0 skips them.
    seed (`int`, default 0): seed of the resampling.
    confidence (`float`, default 0.95): coverage of the percentile intervals.
    extra_types (`list` of `str`, optional): variant types of your own perturbations; each feeds
        the kind its rows name.
Returns:
    `dict`: "E_inv", "E_sens", "PR" (floats; over the paper's core types template/marker and
    object/color/count, named in "headline_types"; None when no row has their kind: flips alone
    give E_sens and PR, paraphrases alone E_inv, and "absent" names each missing one with the reason),
    "averaging" ("base_pair" or "pair_level"),
    "counts" (per metric: base_pairs, variant_rows, images), "intervals" (per metric: [low, high],
    when bootstrap > 0), "hard" (E_sens, PR, counts, intervals over the hard flips hard_object/
    hard_color/hard_count, when present), "per_type" (the same per variant type, with its "kind";
    the scramble types also carry "nway_accuracy") and "bootstrap".
"""


# The columns of an LGIP ``pairs``/``scores`` row. The ids are held as text that keeps their type (``ids_as_text``:
# string image ids and integer caption ids pass) and are turned back into the ids given before the statistics.
_IDS = ("caption_ids", "image_ids")
_FEATURES = datasets.Features(
    {
        "original_scores": datasets.Value("float64"),
        "variant_scores": datasets.Value("float64"),
        "variant_kinds": datasets.Value("string"),
        "variant_types": datasets.Value("string"),
        "caption_ids": datasets.Value("string"),
        "image_ids": datasets.Value("string"),
    }
)


TEXT_TAG, JSON_TAG = "s", "j"  # how ``ids_as_text`` marks a string id, and any other id (written as JSON)


def ids_as_text(ids, name: str) -> list[str]:
    """Ids of any type the statistics take (strings, numbers, NumPy scalars) as text that :func:`ids_from_text`
    turns back into the same values: one Arrow string column holds string image ids, integer caption ids, or both
    kinds at once, and the statistics get exactly the ids given. Columns of one type take one pass."""
    check_ids_present(ids, name)
    values = ids.tolist() if isinstance(ids, np.ndarray) else list(ids)
    if all(type(value) is str for value in values):
        return [TEXT_TAG + value for value in values]
    if all(type(value) is int for value in values):
        return [JSON_TAG + str(value) for value in values]  # an int's JSON
    return [_id_text(value, row, name) for row, value in enumerate(values)]


def _id_text(value, row: int, name: str) -> str:
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, str):
        return TEXT_TAG + value
    if not isinstance(value, (int, float)):
        raise LGIPInputError(f"{name}: row {row} is {value!r} ({type(value).__name__}); an id is a string or a number")
    return JSON_TAG + json.dumps(value)


def ids_from_text(texts) -> list:
    """The ids :func:`ids_as_text` wrote, as they were given (each distinct text read once)."""
    values = {text: text[1:] if text[0] == TEXT_TAG else json.loads(text[1:]) for text in dict.fromkeys(texts)}
    return list(map(values.__getitem__, texts))


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class LGIP(evaluate.Metric):
    """Paraphrase invariance (E_inv) and flip sensitivity (E_sens, PR) of image-text scores."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            module_type="metric",
            description=_DESCRIPTION,
            citation=CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=_FEATURES,
            homepage=HOMEPAGE,
            codebase_urls=CODEBASE_URLS,
            license=LICENSE,
            reference_urls=["https://cocodataset.org/"],
        )

    def add_batch(self, **columns):
        """Refuse a missing column or boolean scores by name before ``evaluate`` casts them to float64; hold the
        ids as text that keeps their type."""
        for name in self._feature_names():
            if columns.get(name) is None:
                raise ValueError(f"missing input {name!r}: pass one value per row for each of {list(_FEATURES)}")
        for name in ("original_scores", "variant_scores"):
            score_array(columns[name], name)
        return super().add_batch(**{**columns, **{name: ids_as_text(columns[name], name) for name in _IDS}})

    def add(self, **row):
        """One row (see ``add_batch``)."""
        return self.add_batch(**{name: [value] for name, value in row.items()})

    def _compute(
        self,
        original_scores,
        variant_scores,
        variant_kinds,
        variant_types,
        caption_ids,
        image_ids,
        pair_level: bool = False,
        bootstrap: int = 1000,
        seed: int = 0,
        confidence: float = 0.95,
        extra_types=None,
    ) -> dict:
        return lgip_statistics(
            original_scores,
            variant_scores,
            variant_kinds,
            variant_types,
            ids_from_text(caption_ids),
            ids_from_text(image_ids),
            extra_types=extra_types or (),
            require_both_kinds=False,
            pair_level=pair_level,
            bootstrap=bootstrap,
            seed=seed,
            confidence=confidence,
        )
