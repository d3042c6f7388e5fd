"""Report sections for the extended probes: n-way scramble accuracy, blind baselines, 2x2 groups.

Each section is Markdown (with its CSV records) and is empty when no results hold that block, so a
report shows exactly what the dataset held.
"""
from __future__ import annotations

from lgip_metric import stats
from lgip_metric.statistics import blind
from lgip_metric.statistics import groups
from lgip_metric.report.tables import markdown, number, to_csv
from lgip_metric.results.record import Results



def nway_records(results: list[Results]) -> list[dict]:
    """One record per (model, scramble type): SNARE n-way accuracy, interval and base pairs."""
    records = []
    for r in results:
        for type_, block in r.statistics["per_type"].items():
            if stats.NWAY in block:
                low, high = block.get("intervals", {}).get(stats.NWAY) or (None, None)
                records.append({"model": r.label, "type": type_, "nway_accuracy": block[stats.NWAY], "low": low,
                                "high": high, "base_pairs": block["counts"][stats.NWAY]["base_pairs"]})
    return records


def nway_markdown(results: list[Results]) -> str:
    records = nway_records(results)
    if not records:
        return ""
    rows = [[r["model"], r["type"], number(r["nway_accuracy"], (r["low"], r["high"]) if r["low"] is not None else None),
             r["base_pairs"]] for r in records]
    return ("## Word-order scrambles: n-way accuracy (SNARE)\n\n"
            + markdown(["Model", "scramble type", "n-way accuracy ↑", "base pairs"], rows)
            + "\nPer base caption 1[s(I,c) > max over its scrambles of that type] (a tie fails), averaged over the "
            "captions with at least one scramble of that type; chance is 1/(n+1) for n scrambles.\n")


def blind_records(results: list[Results]) -> list[dict]:
    """Per (model, flip type): model PR, the LM's blind PR, balanced counts and PRs, text similarity."""
    records = []
    for r in results:
        block = r.data.get("blind")
        if not block:
            continue
        lm, balanced = block["lm"]["blind"], block["balanced"]
        trigram = block.get("trigram", {}).get("blind")  # results written before the trigram lack it
        similarity = block.get("text_similarity", {}).get("per_type", {})
        learned = (block.get("adversary") or {}).get("per_type")  # results written before it lack it
        for type_, values in r.statistics["per_type"].items():
            if values["kind"] != stats.FLIP:
                continue
            kept = balanced["counts"].get(type_, {})
            after = (balanced.get("model") or {}).get("per_type", {}).get(type_)
            after_blind = (balanced.get("blind") or {}).get("per_type", {}).get(type_)
            records.append({
                "model": r.label, "type": type_, "PR": values["PR"],
                "blind_lm_PR": lm["per_type"].get(type_, {}).get("PR"),
                "blind_trigram_PR": trigram["per_type"].get(type_, {}).get("PR") if trigram else None,
                **({"adversary_accuracy": learned.get(type_, {}).get("accuracy"),
                    "adversary_interval": learned.get(type_, {}).get("interval")} if learned is not None else {}),
                "balanced_kept": kept.get("kept"), "flips": kept.get("flips"),
                "balanced_blind_lm_PR": after_blind["PR"] if after_blind else None,
                "balanced_PR": after["PR"] if after else None,
                "t_sim_mean": similarity.get(type_, {}).get("mean"),
                "t_sim_share_collapsed": similarity.get(type_, {}).get("share_collapsed"),
            })
    return records


def blind_markdown(results: list[Results]) -> str:
    records = blind_records(results)
    if not records:
        return ""
    learned = any("adversary_accuracy" in r for r in records)
    rows = [[r["model"], r["type"], number(r["PR"]), number(r["blind_lm_PR"]), number(r["blind_trigram_PR"]),
             *([number(r.get("adversary_accuracy"), r.get("adversary_interval"))] if learned else []),
             f"{r['balanced_kept']} / {r['flips']}", number(r["balanced_blind_lm_PR"]), number(r["balanced_PR"]),
             number(r["t_sim_mean"]), number(r["t_sim_share_collapsed"])] for r in records]
    first = next(r for r in results if r.data.get("blind")).data["blind"]
    adversary = next((r.data["blind"]["adversary"] for r in results if (r.data.get("blind") or {}).get("adversary")),
                     None)
    return ("## Blind baselines (SugarCrepe): how far text alone goes\n\n"
            + markdown(["Model", "flip type", "PR ↑", "blind LM PR", "blind trigram PR",
                        *(["learned word adversary accuracy (held-out)"] if learned else []), "balanced kept / flips",
                        "blind LM PR (balanced)", "PR (balanced) ↑", "mean cos(f_text(c), f_text(c†))", f"share > {blind.COLLAPSE}"], rows)
            + f"\n- Blind LM: {first['lm']['scorer']}. Its PR uses the same nesting as the model's PR; a model whose "
            "PR is near the blind LM's may be exploiting text plausibility rather than the image.\n"
            + (f"- Blind trigram: {first['trigram']['scorer']}.\n" if "trigram" in first else "")
            + (f"- Learned word adversary: {adversary['scorer']}; 0.5 is chance, and `lgip audit` gives its "
               "character-level twin and the words behind it.\n" if adversary else "")
            + f"- Balanced: {first['balanced']['rule']}.\n"
            "- Text similarity: the model's own text tower; a share near 1 above the threshold means its text "
            "encoder cannot tell the captions apart (text-encoder collapse, ControlledImCaps).\n")


def sections(results: list[Results]) -> dict[str, str]:
    """File name -> text of every probe section the results hold (Markdown and CSV)."""
    out = {}
    for name, text, records in (("nway", nway_markdown(results), nway_records(results)),
                                ("blind", blind_markdown(results), blind_records(results)),
                                ("groups", groups_markdown(results), groups_records(results))):
        if text:
            out[f"{name}.md"], out[f"{name}.csv"] = text, to_csv(records)
    return out


def groups_records(results: list[Results]) -> list[dict]:
    """Per (model, group type or "all"): text, image and group scores with the number of groups."""
    records = []
    for r in results:
        block = r.data.get("groups")
        if block:
            for type_, values in [("all", block), *block["per_type"].items()]:
                records.append({"model": r.label, "type": type_,
                                **{name: values[name] for name in (*groups.SCORES, "groups")}})
    return records


def groups_markdown(results: list[Results]) -> str:
    records = groups_records(results)
    if not records:
        return ""
    rows = [[r["model"], r["type"], *(number(r[name]) for name in groups.SCORES), r["groups"]] for r in records]
    return ("## 2x2 groups (EqBen / Winoground)\n\n"
            + markdown(["Model", "type", "text ↑", "image ↑", "group ↑", "groups"], rows)
            + f"\n{groups.DESCRIPTION}. Images A and B have human captions that differ by one flipped word.\n")
