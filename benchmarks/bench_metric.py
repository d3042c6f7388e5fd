"""Time the LGIP statistics on 1.4 M synthetic rows: the package path and evaluate's compute().

    python benchmarks/bench_metric.py [--rows 1400000] [--bootstrap 1000] [--repeat 3] [--skip-evaluate]

Prints the seconds of a NumPy floor (one ``bincount`` pass summing the score differences per
caption: the least any per-row statistic must do), of ``lgip_metric.stats`` (point estimates,
then with the bootstrap) and their ratios to the floor (which survive a noisy machine), and of
``evaluate.load(<lgip_metric folder>).compute(...)`` on the same rows with its ratio to the package path.
Each timing is the best of ``--repeat`` calls, in wall seconds and in CPU seconds of this process
(on a machine shared with other work the CPU seconds are the steadier figure). The BLAS runs one
thread unless OPENBLAS_NUM_THREADS / OMP_NUM_THREADS / MKL_NUM_THREADS say otherwise; the point
estimates run in one thread, so their CPU seconds approach the wall time of a quiet machine. The
bootstrap draws and counts the next resamples in one worker thread while the BLAS multiplies the
current ones: its CPU seconds add up both threads and exceed its wall time where a second core is free.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
for _name in BLAS_THREADS:  # before NumPy loads its BLAS: the bootstrap's product is timed on one core
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from lgip_metric import stats  # noqa: E402
from script_args import non_negative, positive, run  # noqa: E402

METRIC_DIR = Path(__file__).resolve().parents[1] / "lgip_metric"


def synthetic_rows(n_rows: int, seed: int = 0) -> dict:
    """Rows grouped by caption like a ``pairs`` config, 3-12 variants per caption, 5 captions/image."""
    rng = np.random.default_rng(seed)
    per_caption = rng.integers(3, 13, size=n_rows // 3)
    caption = np.repeat(np.arange(per_caption.size), per_caption)[:n_rows]
    type_code = rng.integers(0, len(stats.DECLARED_TYPES), n_rows)
    types = np.array(list(stats.DECLARED_TYPES), dtype=object)[type_code]
    kinds = np.array(list(stats.DECLARED_TYPES.values()), dtype=object)[type_code]
    original = rng.uniform(0.1, 0.4, per_caption.size).round(3)[caption]  # one s(I, c) per base pair
    shift = np.where(kinds == stats.FLIP, rng.normal(0.02, 0.03, n_rows), rng.normal(0.0, 0.01, n_rows))
    strings = {"variant_kinds": kinds, "variant_types": types, "caption_ids": [f"{c:012d}" for c in caption.tolist()]}
    return {
        "original_scores": original,
        "variant_scores": original - shift.round(3),
        # one Python string per row, as a column read from parquet gives them
        **{name: pa.array(list(values)).to_numpy(zero_copy_only=False) for name, values in strings.items()},
        "image_ids": caption // 5,
    }


def timed(label: str, fn, repeat: int = 1) -> tuple[float, float]:
    """Best wall and best CPU seconds of ``repeat`` calls (the least disturbed by other load), printed."""
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    print(f"{label:<58s} {min(wall):8.3f} s wall {min(cpu):8.3f} s CPU  (best of {repeat})")
    return min(wall), min(cpu)


def ratios(label: str, times: tuple[float, float], floor: tuple[float, float]) -> str:
    return f"{label} {times[0] / floor[0]:.0f}x wall, {times[1] / floor[1]:.0f}x CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=positive, default=1_400_000)
    parser.add_argument("--bootstrap", type=non_negative, default=1000)
    parser.add_argument("--repeat", type=positive, default=3, help="calls per timing; the best is reported")
    parser.add_argument("--skip-evaluate", action="store_true", help="time the package path only")
    args = parser.parse_args()
    rows = synthetic_rows(args.rows)
    n_images = len(np.unique(rows["image_ids"]))
    print(f"{args.rows:,} rows, {n_images:,} images, BLAS threads: {os.environ['OPENBLAS_NUM_THREADS']}")
    caption = np.unique(rows["caption_ids"], return_inverse=True)[1]  # the floor's input: codes, not strings
    diff = rows["original_scores"] - rows["variant_scores"]
    floor = timed("NumPy floor: one bincount pass", lambda: np.bincount(caption, weights=diff), args.repeat)
    point = timed("lgip_metric.stats, point estimates", lambda: stats.lgip_statistics(**rows, bootstrap=0),
                  args.repeat)
    boot = timed(f"lgip_metric.stats, + {args.bootstrap} image-bootstrap resamples",
                 lambda: stats.lgip_statistics(**rows, bootstrap=args.bootstrap), args.repeat)
    print(f"ratio to the floor: {ratios('point estimates', point, floor)}; {ratios('with the bootstrap', boot, floor)}")
    if args.skip_evaluate:
        return
    import evaluate

    metric = evaluate.load(str(METRIC_DIR))
    as_lists = {k: v.tolist() for k, v in rows.items()}
    through = timed("evaluate.load(...).compute, point estimates (lists in)",
                    lambda: metric.compute(**as_lists, bootstrap=0))
    print(f"ratio evaluate.compute / stats: {through[0] / point[0]:.1f}x wall, {through[1] / point[1]:.1f}x CPU")


if __name__ == "__main__":
    run(main)
