"""The hard flips' headline block beside Table 1, each with the text-only (blind) scorers' PR."""
from __future__ import annotations

from lgip_metric import stats
from lgip_metric.report.tables import markdown, number
from lgip_metric.results.record import Results

PAPER_BLOCK, HARD_BLOCK = "paper flips (Table 1)", "hard flips"
SCORERS = {"lm": "blind: bigram KN LM", "trigram": "blind: trigram KN LM"}  # keys of results.json "blind"
ADVERSARY = "blind: learned word adversary (held-out accuracy)"  # results.json "blind" "adversary", when present


def _blind_block(r: Results, scorer: str, block: str) -> dict | None:
    """One blind scorer's PR block (headline of the paper's flips, or the hard block); None if absent."""
    data = (r.data.get("blind") or {}).get(scorer, {}).get("blind") or {}
    return data.get("headline") if block == PAPER_BLOCK else data.get(stats.HARD)


def _adversary(r: Results) -> dict:
    """The learned adversary's entry of the blind block ({} for results written before it)."""
    return (r.data.get("blind") or {}).get("adversary") or {}


def hard_records(results: list[Results]) -> list[dict]:
    """Per (model, block): E_sens, PR, counts, per hard type PR; then each blind scorer's PR."""
    records = []
    for r in results:
        s = r.statistics
        for block, values, types in ((PAPER_BLOCK, s, s["headline_types"]["flip"]),
                                     (HARD_BLOCK, s.get(stats.HARD), s["headline_types"].get(stats.HARD))):
            if values is None:
                continue
            counts = values["counts"]["PR"]
            records.append({"model": r.label, "scorer": "model", "block": block, "types": ",".join(types),
                            "E_sens": values["E_sens"], "PR": values["PR"],
                            "PR_interval": values.get("intervals", {}).get("PR"),
                            "base_pairs": counts["base_pairs"], "variant_rows": counts["variant_rows"]})
            for scorer, label in SCORERS.items():
                blind = _blind_block(r, scorer, block)
                if blind is not None:
                    records.append({"model": r.label, "scorer": label, "block": block, "types": ",".join(types),
                                    "E_sens": None, "PR": blind["PR"], "PR_interval": blind.get("interval"),
                                    "base_pairs": blind["counts"]["base_pairs"],
                                    "variant_rows": blind["counts"]["variant_rows"]})
            learned = _adversary(r).get("headline" if block == PAPER_BLOCK else stats.HARD)
            if learned is not None:  # pair-level accuracy in the PR column: no base pairs
                records.append({"model": r.label, "scorer": ADVERSARY, "block": block, "types": ",".join(types),
                                "E_sens": None, "PR": learned["accuracy"], "PR_interval": learned.get("interval"),
                                "base_pairs": None, "variant_rows": learned["pairs"]})
    return records


def hard_markdown(results: list[Results]) -> str:
    """Both headline blocks side by side (model rows, then the blind rows), and PR per hard type."""
    records = hard_records(results)
    rows = [[r["model"] if r["scorer"] == "model" else f"{r['model']} — {r['scorer']}", r["block"],
             number(r["E_sens"]), number(r["PR"], r["PR_interval"]),
             "—" if r["base_pairs"] is None else r["base_pairs"], r["variant_rows"]] for r in records]
    text = ("## Hard flips beside Table 1\n\n"
            "The hard flips (`hard_object`, `hard_color`, `hard_count`) substitute a word that fits the caption's "
            "context (chosen with cross-fitted COCO caption statistics so that text alone sits near chance); "
            "Table 1 stays on the paper's flips. Blind rows: the PR a text-only language model reaches without "
            "the image (cross-fitted by image); a model's PR means little where it is close to them.\n\n"
            + markdown(["Model / scorer", "block", "E_sens ↑", "PR ↑", "base pairs", "flip rows"], rows)
            + ("\nLearned adversary rows: in the PR column, the held-out accuracy (pair-level) of a word 1-2-gram "
               "logistic regression that sees only the caption and the flip, one per flip type, cross-fitted over "
               "image folds: the share of flips whose text alone gives them away.\n"
               if any(r["scorer"] == ADVERSARY for r in records) else ""))
    hard_types = [t for t in stats.HARD_TYPES if any(t in r.statistics["per_type"] for r in results)]
    per_type = []
    for r in results:
        cells = [number(r.statistics["per_type"][t]["PR"]) if t in r.statistics["per_type"] else "—" for t in hard_types]
        per_type.append([r.label, *cells])
        for scorer, label in SCORERS.items():
            blind = ((r.data.get("blind") or {}).get(scorer, {}).get("blind") or {}).get("per_type")
            if blind:
                per_type.append([f"{r.label} — {label}", *(number(blind[t]["PR"]) if t in blind else "—"
                                                          for t in hard_types)])
        if learned := _adversary(r).get("per_type"):
            per_type.append([f"{r.label} — {ADVERSARY}", *(number(learned[t]["accuracy"]) if t in learned else "—"
                                                         for t in hard_types)])
    return text + "\n### PR per hard type\n\n" + markdown(["Model / scorer", *(f"{t} PR" for t in hard_types)], per_type)
