"""``lgip report``: tables, the leaderboard, the frontier plot and the qualitative page from results files."""
from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", nargs="+", metavar="RESULTS",
                        help="results.json files (or folders holding one, or the --out of a sweep over several "
                             "models) from `lgip evaluate`, all scored on the same dataset; the first is model A of "
                             "the paired comparisons")
    parser.add_argument("--out", required=True, help="output folder for the report")
    parser.add_argument("--paper-reference", action="store_true",
                        help="add the paper's Table 1/2 rows and Figure 2 points, labelled as quoted")


def run(args: argparse.Namespace) -> int:
    from lgip_metric.results.run_folder import claimed_output
    from lgip_metric.report import report_from_files
    from lgip_metric.sweep import results_paths

    with claimed_output(args.out):
        paths = report_from_files(results_paths(args.results), args.out, paper=args.paper_reference)
    print("\n".join(f"{name:<16} -> {path}" for name, path in paths.items()))
    return 0
