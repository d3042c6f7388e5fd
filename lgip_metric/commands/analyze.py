"""``lgip analyze``: correlate per-row flip gaps and invariance errors with caption and edit features.

Reads a results folder (``results.json`` + its ``scores.parquet``) or a ``scores.parquet``; the edit
spans come from the dataset's ``pairs`` config (joined by ``row_id``; the dataset named in the
provenance, or ``--dataset``). Writes into ``--out``: ``features.parquet`` (every row with its
features), ``tests.csv`` and ``tests.md`` (the ranked tests: clustered-by-image and naive p-values side
by side, BH q-values of the clustered ones) and PNG plots.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from lgip_metric.commands.score import positive_int
    from lgip_metric.statistics.analysis import MIN_SUPPORT

    parser.add_argument("source", metavar="RESULTS_DIR_OR_SCORES",
                        help="a folder with results.json (from `lgip evaluate`) or a scores.parquet")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--dataset", default=None,
                        help="dataset folder or Hub id for the edit spans (default: the one the scores came from)")
    parser.add_argument("--min-support", type=int, default=MIN_SUPPORT,
                        help="rows a test needs (in each group for t-tests) (default: %(default)s)")
    parser.add_argument("--alpha", type=_rate, default=0.05,
                        help="BH false discovery rate for 'significant', in (0, 1) (default: %(default)s)")
    parser.add_argument("--top", type=positive_int, default=20, help="tests shown in tests.md and the plot (default: %(default)s)")


def _rate(text: str) -> float:
    """An argparse type: a number strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1), got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), got {text}")
    return value


def _locate(source: str, dataset: str | None) -> tuple[Path, str, str]:
    """(scores.parquet, dataset for the spans, model label) of a results folder/file or a score file."""
    from lgip_dataset.errors import DataError
    from lgip_metric.scoring.engine import PROVENANCE_FILE
    from lgip_metric.results.provenance import model_label
    from lgip_metric.results.record import load_results

    path = Path(source)
    if path.suffix == ".parquet":
        if not path.exists():
            raise DataError(f"{path}: no such score file")
        provenance_path = path.parent / PROVENANCE_FILE
        provenance = json.loads(provenance_path.read_text(encoding="utf-8")) if provenance_path.exists() else None
        if dataset is None and provenance is None:
            raise DataError(f"{path}: no {PROVENANCE_FILE} beside it names the dataset; pass --dataset")
        return path, dataset or provenance["dataset"]["source"], model_label(provenance) if provenance else path.name
    results = load_results(path)
    return results.scores_path, dataset or results.data["dataset"]["source"], results.label


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from lgip_dataset import schema
    from lgip_dataset.errors import DataError
    from lgip_dataset.files import hub_io
    from lgip_dataset.files.atomic import atomic_write_text
    from lgip_metric.statistics.analysis import association_tests, check_scores, features
    from lgip_metric.report.analysis_plots import plot_effects, plot_outcomes
    from lgip_metric.report.tables import markdown, to_csv

    scores_path, dataset, label = _locate(args.source, args.dataset)
    scores = pd.read_parquet(scores_path)
    check_scores(scores, str(scores_path))
    spans = hub_io.load_config(dataset, schema.PAIRS).select_columns(
        ["row_id", "original", "replacement", "span_start"]).to_pandas()
    frame = features(scores, spans)
    try:
        table = association_tests(frame, args.min_support)
    except ValueError as err:
        raise DataError(f"{scores_path}: {err}") from None
    table["significant"] = table["q"] < args.alpha
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(out / "features.parquet")
    atomic_write_text(out / "tests.csv", to_csv(table.to_dict("records")))
    shown = table.head(args.top)
    rows = [[r.outcome, r.feature, r.level, r.test, r.n, r.images, f"{r.effect:.4f}", f"{r.p:.3g}",
             f"{r.p_naive:.3g}", f"{r.q:.3g}", "yes" if r.significant else ""] for r in shown.itertuples()]
    text = (f"# Per-example analysis of {label}\n\nScores: `{scores_path}`; spans from `{dataset}`. "
            f"{len(table)} tests with at least {args.min_support} rows, Benjamini-Hochberg q < {args.alpha} marked. "
            "Effect: Pearson/Spearman r, or the mean difference (group - rest) for Welch's t-test. "
            "p (clustered): OLS of the outcome on the feature with standard errors clustered by image (rows of "
            "one image are not independent); p (naive): the same test treating every row as independent. "
            "q: Benjamini-Hochberg over the clustered p.\n\n"
            + markdown(["outcome", "feature", "level", "test", "n", "images", "effect", "p (clustered)", "p (naive)",
                        "q (BH)", "significant"], rows))
    atomic_write_text(out / "tests.md", text)
    paths = [plot_effects(shown, out / "effects.png"), plot_outcomes(frame, out / "outcomes_by_type.png")]
    print(text)
    print("\n".join(f"-> {p}" for p in [out / "features.parquet", out / "tests.csv", out / "tests.md", *paths]))
    return 0
