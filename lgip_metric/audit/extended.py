"""The extended-probe section of an audit: per extended family, its flips and images, how a blind judge
labelled a seeded sample of them, and the text-only scorers' figures, beside the nearest peer set
(SugarCrepe's matching subset, ``registry.PEER_TYPES``) through the same audit.

The judged figures come from the JSON that ``lgip judge report --json`` writes (the
counts per type and label, for example ``docs/judged_extended_flips.json``); :func:`read_judged` checks it.
"""
from __future__ import annotations

import json
from pathlib import Path

from lgip_dataset.errors import DataError
from lgip_dataset.perturb.registry import PEER_TYPES
from lgip_dataset.selection.measurable import NOT_MEASURABLE
from lgip_metric.variant_types import VARIANT_TYPES

VALID = "valid"


def read_judged(path: str | Path, types=None) -> dict[str, dict]:
    """The per-type counts of a judged file (``{"per_type": {type: {"drawn", label: count}}}``); DataError
    naming the file and what is wrong, or, given the audited ``types``, when none of them is both an
    extended family and judged in the file (its figures would be shown nowhere)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise DataError(f"--judged {path}: cannot read it as JSON ({err}); give the file that "
                        "`lgip judge report --json` writes") from None
    if not isinstance(data, dict) or data.get("format") != "lgip-judged" or not isinstance(data.get("per_type"), dict):
        raise DataError(f"--judged {path}: not a judged file (format 'lgip-judged' with 'per_type'); give the "
                        "file that `lgip judge report --json` writes")
    per_type = data["per_type"]
    for type_, counts in per_type.items():
        if not isinstance(counts, dict) or not all(_whole(counts.get(k)) for k in ("drawn", VALID)) \
                or not 0 <= counts[VALID] <= counts["drawn"] or counts["drawn"] == 0:
            raise DataError(f"--judged {path}: type {type_!r} needs whole counts 'drawn' and 'valid' "
                            f"(0 <= valid <= drawn, drawn at least 1), got {counts!r}")
    if types is not None:
        extended = sorted({str(t) for t in types if _is_extended(str(t))})
        if not set(extended) & set(per_type):
            raise DataError(f"--judged {path}: it judges {', '.join(map(repr, per_type)) or 'no type'}, but the "
                            f"audited extended families are {', '.join(map(repr, extended)) or 'none'}; the judged "
                            "figures would be shown nowhere: drop --judged or audit the families it judges")
    return per_type


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_extended(type_: str) -> bool:
    """A registered extended family scored pairwise (not a core or hard family, a scramble or a user's type)."""
    entry = VARIANT_TYPES.get(type_, {})
    return entry.get("group") == "extended" and entry.get("scoring") == "pairwise" and entry.get("kind") == "flip"


def extended_types(result: dict) -> list[str]:
    """The extended pairwise flip types of an audit result (not the scrambles, scored n-way)."""
    return [t for t in result["per_type"] if _is_extended(t)]


def rows(result: dict, peer: dict | None = None, judged: dict | None = None) -> list[dict]:
    """One record per extended family, then one per matching peer subset of ``peer`` (an audit result)."""
    out = []
    for type_ in extended_types(result):
        out.append(_record(type_, result["per_type"][type_], (judged or {}).get(type_)))
        peer_type = PEER_TYPES.get(type_)
        if peer is not None and peer_type in peer["per_type"]:
            out.append(_record(peer_type, peer["per_type"][peer_type], (judged or {}).get(peer_type), beside=type_))
    return out


def _record(type_: str, entry: dict, judged: dict | None, beside: str | None = None) -> dict:
    invalid = None if judged is None else (judged["drawn"] - judged[VALID]) / judged["drawn"] if judged["drawn"] else None
    return {"type": type_, "beside": beside, "flips": entry["pairs"], "images": entry["images"],
            "judged": None if judged is None else judged["drawn"], "judged_invalid": invalid,
            "learners": {k: v["accuracy"] for k, v in entry.get("learners", {}).items()},
            "bigram": (entry.get("bigram") or {}).get("PR"), "trigram": (entry.get("trigram") or {}).get("PR"),
            NOT_MEASURABLE: {k: v[NOT_MEASURABLE] for k, v in [*entry.get("learners", {}).items(),
                                                               *((s, entry.get(s) or {}) for s in ("bigram", "trigram"))]
                             if v.get(NOT_MEASURABLE)}}


def _figure(record: dict, scorer: str, value) -> str:
    from lgip_metric.report.tables import number

    return "not measurable" if scorer in record[NOT_MEASURABLE] else number(value, digits=3)


def markdown(records: list[dict], learners: list[str]) -> str:
    """The section: flips, images, judged invalid share, learned and n-gram blind accuracy per family."""
    from lgip_metric.report.tables import markdown as table

    if not records:
        return ""
    header = ["family", "flips", "images", "judged (invalid)", *(f"{k} learner acc" for k in learners),
              "bigram PR", "trigram PR"]
    lines = [[r["type"] if r["beside"] is None else f"↳ {r['type']} (peer)", f"{r['flips']:,}", f"{r['images']:,}",
              "—" if r["judged"] is None else f"{r['judged']} ({r['judged_invalid']:.1%})",
              *(_figure(r, k, r["learners"].get(k)) for k in learners),
              _figure(r, "bigram", r["bigram"]), _figure(r, "trigram", r["trigram"])] for r in records]
    return ("\n### Extended probes\n\n" + table(header, lines)
            + "\nJudged: seeded flips labelled blind (type and original hidden; `lgip judge`), the "
              "share not valid (linguistically invalid, absurd or not a contradiction). Peer rows: the nearest "
              "SugarCrepe subset through the same audit. 0.5 is chance for both blind measures.\n")
