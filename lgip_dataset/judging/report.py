"""What a label store says: each flip's majority label counted per type and class with exact intervals,
how far the judges agree (Cohen's and Fleiss' kappa), and the flips found not valid, as JSON and Markdown.

The JSON is the ``lgip-judged`` format ``lgip audit --judged`` reads (counts per type), with the agreement added.
"""
from __future__ import annotations

import math
import warnings
from collections import Counter
from typing import Iterable, Sequence

from lgip_dataset.errors import DataError
from lgip_dataset.judging.labels import LABELS, VALID, majority
from lgip_dataset.judging.store import Store

FORMAT, VERSION = "lgip-judged", 1
ALL = "all"


def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    """Exact 95% interval of a proportion k / n."""
    from scipy.stats import beta  # here, not at import: scoring imports the package and has no use for scipy.stats

    low = 0.0 if k == 0 else float(beta.ppf(0.025, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(0.975, k + 1, n - k))
    return low, high


def records_of(store: Store, types: Sequence[str] | None = None) -> list[dict]:
    """The store's records of ``types`` (every record when None; a record drawn as several types is of each,
    and keeps those of ``types``); DataError naming a type it has no record of."""
    present = sorted({t for r in store.values() for t in r["types"]})
    unknown = [t for t in types or () if t not in present]
    if unknown:
        raise DataError(f"--types: the store has no flip of type {', '.join(map(repr, unknown))}; its types are "
                        f"{', '.join(present) or 'none (it is empty)'}")
    if types is None:
        return list(store.values())
    kept = [dict(r, types=[t for t in r["types"] if t in types]) for r in store.values()]
    return [r for r in kept if r["types"]]


def _labels(record: dict) -> list[str]:
    return [entry["label"] for entry in record["labels"]]


def defined(compute) -> float | None:
    """``compute()``, or None where the statistic is undefined (both judges give one and the same label)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = float(compute())
    return value if math.isfinite(value) else None


def agreement(records: Iterable[dict]) -> dict:
    """How far the judges of ``records`` agree: over the flips with two or more labels, the share whose first
    two labels are equal and Cohen's kappa of the first two labels (over the four labels, and over valid or
    not); over the flips with three or more, Fleiss' kappa of the first three. A kappa is None where it is
    undefined (one label throughout) or has no flip to rest on."""
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    labels = [_labels(r) for r in records]
    pairs = [votes[:2] for votes in labels if len(votes) >= 2]
    triples = [[LABELS.index(v) for v in votes[:3]] for votes in labels if len(votes) >= 3]
    first, second = [p[0] for p in pairs], [p[1] for p in pairs]
    out = {"flips_with_two_labels": len(pairs), "raw_agreement": None, "cohen_kappa": None, "cohen_kappa_valid": None,
           "flips_with_three_labels": len(triples), "fleiss_kappa": None}
    if pairs:
        out["raw_agreement"] = sum(a == b for a, b in pairs) / len(pairs)
        out["cohen_kappa"] = defined(lambda: cohen_kappa_score(first, second, labels=list(LABELS)))
        out["cohen_kappa_valid"] = defined(lambda: cohen_kappa_score(
            [a == VALID for a in first], [b == VALID for b in second], labels=[True, False]))
    if triples:
        out["fleiss_kappa"] = defined(lambda: fleiss_kappa(aggregate_raters(triples, n_cat=len(LABELS))[0]))
    return out


def _counts(records: list[dict]) -> dict:
    counts = Counter(majority(_labels(r)) for r in records)
    return {"drawn": len(records), **{label: counts[label] for label in LABELS}}


def judged_counts(records: list[dict]) -> dict:
    """The ``lgip-judged`` record of ``records``: per type (and over all) the flips judged (``drawn``) and their
    majority labels, with the judges' agreement per type and over all. A flip drawn as several types counts
    under each of them, and once over all."""
    types = sorted({t for r in records for t in r["types"]})
    of_type = {t: [r for r in records if t in r["types"]] for t in types}
    return {"format": FORMAT, "version": VERSION, "labels": list(LABELS),
            "per_type": {t: _counts(of_type[t]) for t in types}, ALL: _counts(records),
            "agreement": {ALL: agreement(records), "per_type": {t: agreement(of_type[t]) for t in types}}}


def _share(k: int, n: int) -> str:
    low, high = clopper_pearson(k, n)
    return f"{k / n:.1%} ({low:.1%}-{high:.1%})"


def _kappa(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def report_markdown(records: list[dict]) -> str:
    """The report of ``records``: classes over all flips and per type with Clopper-Pearson 95% intervals, the
    judges' agreement per type, and every flip whose majority label is not valid, with the judges' reasons."""
    if not records:
        raise DataError("no judged flip to report (the store is empty)")
    counts = judged_counts(records)
    judges = sorted({e["judge"] for r in records for e in r["labels"]})
    n = len(records)
    lines = [f"## Blind judgements: {n:,} flip(s), {len(judges)} judge(s) ({', '.join(judges)})", "",
             "Each flip counts once, with the label most of its judges gave (a tie counts against valid); "
             "intervals are Clopper-Pearson 95%.", "", "| class | flips | share (95% CI) |", "|---|---:|---|"]
    lines += [f"| {label} | {counts[ALL][label]:,} | {_share(counts[ALL][label], n)} |" for label in LABELS]
    lines += ["", "| type | judged | " + " | ".join(LABELS) + " | valid share (95% CI) |",
              "|---|---:|" + "---:|" * len(LABELS) + "---|"]
    for type_, c in [*counts["per_type"].items(), (ALL, counts[ALL])]:
        lines.append(f"| {type_} | {c['drawn']:,} | " + " | ".join(f"{c[label]:,}" for label in LABELS)
                     + f" | {_share(c[VALID], c['drawn'])} |")
    lines += ["", "### Agreement", "", "Cohen's kappa compares the first two labels of each flip labelled twice or "
              "more; Fleiss' kappa the first three of each flip labelled three times or more (— where undefined).", "",
              "| type | flips with 2+ labels | same label | Cohen's kappa (4 labels) | Cohen's kappa (valid or not) | "
              "flips with 3+ labels | Fleiss' kappa (4 labels) |", "|---|---:|---:|---:|---:|---:|---:|"]
    for type_, a in [*counts["agreement"]["per_type"].items(), (ALL, counts["agreement"][ALL])]:
        same = "—" if a["raw_agreement"] is None else f"{a['raw_agreement']:.1%}"
        lines.append(f"| {type_} | {a['flips_with_two_labels']:,} | {same} | {_kappa(a['cohen_kappa'])} | "
                     f"{_kappa(a['cohen_kappa_valid'])} | {a['flips_with_three_labels']:,} | {_kappa(a['fleiss_kappa'])} |")
    lines += ["", "### Flips not judged valid", "", "| type | class | caption | flip | labels (judge: label, reason) |",
              "|---|---|---|---|---|"]
    for r in sorted(records, key=lambda r: (r["types"][0], r["caption"], r["variant"])):
        label = majority(_labels(r))
        if label != VALID:
            given = "; ".join(f"{e['judge']}: {e['label']}" + (f", {e['reason']}" if e["reason"] else "") for e in r["labels"])
            lines.append(f"| {', '.join(r['types'])} | {label} | {_cell(r['caption'])} | {_cell(r['variant'])} | {_cell(given)} |")
    return "\n".join(lines) + "\n"
