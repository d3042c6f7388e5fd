"""The benchmark scripts run end to end on tiny inputs (what they print is checked, never a time)."""
from __future__ import annotations

import subprocess
import sys

from helpers.paths import REPO


def _run(script: str, *args: str) -> str:
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / script), *args], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_bench_scoring_prints_engine_naive_floor_and_drift():
    out = _run("bench_scoring.py", "--model", "random:tiny-clip", "--rows", "60", "--naive-rows", "4",
               "--num-workers", "0", "--device", "cpu", "--drift", "bf16", "--repeat", "2")
    assert out.count("median of 2: ") == 2 and out.count("texts/s, median of ") == 2  # both engines, both floors
    rounds = next(line for line in out.splitlines() if line.startswith("texts     ")).split("each round ")[1]
    assert len(rounds.split(" / ")) == 2 and ", medians;" in out
    for label in ("engine", "naive", "floor old", "floor new", "unpacked", "ratios    engine/naive =", "drift     bf16",
                  "packing   on:", "would take", "floor new bf16:"):
        assert label in out
    per_token = {line.split()[1]: float(line.rsplit("= ", 1)[1].split()[0]) for line in out.splitlines()
                 if line.startswith("floor ") and "per token" in line}
    assert per_token["new"] < 0.9 < 1.0 <= per_token["old"]  # the packed floor computes fewer tokens than there are
    assert "tokens computed new/old floor = 0." in out
    exact = next(line for line in out.splitlines() if line.startswith("exact     packed against unpacked: max|Δs|="))
    assert float(exact.split("max|Δs|=")[1].split(",")[0]) < 1e-5 and "of 60 rows" in exact


def test_bench_scoring_quick_times_the_packed_engine_and_the_new_floor_only():
    out = _run("bench_scoring.py", "--model", "random:tiny-clip", "--rows", "40", "--num-workers", "0",
               "--device", "cpu", "--drift", "bf16", "--quick")
    for label in ("engine", "floor new", "ratios    engine/floor =", "drift     bf16", "floor new bf16:", "would take"):
        assert label in out
    for label in ("unpacked", "naive", "floor old", "engine/naive"):
        assert label not in out


def test_bench_sweep_prints_both_paths_the_ratios_and_equal_scores(tmp_path):
    out = _run("bench_sweep.py", "--models", "2", "--repeat", "1", "--work", str(tmp_path))
    for label in ("one by one  tiny-2 blocks", "sweep       tiny-3 blocks", "ratio       sweep image inputs tiny-3 blocks",
                  "ratio       sweep total / one-by-one total", "byte-identical: yes"):
        assert label in out, out


def test_bench_metric_prints_both_paths_and_the_ratio():
    out = _run("bench_metric.py", "--rows", "20000", "--bootstrap", "10", "--repeat", "1")
    assert "lgip_metric.stats, point estimates" in out and "evaluate.load(...).compute" in out
    assert "ratio evaluate.compute / stats" in out


def test_draw_flips_is_seeded_and_refuses_too_many():
    from lgip_dataset import SAMPLE_DIR

    out = _run("draw_flips.py", str(SAMPLE_DIR), "--n", "5", "--seed", "3")
    assert out == _run("draw_flips.py", str(SAMPLE_DIR), "--n", "5", "--seed", "3")
    rows = out.splitlines()[2:]
    assert len(rows) == 5 and out != _run("draw_flips.py", str(SAMPLE_DIR), "--n", "5", "--seed", "4")
    for row in rows:
        _, kind, caption, flip, *_ = row.split(" | ")
        assert kind in ("object", "color", "count") and caption != flip
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "draw_flips.py"), str(SAMPLE_DIR), "--n",
                           "10000000"], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode != 0 and "ask for --n" in done.stderr and "Traceback" not in done.stderr


def test_bench_scale_prints_peak_rss_growth_and_extrapolation(sample_coco_dir):
    out = _run("bench_scale.py", "--coco", str(sample_coco_dir), "--sizes", "3", "6", "--width", "64")
    assert "peak RSS MB" in out and "MB peak RSS per 1,000 images" in out and "extrapolated to 40,000 images" in out


def test_hard_coverage_prints_coverage_per_pool_and_the_projection(sample_coco_dir):
    captions = sample_coco_dir / "annotations" / "captions_val2017.json"
    out = _run("hard_coverage.py", "--captions", str(captions), "--sample", "40", "--fractions", "0.5", "1")
    rows = [line.split() for line in out.splitlines() if line.split() and line.split()[0].replace(",", "").isdigit()]
    assert len(rows) == 2 and int(rows[0][0].replace(",", "")) < int(rows[1][0].replace(",", ""))
    assert all(0.0 <= float(row[1].rstrip("%")) <= 100.0 for row in rows)
    assert "per doubling of the captions counted" in out and "projected to 616,767 captions" in out
    for bad, says in ((["--captions", "missing.json"], "captions file not found: missing.json"),
                      (["--captions", str(captions), "--sample", "100000"], "ask for fewer")):
        done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "hard_coverage.py"), *bad],
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode != 0 and says in done.stderr and "Traceback" not in done.stderr
