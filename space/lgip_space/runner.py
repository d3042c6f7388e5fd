"""The Run tab: ``lgip evaluate`` for one allow-listed model on the sample or the first N Hub rows."""
from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from lgip_metric.commands import evaluate
from lgip_metric.results import RESULTS_FILE, Results, load_results

BATCH_SIZE = 32
KEEP_RUNS_S = 3600


def new_run_dir(root: Path) -> Path:
    """A fresh folder under ``root``; run folders older than an hour are removed first."""
    root.mkdir(parents=True, exist_ok=True)
    cutoff = time.time() - KEEP_RUNS_S
    for old in root.iterdir():
        if old.stat().st_mtime < cutoff:
            shutil.rmtree(old, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix="run-", dir=root))


def evaluate_model(model: str, dataset: Path, out: Path) -> Results:
    """Run exactly what ``lgip evaluate --model M --dataset D --out O --paper-reference`` runs; load its results.

    Images are decoded in the serving process (no DataLoader workers forked from a server thread);
    embeddings go to the engine's cache, so a repeated run of the same model encodes nothing.
    """
    parser = argparse.ArgumentParser()
    evaluate.add_arguments(parser)
    args = parser.parse_args(["--model", model, "--dataset", str(dataset), "--out", str(out), "--num-workers", "0",
                              "--batch-size", str(BATCH_SIZE), "--paper-reference"])
    evaluate.run(args)
    return load_results(out / RESULTS_FILE)


def headline(results: Results, dataset_label: str) -> str:
    """Markdown: which model on which data, the three statistics with intervals and counts."""
    warning = ""
    if results.random_weights:
        warning = ("> ⚠️ **Random weights**: this model was never trained; these numbers only show that the "
                   "pipeline runs and mean nothing.\n\n")
    counts = results.data["provenance"]["counts"]
    return (f"{warning}**{results.label}** on {dataset_label}: {counts['scored_rows']:,} of {counts['rows']:,} rows "
            f"scored, {counts['unique_images']:,} images, {counts['unique_texts']:,} unique texts "
            f"({counts['cached_texts']:,} texts and {counts['cached_images']:,} images from the embedding cache).\n\n"
            f"```\n{evaluate.headline(results.statistics)}\n```")
