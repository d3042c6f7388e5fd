"""torchrun with the gloo backend and two CPU processes gives exactly the one-process result."""
from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pandas as pd

from lgip_metric.engine import score_dataset
from lgip_metric.testing import make_tiny_dataset

MODEL = "random:tiny-clip"


def test_two_gloo_processes_equal_one(coco_dir, tmp_path):
    dataset = make_tiny_dataset(tmp_path / f"lgip-{uuid.uuid4().hex[:12]}", coco_dir)
    common = ["--model", MODEL, "--dataset", str(dataset), "--device", "cpu", "--num-workers", "0", "--batch-size", "4",
              "--no-progress"]
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
               "-m", "lgip_metric.commands.score", *common, "--out", str(tmp_path / "two"), "--cache-dir", str(tmp_path / "cache")]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert done.stdout.count("scored 32 of 36 rows") == 1  # only rank 0 reports

    one = score_dataset(MODEL, dataset, tmp_path / "one", cache_dir="none", batch_size=4, num_workers=0, progress=False)
    two = pd.read_parquet(tmp_path / "two" / "scores.parquet")
    assert two.equals(one.scores())  # bit-identical: every batch is the batch one process runs
    provenance = pd.read_json(tmp_path / "two" / "provenance.json", typ="series")
    assert provenance["world_size"] == 2
    assert provenance["counts"] == one.provenance["counts"]

    # both ranks wrote their chunks to the shared cache: one process now encodes nothing
    cached = score_dataset(MODEL, dataset, tmp_path / "again", cache_dir=tmp_path / "cache", batch_size=4,
                           num_workers=0, progress=False)
    assert cached.provenance["counts"]["encoded_texts"] == 0 and cached.provenance["counts"]["encoded_images"] == 0
    assert cached.scores().equals(one.scores())
