"""torchrun with the gloo backend and two CPU processes gives exactly the one-process result, with or without cache
hits, with or without tree packing."""
from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pandas as pd
import torch

from lgip_metric.scoring.engine import score_dataset
from lgip_metric.testing import make_tiny_dataset, same_scores, straightforward_scores

MODEL = "random:tiny-clip"


def test_two_gloo_processes_equal_one(sample_coco_dir, tmp_path):
    dataset = make_tiny_dataset(tmp_path / f"lgip-{uuid.uuid4().hex[:12]}", sample_coco_dir)
    # half the text chunks cached: rank 0 streams those hits and sends the captions rank 1's rows need
    score_dataset(MODEL, dataset, tmp_path / "warm", cache_dir=tmp_path / "cache", batch_size=4, num_workers=0,
                  progress=False, cache_chunk_rows=8, tree_packing=False)
    chunks = sorted((tmp_path / "cache").glob("*/text/chunk-*.npz"))
    for chunk in chunks[::2]:
        chunk.unlink()
    # the plain path's batches keep each text's embedding bit for bit whatever else a batch holds
    torchrun(dataset, tmp_path / "two", "--cache-dir", str(tmp_path / "cache"), "--no-tree-packing")
    one = score_dataset(MODEL, dataset, tmp_path / "one", cache_dir="none", batch_size=4, num_workers=0, progress=False,
                        tree_packing=False)
    two = pd.read_parquet(tmp_path / "two" / "scores.parquet")
    assert two.equals(one.scores())  # bit-identical: every batch is the batch one process runs
    assert same_scores(two, straightforward_scores(MODEL, dataset, 4))
    provenance = pd.read_json(tmp_path / "two" / "provenance.json", typ="series")
    assert provenance["world_size"] == 2
    counts, expected = provenance["counts"], one.provenance.counts
    assert 0 < counts["cached_texts"] < counts["unique_texts"]
    assert counts["cached_texts"] + counts["encoded_texts"] == expected["encoded_texts"]
    assert {k: v for k, v in counts.items() if "cached" not in k and "encoded" not in k} == \
        {k: v for k, v in expected.items() if "cached" not in k and "encoded" not in k}

    # both ranks wrote their chunks to the shared cache: one process now encodes nothing
    cached = score_dataset(MODEL, dataset, tmp_path / "again", cache_dir=tmp_path / "cache", batch_size=4,
                           num_workers=0, progress=False, tree_packing=False)
    assert cached.provenance.counts["encoded_texts"] == 0 and cached.provenance.counts["encoded_images"] == 0
    assert cached.scores().equals(one.scores())


def test_two_gloo_processes_run_the_one_process_tree_packs(sample_coco_dir, tmp_path):
    """Tree-packed, the ranks count the tokens of their chunks, plan the same packs and run each its share
    of them: bit for bit the one-process scores at the ranks' one thread (packs of several hundred tokens
    are large enough for the CPU kernels to split their sums by thread)."""
    dataset = make_tiny_dataset(tmp_path / f"lgip-{uuid.uuid4().hex[:12]}", sample_coco_dir)
    torchrun(dataset, tmp_path / "two", "--cache-dir", "none")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        one = score_dataset(MODEL, dataset, tmp_path / "one", cache_dir="none", batch_size=4, num_workers=0, progress=False)
    finally:
        torch.set_num_threads(threads)
    assert one.provenance.text["tree_packing"].startswith("on:")
    assert pd.read_parquet(tmp_path / "two" / "scores.parquet").equals(one.scores())


def torchrun(dataset, out, *options: str) -> None:
    """``lgip score`` of the tiny model on ``dataset`` by two gloo CPU processes, batch 4."""
    common = ["--model", MODEL, "--dataset", str(dataset), "--device", "cpu", "--num-workers", "0", "--batch-size", "4",
              "--no-progress"]
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
               "-m", "lgip_metric.commands.score", *common, "--out", str(out), *options]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert done.stdout.count("scored 32 of 36 rows") == 1  # only rank 0 reports
