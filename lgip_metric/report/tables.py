"""Table 1 (E_inv, E_sens, PR), Table 2 (per variant type) and paired comparisons, as Markdown and CSV."""
from __future__ import annotations

import csv
import io

from lgip_metric import stats
from lgip_metric.statistics import reference
from lgip_metric.results.provenance import RANDOM_MARK
from lgip_metric.results.record import Results

METRICS = ("E_inv", "E_sens", "PR")
ARROWS = {"E_inv": "↓", "E_sens": "↑", "PR": "↑"}
MEASURED = "measured"
BLIND = "blind (text only)"
BLIND_LABEL = "n-gram LM, cross-fitted (no image)"
COUNT_KEYS = ("base_pairs", "variant_rows", "images")


def number(value, interval=None, digits: int = 4) -> str:
    """``0.0123 [0.0101, 0.0140]``; an empty cell for a missing value."""
    if value is None:
        return ""
    text = f"{value:.{digits}f}"
    return f"{text} [{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]" if interval else text


def markdown(header: list[str], rows: list[list]) -> str:
    """A GitHub-flavoured Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def to_csv(records: list[dict]) -> str:
    """CSV text of dict records (columns: the union of keys, first-seen order)."""
    columns = list(dict.fromkeys(k for r in records for k in r))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return buffer.getvalue()


def notes(results: list[Results], paper: bool) -> str:
    """What every table's numbers mean: averaging, intervals, dataset, random weights, quotes."""
    first = results[0].data
    boot = results[0].statistics["bootstrap"]
    headline = first["statistics"].get("headline_types")
    lines = [
        f"- Averaging: **{first['averaging']}** — {stats.AVERAGING[first['averaging']]}.",
        *([f"- Table 1 averages the paper's core types only (paraphrases: {', '.join(headline['paraphrase'])}; "
           f"flips: {', '.join(headline['flip'])}); every type is in Table 2."] if headline else []),
        f"- Dataset: `{first['dataset'].get('source')}` (config `{first['dataset'].get('config')}`, "
        f"fingerprint `{first['dataset']['fingerprint']}`).",
    ]
    if boot["resamples"]:
        lines.append(
            f"- Brackets: {boot['confidence']:.0%} percentile bootstrap intervals over images "
            f"({boot['resamples']} resamples, seed {boot['seed']})."
        )
    if any(r.random_weights for r in results):
        lines.append(f"- **[{RANDOM_MARK}]**: scored with untrained random weights; the numbers are meaningless "
                     "(pipeline tests and timing only).")
    if paper:
        lines.append(f"- Rows marked *{reference.LABEL}* are quoted from the paper (40,000 COCO training images), "
                     "not computed here; they are not comparable with measured rows on another dataset.")
    return "\n".join(lines) + "\n"


def _counts(block: dict, metric: str) -> dict:
    return block.get("counts", {}).get(metric) or {}


# ------------------------------------------------------------------------------------------ Table 1


def table1_records(results: list[Results], paper: bool) -> list[dict]:
    """One flat record per model (then per quoted paper row): values, intervals, counts."""
    records = []
    for r in results:
        s = r.statistics
        record = {"model": r.label, "source": MEASURED, "random_weights": r.random_weights,
                  "averaging": s["averaging"], "dataset_fingerprint": r.fingerprint}
        for m in METRICS:
            low, high = s.get("intervals", {}).get(m) or (None, None)
            record.update({m: s[m], f"{m}_low": low, f"{m}_high": high})
            record.update({f"{m}_{k}": _counts(s, m).get(k) for k in COUNT_KEYS})
        records.append(record)
    if paper:
        records += [{"model": row["model"], "source": reference.LABEL, "random_weights": False,
                     **{m: row[m] for m in METRICS}} for row in reference.table1()]
    return records


def table1_markdown(results: list[Results], paper: bool) -> str:
    header = ["Model", *(f"{m} {ARROWS[m]}" for m in METRICS), "base pairs (para / flip)",
              "variant rows (para / flip)", "images", "source"]
    rows = []
    for r in results:
        s = r.statistics
        pairs = f"{_counts(s, 'E_inv')['base_pairs']} / {_counts(s, 'PR')['base_pairs']}"
        variants = f"{_counts(s, 'E_inv')['variant_rows']} / {_counts(s, 'PR')['variant_rows']}"
        images = max(_counts(s, m)["images"] for m in METRICS)
        rows.append([r.label, *(number(s[m], s.get("intervals", {}).get(m)) for m in METRICS),
                     pairs, variants, images, MEASURED])
    if paper:
        rows += [[row["model"], *(number(row[m], digits=3) for m in METRICS), "", "", "", f"*{reference.LABEL}*"]
                 for row in reference.table1()]
    return "## LGIP Table 1: invariance and sensitivity\n\n" + markdown(header, rows) + "\n" + notes(results, paper)


# ------------------------------------------------------------------------------------------ Table 2


def _types(results: list[Results], kind: str) -> list[str]:
    """Variant types of ``kind`` present in any results, in their canonical order."""
    return list(dict.fromkeys(t for r in results for t, b in r.statistics["per_type"].items() if b["kind"] == kind))


