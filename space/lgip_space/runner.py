"""The Run tab: ``lgip_metric.evaluate_model`` for one allow-listed model on the sample or the first N Hub rows."""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from lgip_metric import api
from lgip_metric.commands.evaluate import summary as statistics_lines
from lgip_metric.report.sample_size import few_images_warnings
from lgip_metric.results.record import Results

BATCH_SIZE = 32
KEEP_RUNS_S = 3600


def new_run_dir(root: Path) -> Path:
    """A fresh folder under ``root``; run folders older than an hour are removed first (a folder another call
    removed meanwhile is passed over: calls at once each get their folder)."""
    root.mkdir(parents=True, exist_ok=True)
    cutoff = time.time() - KEEP_RUNS_S
    for old in root.iterdir():
        try:
            stale = old.stat().st_mtime < cutoff
        except FileNotFoundError:  # swept by another call since it was listed
            continue
        if stale:
            shutil.rmtree(old, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix="run-", dir=root))


def evaluate_model(model: str, dataset: Path, out: Path) -> Results:
    """What ``lgip evaluate --model M --dataset D --out O --paper-reference`` computes and writes, through
    the library API; the Results hold the scores in memory.

    Images are decoded in the serving process (no DataLoader workers forked from a server thread);
    embeddings go to the engine's cache, so a repeated run of the same model encodes nothing.
    """
    results = api.evaluate_model(model, out, dataset=dataset, num_workers=0, batch_size=BATCH_SIZE)
    api.write_report(results, out / "report", paper=True)
    return results


def headline(results: Results, dataset_label: str) -> str:
    """Markdown: which model on which data, then what `lgip evaluate` prints: each block's statistics with
    intervals and counts, its text-only figures and how to read them; warned when the model is untrained or
    the run has few images (the rule of ``lgip audit``)."""
    warning = ""
    if results.random_weights:
        warning = ("> ⚠️ **Random weights**: this model was never trained; these numbers only show that the "
                   "pipeline runs and mean nothing.\n\n")
    warning += "".join(f"> ⚠️ {line}\n\n" for line in few_images_warnings(results))
    counts = results.provenance.counts
    return (f"{warning}**{results.label}** on {dataset_label}: {counts['scored_rows']:,} of {counts['rows']:,} rows "
            f"scored, {counts['unique_images']:,} images, {counts['unique_texts']:,} unique texts "
            f"({counts['cached_texts']:,} texts and {counts['cached_images']:,} images from the embedding cache).\n\n"
            f"```\n{statistics_lines(results)}\n```")
