"""The Leaderboard tab: results files shipped with the Space, and run folders, beside the paper's quoted rows.

The table is ``lgip_metric.report.leaderboard``'s and the frontier ``lgip_metric.report.plots``', so the
Space shows exactly what ``lgip report`` and ``lgip evaluate --model A,B,C`` write.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd

from lgip_metric.report import leaderboard, plots, tables
from lgip_metric.results.record import Results, load_comparable
from lgip_metric.statistics import reference
from lgip_metric.sweep import results_paths

RESULTS_DIR = Path(__file__).resolve().parents[1] / "results"
RUNS_ENV = "LGIP_SPACE_RUNS"  # a folder of run folders (e.g. an `lgip evaluate --model A,B,C --out` folder)


def load_shipped(folder: Path = RESULTS_DIR, runs: Path | None = None) -> list[Results]:
    """Every ``*.json`` results file in ``folder`` and every run's results.json under ``runs`` (a sweep's
    ``--out``), refused if they come from different datasets or rows."""
    paths = sorted(folder.glob("*.json"))
    if runs is not None and runs.is_dir():
        paths += results_paths([runs])
    return load_comparable(paths) if paths else []


def table(results: list[Results]) -> pd.DataFrame:
    """One row per model, best PR first, then the paper's quoted rows (:func:`lgip_metric.report.leaderboard.frame`)."""
    return leaderboard.frame(results)


def frontier_png(results: list[Results]) -> Path:
    """The invariance-sensitivity frontier of ``results`` with the paper's quoted points, as a PNG
    (the paper's points alone while no measured results are shipped)."""
    out = Path(tempfile.mkdtemp(prefix="lgip-frontier-"))
    return next(p for p in plots.frontier(results, out, paper=True) if p.suffix == ".png")


def notes(results: list[Results]) -> str:
    """What the table shows, from the report's own notes, plus how to add a model."""
    head = (f"**{len(results)} measured model(s)** shipped with this Space or in its runs folder" if results else
            "**No measured results are shipped yet** (no run with real weights has been published), so only the "
            "paper's quoted rows and their frontier are shown.")
    body = tables.notes(results, paper=True) if results else (
        f"- Rows marked *{reference.LABEL}* are quoted from the paper (40,000 COCO training images), not computed here.\n")
    return (f"{head} Click a column header to sort.\n\n{body}\n"
            "Add a model: run `lgip evaluate --model NAME --dataset ORG/lgip --out DIR` and put `DIR/results.json` "
            "in the Space's `results/` folder (`builders/publish.py` refuses random-weight results), or point "
            f"`{RUNS_ENV}` at the `--out` folder of `lgip evaluate --model A,B,C`.")
