"""The Leaderboard tab: results files shipped with the Space plus the paper's quoted rows.

Tables come from ``lgip_metric.report.tables`` and the frontier from ``lgip_metric.report.plots``,
so the Space shows exactly what ``lgip report`` writes.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd

from lgip_metric import stats
from lgip_metric.statistics import reference
from lgip_metric.report import hard, plots, tables
from lgip_metric.results.record import Results, load_comparable

RESULTS_DIR = Path(__file__).resolve().parents[1] / "results"
METRICS = ("E_inv", "E_sens", "PR")


def load_shipped(folder: Path = RESULTS_DIR) -> list[Results]:
    """Every ``*.json`` results file in ``folder`` (refused if they come from different datasets)."""
    paths = sorted(folder.glob("*.json"))
    return load_comparable(paths) if paths else []


def _hard_columns(results: list[Results]) -> dict[str, dict]:
    """Per model: the hard block's E_sens and PR, and each block's blind PR (bigram, trigram)."""
    columns: dict[str, dict] = {}
    for rec in hard.hard_records(results):
        block = "hard" if rec["block"] == hard.HARD_BLOCK else "paper flips"
        if rec["scorer"] == "model":
            if block == "hard":
                columns.setdefault(rec["model"], {}).update({"hard E_sens": rec["E_sens"], "hard PR": rec["PR"]})
        else:
            columns.setdefault(rec["model"], {})[f"{block} PR, {rec['scorer']}"] = rec["PR"]
    return columns


def table(results: list[Results]) -> pd.DataFrame:
    """One row per model: E_inv, E_sens, PR, per flip type gap and PR, 95% intervals, counts, source;
    the hard flips' block and the blind scorers' PR beside both blocks when the results have them."""
    hard_columns = _hard_columns(results)
    per_type = {}
    for rec in tables.table2_records(results, paper=True):
        if rec["kind"] == stats.FLIP:
            name = "gap" if rec["metric"] == "E_sens" else rec["metric"]
            per_type.setdefault((rec["model"], rec["source"]), {})[f"{rec['type']} {name}"] = rec["value"]
    rows = []
    for rec in tables.table1_records(results, paper=True):
        row = {"model": rec["model"], "source": rec["source"], **{m: rec[m] for m in METRICS}}
        row.update(per_type.get((rec["model"], rec["source"]), {}))
        for m in METRICS:
            low, high = rec.get(f"{m}_low"), rec.get(f"{m}_high")
            row[f"{m} 95% CI"] = f"[{low:.4f}, {high:.4f}]" if low is not None else ""
        row["base pairs"] = rec.get("PR_base_pairs")
        row["images"] = rec.get("PR_images")
        if rec["source"] == tables.MEASURED:
            row.update(hard_columns.get(rec["model"], {}))
        rows.append(row)
    return pd.DataFrame(rows).round(4)


def frontier_png(results: list[Results]) -> Path:
    """The invariance-sensitivity frontier of ``results`` with the paper's quoted points, as a PNG
    (the paper's points alone while no measured results are shipped)."""
    out = Path(tempfile.mkdtemp(prefix="lgip-frontier-"))
    return next(p for p in plots.frontier(results, out, paper=True) if p.suffix == ".png")


def notes(results: list[Results]) -> str:
    """What the table shows, from the report's own notes, plus how to add a model."""
    head = (f"**{len(results)} measured model(s)** shipped with this Space" if results else
            "**No measured results are shipped yet** (no run with real weights has been published), so only the "
            "paper's quoted rows and their frontier are shown.")
    body = tables.notes(results, paper=True) if results else (
        f"- Rows marked *{reference.LABEL}* are quoted from the paper (40,000 COCO training images), not computed here.\n")
    return (f"{head} Click a column header to sort.\n\n{body}\n"
            "Add a model: run `lgip evaluate --model NAME --dataset ORG/lgip --out DIR` and put `DIR/results.json` "
            "in the Space's `results/` folder (`builders/publish.py` refuses random-weight results).")
