"""Every benchmark script refuses a bad argument with one line naming it and exit status 2, never a traceback
(issue 52): the scripts run in this process (``runpy``, as ``python benchmarks/SCRIPT.py ARGS`` runs them), so
each refusal costs no interpreter start."""
from __future__ import annotations

import pytest

from helpers.paths import REPO
from helpers.scripts import BENCHMARKS, run_script

CASES = [
    ("bench_scoring.py", ["--rows", "0"], "argument --rows: must be at least 1, got '0'"),
    ("bench_scoring.py", ["--rows", "-5"], "argument --rows: must be at least 1, got '-5'"),
    ("bench_scoring.py", ["--naive-rows", "-3"], "argument --naive-rows: must be at least 0"),
    ("bench_scoring.py", ["--batch-size", "0"], "argument --batch-size: must be at least 1"),
    ("bench_scoring.py", ["--repeat", "0"], "argument --repeat: must be at least 1"),
    ("bench_scoring.py", ["--dataset", "/nonexistent"], "argument --dataset: /nonexistent: no such folder"),
    ("bench_scoring.py", ["--model", "nosuch"], "bench_scoring.py: error: unknown model 'nosuch'"),
    ("bench_scoring.py", ["--num-workers", "x"], "argument --num-workers: expected a whole number >= 0, got 'x'"),
    ("bench_metric.py", ["--rows", "0"], "argument --rows: must be at least 1"),
    ("bench_metric.py", ["--rows", "-10"], "argument --rows: must be at least 1"),
    ("bench_metric.py", ["--bootstrap", "-1"], "argument --bootstrap: must be at least 0"),
    ("bench_metric.py", ["--repeat", "0"], "argument --repeat: must be at least 1"),
    ("blind_flips.py", ["/nonexistent"], "argument folder: /nonexistent: no such folder"),
    ("blind_flips.py", [str(REPO / "docs")], "has no parquet files for config 'pairs'"),
    ("untrained_check.py", ["/nonexistent", "--images", "/nonexistent"], "argument folder: /nonexistent: no such folder"),
    ("held_out_audit.py", ["--seeds", "abc", "--out", "x"], "argument --seeds: expected a whole number >= 0, got 'abc'"),
    ("held_out_audit.py", ["--sizes", "12k", "--out", "x"], "argument --sizes: expected a whole number >= 1, got '12k'"),
    ("held_out_audit.py", ["--sizes", "", "--out", "x"], "argument --sizes: expected comma-separated whole numbers"),
    ("held_out_audit.py", ["--workers", "0", "--out", "x"], "argument --workers: must be at least 1"),
    ("bench_scale.py", ["--coco", "/nonexistent"], "argument --coco: /nonexistent: no such folder"),
    ("bench_scale.py", ["--coco", str(REPO), "--sizes", "3"], "no annotations/captions_val2017.json there"),
    ("bench_scale.py", ["--coco", str(REPO), "--sizes", "0"], "argument --sizes: must be at least 1"),
    ("bench_scale.py", ["--coco", str(REPO), "--width", "-1"], "argument --width: must be at least 1"),
    ("bench_scale.py", ["--coco", str(REPO), "--window-images", "500", "all"], "argument --window-images: expected a whole number >= 1"),
    ("hard_coverage.py", ["--captions", "x.json", "--sample", "0"], "argument --sample: must be at least 1"),
    ("bench_peer.py", ["--limit", "0"], "argument --limit: must be at least 1"),
    ("bench_peer.py", ["--dataset", "/nonexistent"], "argument --dataset: /nonexistent: no such folder"),
    ("draw_flips.py", [str(REPO / "lgip_dataset" / "sample"), "--n", "0"], "argument --n: must be at least 1"),
    ("bench_sweep.py", ["--models", "1"], "argument --models: must be at least 2"),
    ("bench_sweep.py", ["--repeat", "0"], "argument --repeat: must be at least 1"),
    ("bench_sweep.py", ["--dataset", "/nonexistent"], "argument --dataset: /nonexistent: no such folder"),
]


@pytest.mark.parametrize("script, args, says", CASES, ids=[f"{s}:{' '.join(a)}" for s, a, _ in CASES])
def test_a_bad_argument_is_refused_naming_it(script, args, says):
    code, out, err = run_script(script, *args)
    assert code == 2, (code, out, err)
    assert "Traceback" not in err and says in err, err


def test_every_script_is_covered():
    scripts = {path.name for path in BENCHMARKS.glob("*.py")} - {"script_args.py"}
    assert scripts == {script for script, _, _ in CASES}


def test_a_device_that_is_not_there_is_refused(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    code, _, err = run_script("bench_scoring.py", "--device", "cuda")
    assert code == 2 and "bench_scoring.py: error: device 'cuda' requested but CUDA is not available" in err, err


def test_naive_rows_zero_leaves_the_naive_reference_out():
    code, out, err = run_script("bench_scoring.py", "--model", "random:tiny-clip", "--rows", "20", "--naive-rows", "0",
                                "--num-workers", "0", "--device", "cpu")
    assert code == 0, err
    assert "naive     not timed (--naive-rows 0)" in out and "engine/naive" not in out and "over 0 rows" not in out
    assert "engine/floor" in out
