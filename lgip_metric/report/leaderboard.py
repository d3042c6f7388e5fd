"""One table across runs: every measured model beside the paper's quoted rows, with intervals.

``records`` gives one flat row per measured model (best PR first), then one per quoted paper row:
E_inv, E_sens and PR with their interval ends (``PR_low``, ``PR_high``), each flip type's gap and PR,
the hard flips' E_sens and PR, the text-only scorers' PR beside both blocks, the counts, the dataset
fingerprint and the results file it came from. ``write_leaderboard`` writes it as ``leaderboard.md``
and ``leaderboard.csv``; ``frame`` is the same table with each interval in one cell, as the Space's
Leaderboard shows it. ``lgip report``, ``lgip evaluate`` over several models and the Space all use it.
"""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from lgip_dataset.files.atomic import atomic_write_text
from lgip_metric import stats
from lgip_metric.report import hard, tables
from lgip_metric.results.record import Results
from lgip_metric.statistics import reference

METRICS = tables.METRICS
HARD_METRICS = ("hard E_sens", "hard PR")
FILES = ("leaderboard.md", "leaderboard.csv")
HIDDEN = ("random_weights", "dataset_fingerprint", "results")  # in the CSV, not in the Space's table


def _ends(interval) -> tuple:
    return tuple(interval) if interval else (None, None)


def _measured(r: Results, base: Path | None) -> dict:
    """One measured model's row: headline figures with interval ends, per flip type, hard block, blind PR; its results
    file named from ``base`` (the leaderboard's folder) where given, so a moved folder of runs keeps its table."""
    s = r.statistics
    row = {"model": r.label, "source": tables.MEASURED, "random_weights": r.random_weights}
    for m in METRICS:
        low, high = _ends(s.get("intervals", {}).get(m))
        row.update({m: s[m], f"{m}_low": low, f"{m}_high": high})
    for type_, block in s["per_type"].items():
        if block["kind"] == stats.FLIP:
            row.update({f"{type_} gap": block["E_sens"], f"{type_} PR": block["PR"]})
    if stats.HARD in s:
        for name, m in zip(HARD_METRICS, ("E_sens", "PR")):
            low, high = _ends(s[stats.HARD].get("intervals", {}).get(m))
            row.update({name: s[stats.HARD][m], f"{name}_low": low, f"{name}_high": high})
    for rec in hard.hard_records([r]):
        if rec["scorer"] != "model":
            block = "hard" if rec["block"] == hard.HARD_BLOCK else "paper flips"
            row[f"{block} PR, {rec['scorer']}"] = rec["PR"]
    row.update({"base pairs": s["counts"]["PR"]["base_pairs"], "images": s["counts"]["PR"]["images"],
                "dataset_fingerprint": r.fingerprint,
                "results": Path(os.path.relpath(r.path, base)).as_posix() if base else str(r.path)})
    return row


def _quoted() -> list[dict]:
    """The paper's Table 1 rows with their Table 2 flip types (quoted, no intervals)."""
    per_type = {row["name"]: row["per_type"] for row in reference.table2()}
    rows = []
    for row in reference.table1():
        quoted = {"model": row["model"], "source": reference.LABEL, "random_weights": False,
                  **{m: row[m] for m in METRICS}}
        for type_, values in per_type.get(row["name"], {}).items():
            quoted.update({f"{type_} gap": values["E_sens"], f"{type_} PR": values["PR"]})
        rows.append(quoted)
    return rows


def records(results: list[Results], base: Path | None = None) -> list[dict]:
    """The leaderboard's rows: measured models by PR (highest first; equal PRs by name), then the paper's
    quoted rows."""
    measured = sorted((_measured(r, base) for r in results), key=lambda row: (-row["PR"], row["model"]))
    return measured + _quoted()


def _interval_name(results: list[Results]) -> str:
    confidence = results[0].statistics["bootstrap"]["confidence"] if results else 0.95
    return stats.interval_label(confidence)


def frame(results: list[Results]) -> pd.DataFrame:
    """The leaderboard as a DataFrame, each interval in one ``"<metric> 95% CI"`` cell (empty where there is
    none, as for the quoted rows), rounded to 4 digits."""
    label = _interval_name(results)
    rows = []
    for row in records(results):
        shown = {key: value for key, value in row.items() if key not in HIDDEN and not key.endswith(("_low", "_high"))}
        for name in (*METRICS, *HARD_METRICS):
            low, high = row.get(f"{name}_low"), row.get(f"{name}_high")
            if name in row or name in METRICS:
                shown[f"{name} {label}"] = f"[{low:.4f}, {high:.4f}]" if low is not None else ""
        rows.append(shown)
    return pd.DataFrame(rows).round(4)


def markdown(results: list[Results]) -> str:
    """The leaderboard as Markdown: headline and hard figures with intervals, text-only PR, counts, source;
    then what the numbers mean (:func:`lgip_metric.report.tables.notes`)."""
    header = ["Model", *(f"{m} {tables.ARROWS[m]}" for m in METRICS), "hard E_sens ↑", "hard PR ↑",
              "text-only PR (paper flips / hard)", "images", "source"]
    rows = []
    for row in records(results):
        measured = row["source"] == tables.MEASURED
        cells = [tables.number(row[m], (row[f"{m}_low"], row[f"{m}_high"]) if row.get(f"{m}_low") is not None
                               else None, digits=4 if measured else 3) for m in METRICS]
        cells += [tables.number(row.get(name), (row[f"{name}_low"], row[f"{name}_high"])
                                if row.get(f"{name}_low") is not None else None) or "—" for name in HARD_METRICS]
        blind = " / ".join(tables.number(row.get(f"{block} PR, {hard.SCORERS['lm']}")) or "—"
                           for block in ("paper flips", "hard"))
        rows.append([row["model"], *cells, blind if measured else "", row.get("images", ""),
                     tables.MEASURED if measured else f"*{reference.LABEL}*"])
    notes = tables.notes(results, paper=True) if results else (
        f"- Rows marked *{reference.LABEL}* are quoted from the paper (40,000 COCO training images), not computed "
        "here.\n")
    return (f"## LGIP leaderboard ({len(results)} measured model{'s' if len(results) != 1 else ''})\n\n"
            + tables.markdown(header, rows) + "\n"
            + f"- Text-only PR: the {hard.SCORERS['lm'].removeprefix('blind: ')}, cross-fitted by image (no image "
              "seen); a model's PR means little where it is close to it.\n" + notes)


def write_leaderboard(results: list[Results], out: str | Path) -> dict[str, Path]:
    """``leaderboard.md`` and ``leaderboard.csv`` of ``results`` (comparable runs) into ``out``; returns the paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {name: out / name for name in FILES}
    atomic_write_text(paths["leaderboard.md"], markdown(results))
    atomic_write_text(paths["leaderboard.csv"], tables.to_csv(records(results, out)))
    return paths
