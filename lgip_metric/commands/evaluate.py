"""``lgip evaluate``: score a model on an LGIP dataset, compute the statistics, write results and a report.

Writes into ``--out``: ``scores.parquet`` and ``provenance.json`` (the scoring engine),
``results.json`` (statistics + provenance, atomically) and ``report/`` (tables, frontier plot,
qualitative page). Whatever the dataset holds is reported without flags: every variant family per
type (Table 1 stays the paper's core families), the scrambles' n-way accuracy, the blind baselines
(cross-fitted n-gram LM, the LM-balanced flip set seeded by ``--seed``, text-only similarity) and,
when the dataset has a ``groups`` config, the 2x2 text/image/group scores. A rerun takes every embedding from the engine's cache. Under ``torchrun``
(``torchrun --nproc_per_node=N -m lgip_metric.commands.evaluate ...``) every rank scores a shard
and rank 0 computes and writes the rest.

Several models (``--model A,B,C``, ``--models-file FILE``) make a sweep (:mod:`lgip_metric.sweep`): one run
folder per model, ``OUT/<model-slug>/``, and ``OUT/leaderboard.md`` / ``.csv`` across them; a model that fails
is reported, the others still run, and the exit status is 1 at the end. ``--skip-existing`` keeps a run folder
that already holds a complete run of the same model, dataset and options. A run over fewer than 100 images
is warned about by the rule ``lgip audit`` applies (:mod:`lgip_metric.report.sample_size`).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from lgip_metric.commands import score

    score.add_arguments(parser, out_help="output folder for scores.parquet, provenance.json, results.json and report/; "
                                         "with several models, OUT/<model-slug>/ per model and OUT/leaderboard.md, .csv")
    model = next(action for action in parser._actions if action.dest == "model")  # score's --model, widened to a list
    model.required, model.type = False, _model_names
    model.help = f"{model.help}; several, comma-separated (A,B,C), make a sweep with one run folder each"
    parser.add_argument("--models-file", metavar="FILE",
                        help="models to sweep, one name a line ('#' starts a comment), after those of --model")
    parser.add_argument("--skip-existing", action="store_true",
                        help="skip a model whose run folder already holds a complete results.json of the same model, "
                             "dataset and options (it is read into the leaderboard)")
    parser.add_argument("--bootstrap", type=int, default=1000,
                        help="image resamples for the intervals (see --confidence); 0 skips them (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: %(default)s)")
    parser.add_argument("--confidence", type=float, default=0.95, help="interval coverage (default: %(default)s)")
    parser.add_argument("--pair-level", action="store_true",
                        help="weigh every (image, caption, variant) row equally instead of averaging per base pair "
                             "first (the outputs are labelled pair_level)")
    parser.add_argument("--paper-reference", action="store_true", help="add the paper's quoted rows to the report")


def _model_names(value: str) -> list[str]:
    """``--model`` as typed: one name or several, comma-separated, each checked by ``lgip score``'s rule."""
    from lgip_metric.commands.score import _model_name

    names = [name.strip() for name in value.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"an empty name in {value!r}; separate names by single commas (A,B,C)")
    return [_model_name(name) for name in names]


def _options(args: argparse.Namespace) -> dict:
    """The evaluate_model options of the command line."""
    return dict(dataset=args.dataset, pretrained=args.pretrained, config=args.config, batch_size=args.batch_size,
                precision=args.precision, device=args.device, cache_dir=args.cache_dir, num_workers=args.num_workers,
                progress=not args.no_progress, limit=args.limit, tree_packing=args.tree_packing,
                bootstrap=args.bootstrap, seed=args.seed, confidence=args.confidence, pair_level=args.pair_level,
                validated=args.validated)


def _models(args: argparse.Namespace) -> list[str]:
    """The models of --model and --models-file (each file name checked like --model's), or an LGIPError."""
    from lgip_dataset.errors import LGIPError
    from lgip_metric.sweep import read_models_file

    models = list(args.model or [])
    if args.models_file:
        for name in read_models_file(args.models_file):
            try:
                models += _model_names(name)
            except argparse.ArgumentTypeError as err:
                raise LGIPError(f"--models-file {args.models_file}: {name!r}: {err}") from None
    if not models:
        raise LGIPError("give the model to evaluate: --model NAME (or A,B,C), or --models-file FILE")
    return models


def _report_run(results, report: Path | None = None) -> None:
    """What a run prints: its provenance summary and statistics, its small-sample warnings (stderr), its files."""
    from lgip_metric.report.sample_size import few_images_warnings

    print(results.provenance.summary(results.scores_path))
    print(summary(results))
    for warning in few_images_warnings(results):
        print(f"warning: {warning}", file=sys.stderr)
    print(f"results -> {results.path}" + (f"\nreport  -> {report}" if report else ""))


def run(args: argparse.Namespace) -> int:
    from lgip_metric import api, sweep
    from lgip_metric.results.run_folder import claimed_output

    models = _models(args)
    if len(models) > 1 or args.models_file:
        return _sweep(models, args)
    existing = sweep.existing_run(models[0], args.out, **_options(args)) if args.skip_existing else None
    if existing is not None:
        print(f"skipped {models[0]}: {args.out} holds a complete run of it with these options (--skip-existing)")
        _report_run(existing)
        return 0
    with claimed_output(args.out, lock=api.is_main_rank()):  # held until the report is written
        results = api.evaluate_model(models[0], args.out, **_options(args))
        if results is None:  # under torchrun only rank 0 computes and writes
            return 0
        report = api.write_report(results, Path(args.out) / "report", paper=args.paper_reference)
    _report_run(results, report["report.md"])
    return 0


def _sweep(models: list[str], args: argparse.Namespace) -> int:
    """Every model into OUT/<slug>/, then the leaderboard; 1 when a model failed (named at the end)."""
    from lgip_metric import api, sweep

    def show(run: sweep.SweepRun) -> None:
        print(f"== {run.model} -> {run.folder} ({run.status})")
        if run.error:
            print(f"lgip evaluate: {run.model} failed: {run.error}", file=sys.stderr)
        elif run.results is not None:
            _report_run(run.results, run.folder / "report" / "report.md")

    done = sweep.evaluate_models(models, args.out, skip_existing=args.skip_existing, paper=args.paper_reference,
                                 on_run=show, **_options(args))
    if not api.is_main_rank():
        return 0
    for name, path in done.leaderboard.items():
        print(f"{name:<16} -> {path}")
    if done.failed:
        print(f"lgip evaluate: error: {len(done.failed)} of {len(done.runs)} models failed: "
              + "; ".join(f"{run.model} ({run.error})" for run in done.failed), file=sys.stderr)
        return 1
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
    from lgip_metric.cli import main

    sys.exit(main(["evaluate", *sys.argv[1:]]))
