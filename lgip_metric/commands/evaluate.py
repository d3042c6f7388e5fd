"""``lgip evaluate``: score a model on an LGIP dataset, compute the statistics, write results and a report.

Writes into ``--out``: ``scores.parquet`` and ``provenance.json`` (the scoring engine),
``results.json`` (statistics + provenance, atomically) and ``report/`` (tables, frontier plot,
qualitative page). Whatever the dataset holds is reported without flags: every variant family per
type (Table 1 stays the paper's core families), the scrambles' n-way accuracy, the blind baselines
(cross-fitted n-gram LM, the LM-balanced flip set seeded by ``--seed``, text-only similarity) and,
when the dataset has a ``groups`` config, the 2x2 text/image/group scores. A rerun takes every embedding from the engine's cache. Under ``torchrun``
(``torchrun --nproc_per_node=N -m lgip_metric.commands.evaluate ...``) every rank scores a shard
and rank 0 computes and writes the rest.
"""
from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from lgip_metric.commands import score

    score.add_arguments(parser, out_help="output folder for scores.parquet, provenance.json, results.json and report/")
    parser.add_argument("--bootstrap", type=int, default=1000,
                        help="image resamples for the intervals (see --confidence); 0 skips them (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: %(default)s)")
    parser.add_argument("--confidence", type=float, default=0.95, help="interval coverage (default: %(default)s)")
    parser.add_argument("--pair-level", action="store_true",
                        help="weigh every (image, caption, variant) row equally instead of averaging per base pair "
                             "first (the outputs are labelled pair_level)")
    parser.add_argument("--paper-reference", action="store_true", help="add the paper's quoted rows to the report")


def run(args: argparse.Namespace) -> int:
    from lgip_metric import api, stats
    from lgip_metric.results.run_folder import claimed_output

    with claimed_output(args.out, lock=api.is_main_rank()):  # held until the report is written
        results = api.evaluate_model(
            args.model, args.out, dataset=args.dataset, pretrained=args.pretrained, config=args.config,
            batch_size=args.batch_size, precision=args.precision, device=args.device, cache_dir=args.cache_dir,
            num_workers=args.num_workers, progress=not args.no_progress, limit=args.limit,
            tree_packing=args.tree_packing, bootstrap=args.bootstrap,
            seed=args.seed, confidence=args.confidence, pair_level=args.pair_level,
        )
        if results is None:  # under torchrun only rank 0 computes and writes
            return 0
        report = api.write_report(results, Path(args.out) / "report", paper=args.paper_reference)
    print(results.provenance.summary(results.scores_path))
    print(headline(results.statistics))
    lm = results.data["blind"]["lm"]["blind"]["per_type"]
    print("  blind n-gram LM PR (text only, cross-fitted): "
          + ", ".join(f"{t} {lm[t]['PR']:.4f}" for t in results.statistics["headline_types"][stats.FLIP] if t in lm))
    if learned := results.data["blind"].get("adversary"):
        print("  learned word adversary held-out accuracy (text only, cross-fitted): "
              + ", ".join(f"{t} {learned['per_type'][t]['accuracy']:.4f}"
                          for t in results.statistics["headline_types"][stats.FLIP] if t in learned["per_type"]))
    print(f"results -> {results.path}\nreport  -> {report['report.md']}")
    return 0


def _metric_line(block: dict, metric: str, confidence: float) -> str:
    from lgip_metric.stats import interval_label

    interval = block.get("intervals", {}).get(metric)
    ci = f"  {interval_label(confidence)} [{interval[0]:.4f}, {interval[1]:.4f}]" if interval else ""
    counts = block["counts"][metric]
    return (f"  {metric:<6} {block[metric]: .4f}{ci}  ({counts['base_pairs']} base pairs, "
            f"{counts['variant_rows']} rows, {counts['images']} images)")


def headline(statistics: dict) -> str:
    """E_inv, E_sens and PR on one line each, with intervals and the averaging label; then the hard
    flips' own E_sens and PR when the dataset has them."""
    lines = [f"LGIP statistics ({statistics['averaging']} averaging):"]
    confidence = statistics["bootstrap"]["confidence"]
    lines += [_metric_line(statistics, metric, confidence) for metric in ("E_inv", "E_sens", "PR")]
    if "hard" in statistics:
        lines.append(f"hard flips ({', '.join(statistics['headline_types']['hard'])}):")
        lines += [_metric_line(statistics["hard"], metric, confidence) for metric in ("E_sens", "PR")]
    return "\n".join(lines)


if __name__ == "__main__":  # torchrun --nproc_per_node=N -m lgip_metric.commands.evaluate ...
    import sys

    from lgip_metric.cli import main

    sys.exit(main(["evaluate", *sys.argv[1:]]))
