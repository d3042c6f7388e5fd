"""Reports from one or more ``results.json`` files scored on the same dataset.

``write_report`` writes into ``out_dir``:

- ``table1.md`` / ``table1.csv``: E_inv, E_sens, PR with intervals and counts (the paper's Table 1);
- ``table2.md`` / ``table2.csv``: the same per variant type (Table 2);
- ``hard.md`` / ``hard.csv``, when the results hold hard flips: their headline block beside
  Table 1's, each with the blind scorers' PR;
- ``frontier.png`` / ``frontier.svg``: the invariance-sensitivity frontier (Figure 2);
- ``qualitative.md``: flips where models disagree most (Figure 3), with thumbnails;
- ``nway.md``, ``blind.md``, ``groups.md`` (each with a CSV), when the results hold them: the
  scrambles' n-way accuracy, the blind baselines beside every model's PR, the 2x2 group scores;
- ``validated.md`` / ``validated.csv``, for results of ``lgip evaluate --validated``: per flip type, the rows
  and PR on all rows beside those of the validated rows;
- ``comparison.md`` / ``comparison.csv`` (two or more models): every model against the first,
  paired image-bootstrap intervals of the differences and McNemar's test on the flips;
- ``leaderboard.md`` / ``leaderboard.csv``: every model, best PR first, beside the paper's quoted rows, with
  intervals (:mod:`lgip_metric.report.leaderboard`, what the Space's Leaderboard shows);
- ``report.md``: an index of the above.

With ``paper=True`` the paper's published rows are added, labelled as quoted.
"""
from __future__ import annotations

from pathlib import Path


from lgip_dataset.errors import DataError
from lgip_dataset.files.atomic import atomic_write_text
from lgip_metric import stats
from lgip_metric.statistics import score_table
from lgip_metric.report import hard, leaderboard, plots, probes, qualitative, tables, validated
from lgip_metric.results.record import Results, load_comparable, with_scores

QUALITATIVE_TOP = 12


def _compare(a: Results, b: Results) -> tuple[dict, int]:
    """``stats.compare`` of two models on the rows both scored (joined by row_id)."""
    columns = ["row_id", "s_original", "s_variant", *score_table.LABELS]
    rows = a.read_scores(columns).merge(b.read_scores(columns[:3]), on="row_id", suffixes=("_a", "_b"))
    boot = a.statistics["bootstrap"]
    try:
        result = stats.compare(
            rows["s_original_a"].to_numpy(), rows["s_variant_a"].to_numpy(),
            rows["s_original_b"].to_numpy(), rows["s_variant_b"].to_numpy(), **score_table.labels(rows),
            extra_types=a.data.get("settings", {}).get("extra_types", ()), pair_level=a.data["averaging"] == "pair_level",
            bootstrap=boot["resamples"], seed=boot["seed"], confidence=boot["confidence"],
        )
    except stats.LGIPInputError as err:
        raise DataError(f"cannot compare {a.path} with {b.path}: {err} (the suffixes _a and _b name their scores); "
                        "rerun `lgip evaluate` for the one whose scores are bad") from None
    return result, len(rows)


def write_report(results: list[Results], out_dir: str | Path, *, paper: bool = False,
                 top: int = QUALITATIVE_TOP) -> dict[str, Path]:
    """Write every report file for ``results`` (first = reference for comparisons); return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    texts = {
        "table1.md": tables.table1_markdown(results, paper),
        "table1.csv": tables.to_csv(tables.table1_records(results, paper)),
        "table2.md": tables.table2_markdown(results, paper),
        "table2.csv": tables.to_csv(tables.table2_records(results, paper)),
        "qualitative.md": qualitative.page(results, out, top),
        **probes.sections(results),
    }
    if text := validated.validated_markdown(results):
        texts["validated.md"], texts["validated.csv"] = text, tables.to_csv(validated.validated_records(results))
    if any(stats.HARD in r.statistics for r in results):
        texts["hard.md"] = hard.hard_markdown(results)
        texts["hard.csv"] = tables.to_csv(hard.hard_records(results))
    if len(results) > 1:
        compared = [(other, *_compare(results[0], other)) for other in results[1:]]
        texts["comparison.md"] = "## Paired comparisons (same rows, same resampled images)\n\n" + "".join(
            tables.comparison_markdown(results[0].label, other.label, result, n) for other, result, n in compared)
        texts["comparison.csv"] = tables.to_csv(
            [rec for other, result, _ in compared for rec in tables.comparison_records(results[0].label, other.label, result)])
    paths = {name: out / name for name in texts}
    for name, text in texts.items():
        atomic_write_text(paths[name], text)
    paths.update(leaderboard.write_leaderboard(results, out))
    for path in plots.frontier(results, out, paper):
        paths[path.name] = path
    index = ["# LGIP report", "", *(f"- [{name}]({name})" for name in paths), "",
             texts["table1.md"], *([texts["hard.md"]] if "hard.md" in texts else []), "![frontier](frontier.png)", "",
             *(texts[name] for name in ("validated.md", "nway.md", "blind.md", "groups.md") if name in texts)]
    paths["report.md"] = out / "report.md"
    atomic_write_text(paths["report.md"], "\n".join(index))
    return paths


def report_from_files(paths, out_dir: str | Path, *, paper: bool = False) -> dict[str, Path]:
    """``write_report`` of results files (or folders holding results.json), refusing mixed datasets and
    missing or damaged score files before any report file is written; each score file is read once."""
    loaded = load_comparable(paths)
    for results in loaded:
        results.check_scores()
    return write_report([with_scores(results) for results in loaded], out_dir, paper=paper)
