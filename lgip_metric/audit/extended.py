"""The extended-probe section of an audit: per extended family, its flips and images, how a blind judge
labelled a seeded sample of them, and the text-only scorers' figures, beside the nearest peer set
(SugarCrepe's matching subset, ``registry.PEER_TYPES``) through the same audit.

The judged figures come from the JSON that ``benchmarks/blind_judging.py tally --json`` writes (the
counts per type and label, for example ``docs/judged_extended_flips.json``); :func:`read_judged` checks it.
"""
from __future__ import annotations

import json
from pathlib import Path

from lgip_dataset.errors import DataError
from lgip_dataset.perturb.registry import NWAY_SCORED, PEER_TYPES, group_of

VALID = "valid"


def read_judged(path: str | Path) -> dict[str, dict]:
    """The per-type counts of a judged file (``{"per_type": {type: {"drawn", label: count}}}``); DataError
    naming the file and what is wrong."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise DataError(f"--judged {path}: cannot read it as JSON ({err}); give the file that "
                        "`benchmarks/blind_judging.py tally --json` writes") from None
    if not isinstance(data, dict) or data.get("format") != "lgip-judged" or not isinstance(data.get("per_type"), dict):
        raise DataError(f"--judged {path}: not a judged file (format 'lgip-judged' with 'per_type'); give the "
                        "file that `benchmarks/blind_judging.py tally --json` writes")
    per_type = data["per_type"]
    for type_, counts in per_type.items():
        if not isinstance(counts, dict) or not isinstance(counts.get("drawn"), int) \
                or not isinstance(counts.get(VALID), int) or not 0 <= counts[VALID] <= counts["drawn"]:
            raise DataError(f"--judged {path}: type {type_!r} needs whole counts 'drawn' and 'valid' "
                            f"(0 <= valid <= drawn), got {counts!r}")
    return per_type


def extended_types(result: dict) -> list[str]:
    """The extended pairwise flip types of an audit result (not the scrambles, scored n-way)."""
    return [t for t in result["per_type"] if group_of(t) == "extended" and t not in NWAY_SCORED]


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
            "bigram": (entry.get("bigram") or {}).get("PR"), "trigram": (entry.get("trigram") or {}).get("PR")}


def markdown(records: list[dict], learners: list[str]) -> str:
    """The section: flips, images, judged invalid share, learned and n-gram blind accuracy per family."""
    from lgip_metric.report.tables import markdown as table, number

    if not records:
        return ""
    header = ["family", "flips", "images", "judged (invalid)", *(f"{k} learner acc" for k in learners),
              "bigram PR", "trigram PR"]
    lines = [[r["type"] if r["beside"] is None else f"↳ {r['type']} (peer)", f"{r['flips']:,}", f"{r['images']:,}",
              "—" if r["judged"] is None else f"{r['judged']} ({r['judged_invalid']:.1%})",
              *(number(r["learners"].get(k), digits=3) for k in learners),
              number(r["bigram"], digits=3), number(r["trigram"], digits=3)] for r in records]
    return ("\n### Extended probes\n\n" + table(header, lines)
            + "\nJudged: seeded flips labelled blind (type and original hidden; `benchmarks/blind_judging.py`), the "
              "share not valid (linguistically invalid, absurd or not a contradiction). Peer rows: the nearest "
              "SugarCrepe subset through the same audit. 0.5 is chance for both blind measures.\n")
