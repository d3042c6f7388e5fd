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
    from lgip_metric import api
    from lgip_metric.results.run_folder import claimed_output

    with claimed_output(args.out, lock=api.is_main_rank()):  # held until the report is written
        results = api.evaluate_model(
            args.model, args.out, dataset=args.dataset, pretrained=args.pretrained, config=args.config,
            batch_size=args.batch_size, precision=args.precision, device=args.device, cache_dir=args.cache_dir,
            num_workers=args.num_workers, progress=not args.no_progress, limit=args.limit,
            tree_packing=args.tree_packing, bootstrap=args.bootstrap,
            seed=args.seed, confidence=args.confidence, pair_level=args.pair_level, validated=args.validated,
        )
        if results is None:  # under torchrun only rank 0 computes and writes
            return 0
        report = api.write_report(results, Path(args.out) / "report", paper=args.paper_reference)
    print(results.provenance.summary(results.scores_path))
    print(summary(results))
    print(f"results -> {results.path}\nreport  -> {report['report.md']}")
    return 0


def _interval(interval, confidence: float) -> str:
    from lgip_metric.stats import interval_label

    return f"  {interval_label(confidence)} [{interval[0]:.4f}, {interval[1]:.4f}]" if interval else ""


def _metric_line(block: dict, metric: str, confidence: float) -> str:
    counts = block["counts"][metric]
    return (f"  {metric:<6} {block[metric]: .4f}{_interval(block.get('intervals', {}).get(metric), confidence)}  "
            f"({counts['base_pairs']} base pairs, {counts['variant_rows']} rows, {counts['images']} images)")


# how to read every figure the summary prints, printed once under it
READING = ("reading: PR is the share of flips a scorer puts below their caption. For the model, near 0.5 is chance "
           "(it does not tell the caption from its flip); for a text-only scorer, near 0.5 means the flips' "
           "wording alone gives nothing away, and far above 0.5 means a model's PR on that block may come from "
           "the text, not the image.")


def _blind_lines(records: list[dict], block: str, per_type: dict[str, dict[str, float]], confidence: float) -> list[str]:
    """The text-only scorers' lines of one block: the block's figure with its interval, then per type."""
    lines = ["  text only (no image; cross-fitted by image):"]
    for record in records:
        if record["block"] != block or record["scorer"] == "model":
            continue
        types = ", ".join(f"{t} {v:.4f}" for t, v in per_type.get(record["scorer"], {}).items())
        lines.append(f"    {record['scorer'].removeprefix('blind: ')} {record['PR']:.4f}"
                     f"{_interval(record['PR_interval'], confidence)}" + (f"; {types}" if types else ""))
    return lines


def _per_type(results, types: list[str]) -> dict[str, dict[str, float]]:
    """Each text-only scorer's figure per type of ``types`` (PR, or the learned adversary's accuracy)."""
    from lgip_metric.report import hard as hard_report

    blind = results.data.get("blind") or {}
    out = {label: {t: block[t]["PR"] for t in types if t in block}
           for key, label in hard_report.SCORERS.items()
           if (block := ((blind.get(key) or {}).get("blind") or {}).get("per_type"))}
    if learned := (blind.get("adversary") or {}).get("per_type"):
        out[hard_report.ADVERSARY] = {t: learned[t]["accuracy"] for t in types if t in learned}
    return out


def summary(results) -> str:
    """The printed summary of a run: one block per headline block, each under a heading naming its types
    (the paper's paraphrases and flips, or every type where the dataset has none of them: E_inv, E_sens, PR;
    the hard flips: E_sens, PR), each with its intervals and its own text-only scorers' figures; then how to
    read a figure near 0.5."""
    from lgip_metric import stats
    from lgip_metric.report import hard as hard_report

    statistics, confidence = results.statistics, results.statistics["bootstrap"]["confidence"]
    records = hard_report.hard_records([results])
    types = statistics["headline_types"]
    paper = set(types["paraphrase"] + types["flip"]) <= set(stats.CORE_TYPES)  # else the headline took every type
    lines = [f"LGIP statistics ({statistics['averaging']} averaging)",
             f"{'paper' if paper else 'all'} paraphrases and flips (paraphrases: {', '.join(types['paraphrase'])}; "
             f"flips: {', '.join(types['flip'])}):"]
    lines += [_metric_line(statistics, metric, confidence) for metric in ("E_inv", "E_sens", "PR")]
    lines += _blind_lines(records, hard_report.PAPER_BLOCK, _per_type(results, types["flip"]), confidence)
    if "hard" in statistics:
        lines.append(f"hard flips ({', '.join(types['hard'])}):")
        lines += [_metric_line(statistics["hard"], metric, confidence) for metric in ("E_sens", "PR")]
        lines += _blind_lines(records, hard_report.HARD_BLOCK, _per_type(results, types["hard"]), confidence)
    return "\n".join([*lines, READING])


if __name__ == "__main__":  # torchrun --nproc_per_node=N -m lgip_metric.commands.evaluate ...
    import sys

    from lgip_metric.cli import main

    sys.exit(main(["evaluate", *sys.argv[1:]]))
