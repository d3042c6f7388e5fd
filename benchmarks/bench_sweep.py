"""A sweep of models that share one image preprocessing and one tokenizer, against the same models run one by one.

    python benchmarks/bench_sweep.py [--dataset DIR] [--models 3] [--repeat 3] [--num-workers 0] [--work DIR]

Saves ``--models`` open_clip models with seeded random weights (the tiny test model with 2, 3, 4, … blocks per
tower: one preprocessing, one tokenizer) as ``local-dir`` folders, then, in this one process and alternating
``--repeat`` times, evaluates them (``lgip evaluate`` without intervals, on the CPU):

- one by one: each model a sweep of its own with its own cache, so each decodes every image and tokenises every text,
  and with this process's text-only baselines, tokenizer digests and thumbnails forgotten before it, as separate
  ``lgip evaluate`` processes run;
- as one sweep (:func:`lgip_metric.sweep.evaluate_models`, one cache): the first model keeps its decoded pixels and
  token ids there, the later ones read them.

It prints, per model and path, the medians of the image phase (``image_inputs_s``: the wait for decoded or kept
pixels; ``images_s``: the whole image step), the text step and the run's wall time; then the ratios: each later
model's image inputs over the first model's in the sweep, and the sweep's total over the one-by-one total; and
whether every score file equals the one-by-one run's byte for byte.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from lgip_dataset import SAMPLE_DIR
from lgip_metric.models import token_identity
from lgip_metric.report import qualitative
from lgip_metric.statistics import blind
from lgip_metric.sweep import evaluate_models, model_slug
from lgip_metric.testing import make_tiny_openclip
from script_args import existing_folder, positive, run, whole

PHASES = ("image_inputs_s", "images_s", "texts_s")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", type=existing_folder, default=SAMPLE_DIR, help="LGIP folder (default: the embedded sample)")
    parser.add_argument("--models", type=whole(2), default=3, help="models in the sweep, at least 2 (default: %(default)s)")
    parser.add_argument("--repeat", type=positive, default=3, help="alternating runs of each path (default: %(default)s)")
    parser.add_argument("--num-workers", type=whole(0), default=0,
                        help="DataLoader workers (default: 0, so the image phase is the decoding itself)")
    parser.add_argument("--work", type=Path, default=None, help="folder for models and runs (default: a temporary one)")
    return parser.parse_args()


def timings(folder: Path) -> dict[str, float]:
    """The phases a run's provenance.json records."""
    record = json.loads((folder / "provenance.json").read_text(encoding="utf-8"))
    return {name: float(record["timing"][name]) for name in PHASES}


def evaluate(models: list[str], out: Path, caches: list[Path], dataset: Path, workers: int) -> tuple[dict, float]:
    """The models as one sweep (one cache) or one by one (a cache each), all caches empty at the start; per model
    its phases, and the wall time of them all."""
    shutil.rmtree(out, ignore_errors=True)
    for cache in caches:
        shutil.rmtree(cache, ignore_errors=True)
    groups = [models] if len(caches) == 1 else [[m] for m in models]
    measured, started = {}, time.perf_counter()
    for group, cache in zip(groups, caches):
        blind._KEPT.clear()  # a new process knows no text-only scores yet, no tokenizer's digest, no thumbnail
        token_identity._SEEN.clear()
        qualitative._MADE.clear()
        done = evaluate_models(group, out / cache.name, dataset=dataset, cache_dir=cache, num_workers=workers,
                               bootstrap=0, progress=False, paper=False,
                               on_run=lambda r: measured.__setitem__(r.model, timings(r.folder)))
        if done.failed:
            raise SystemExit(f"bench_sweep.py: {done.failed[0].model} failed: {done.failed[0].error}")
    return measured, time.perf_counter() - started


def main() -> int:
    args = parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="lgip-bench-sweep-"))
    models = [make_tiny_openclip(work / f"tiny-{2 + i}", layers=2 + i) for i in range(args.models)]
    names = {m: f"tiny-{2 + i} blocks" for i, m in enumerate(models)}
    paths = {"one by one": [work / f"cache-{i}" for i in range(len(models))], "sweep": [work / "cache-sweep"]}
    seen = {path: [] for path in paths}
    for _ in range(args.repeat):
        for path, caches in paths.items():
            seen[path].append(evaluate(models, work / "runs" / path.replace(" ", "-"), caches, args.dataset, args.num_workers))
    print(f"{len(models)} models, {args.dataset}, {args.num_workers} workers, medians of {args.repeat} alternating runs")
    medians = {}
    for path in paths:
        totals = [total for _, total in seen[path]]
        medians[path] = statistics.median(totals)
        for model in models:
            phases = {name: statistics.median(m[model][name] for m, _ in seen[path]) for name in PHASES}
            print(f"{path:<11} {names[model]:<15} image inputs {phases['image_inputs_s']:.3f} s  images {phases['images_s']:.3f} s"
                  f"  texts {phases['texts_s']:.3f} s")
        print(f"{path:<11} total {medians[path]:.2f} s")
    inputs = {model: statistics.median(m[model]["image_inputs_s"] for m, _ in seen["sweep"]) for model in models}
    for model in models[1:]:
        print(f"ratio       sweep image inputs {names[model]} / {names[models[0]]} = {inputs[model] / inputs[models[0]]:.3f}")
    print(f"ratio       sweep total / one-by-one total = {medians['sweep'] / medians['one by one']:.3f}")
    same = all((work / "runs" / "sweep" / "cache-sweep" / model_slug(m) / "scores.parquet").read_bytes()
               == (work / "runs" / "one-by-one" / f"cache-{i}" / model_slug(m) / "scores.parquet").read_bytes()
               for i, m in enumerate(models))
    print(f"scores      sweep and one by one byte-identical: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    run(main)