def table2_records(results: list[Results], paper: bool) -> list[dict]:
    """Long format: one record per (model, type, metric) with interval and counts."""
    records = []
    for r in results:
        for type_, block in r.statistics["per_type"].items():
            for m in stats.METRICS[block["kind"]]:
                low, high = block.get("intervals", {}).get(m) or (None, None)
                records.append({"model": r.label, "source": MEASURED, "random_weights": r.random_weights,
                                "type": type_, "kind": block["kind"], "metric": m, "value": block[m],
                                "low": low, "high": high, **{k: _counts(block, m).get(k) for k in COUNT_KEYS}})
    if paper:
        records += [{"model": row["model"], "source": reference.LABEL, "random_weights": False, "type": t,
                     "kind": stats.FLIP, "metric": m, "value": v}
                    for row in reference.table2() for t, values in row["per_type"].items() for m, v in values.items()]
    return records


def table2_markdown(results: list[Results], paper: bool) -> str:
    flips = _types(results, stats.FLIP)
    header = ["Model", *(f"{t} {label}" for t in flips for label in ("gap (E_sens) ↑", "PR ↑")), "source"]
    rows = []
    for r in results:
        cells = []
        for t in flips:
            block = r.statistics["per_type"].get(t)
            cells += [number(block[m], block.get("intervals", {}).get(m)) if block else "—" for m in ("E_sens", "PR")]
        rows.append([r.label, *cells, MEASURED])
    lm = next((r.data["blind"]["lm"]["blind"]["per_type"] for r in results if r.data.get("blind")), None)
    if lm:
        rows.append([BLIND_LABEL, *(cell for t in flips for cell in ("—", number(lm[t]["PR"], lm[t]["interval"])
                                                                     if t in lm else "—")), BLIND])
    if paper:
        for row in reference.table2():
            values = row["per_type"]
            cells = [number(values[t][m], digits=3) if t in values else "—" for t in flips for m in ("E_sens", "PR")]
            rows.append([row["model"], *cells, f"*{reference.LABEL}*"])
    text = "## LGIP Table 2: flip types\n\n" + markdown(header, rows)
    paraphrases = _types(results, stats.PARAPHRASE)
    if paraphrases:
        rows = [[r.label, *(number(r.statistics["per_type"][t]["E_inv"],
                                   r.statistics["per_type"][t].get("intervals", {}).get("E_inv"))
                            if t in r.statistics["per_type"] else "—" for t in paraphrases)] for r in results]
        text += "\n### Paraphrase types\n\n" + markdown(["Model", *(f"{t} E_inv ↓" for t in paraphrases)], rows)
    counts = [[r.label, t, *(_counts(b, stats.METRICS[b["kind"]][0]).get(k) for k in COUNT_KEYS)]
              for r in results for t, b in r.statistics["per_type"].items()]
    text += "\n### Counts per type\n\n" + markdown(["Model", "type", "base pairs", "variant rows", "images"], counts)
    return text + "\n" + notes(results, paper)


# ------------------------------------------------------------------------------------------ comparison


def comparison_records(label_a: str, label_b: str, comparison: dict) -> list[dict]:
    """One record per (type or global, metric): A, B, A - B with its paired interval, McNemar."""
    records = []
    blocks = [("all", comparison)] + list(comparison["per_type"].items())
    for type_, block in blocks:
        for m in METRICS:
            if m in block and block[m] is not None:
                entry = block[m]
                low, high = entry.get("interval") or (None, None)
                test = block.get("mcnemar", {}) if m == "PR" else {}
                records.append({"model_a": label_a, "model_b": label_b, "type": type_, "metric": m,
                                "a": entry["a"], "b": entry["b"], "difference": entry["difference"],
                                "low": low, "high": high, "mcnemar_a_only": test.get("a_only"),
                                "mcnemar_b_only": test.get("b_only"), "mcnemar_p": test.get("p_value")})
    return records


def comparison_markdown(label_a: str, label_b: str, comparison: dict, n_rows: int) -> str:
    """One section: A, B, A - B [paired CI] per metric and type, and McNemar on the flips."""
    rows = [[r["type"], r["metric"], number(r["a"]), number(r["b"]),
             number(r["difference"], (r["low"], r["high"]) if r["low"] is not None else None),
             "" if r["mcnemar_p"] is None else f"{r['mcnemar_a_only']} / {r['mcnemar_b_only']}, p = {r['mcnemar_p']:.3g}"]
            for r in comparison_records(label_a, label_b, comparison)]
    return (f"### A = {label_a} vs B = {label_b} ({n_rows} rows)\n\n"
            + markdown(["type", "metric", "A", "B", "A − B [paired CI]", "McNemar: A-only / B-only flips"], rows)
            + f"\nMcNemar: {comparison['mcnemar']['test']} test on the flip orderings (s(I,c) > s(I,c†)); it treats "
            "rows as independent, so prefer the paired image-bootstrap interval of the PR difference.\n\n")
