"""Peak memory and speed of ``lgip score`` as the number of images grows, with wide (d = 1024) embeddings.

    python benchmarks/bench_scale.py --coco ../shared/coco [--sizes 250 500 1000] [--work DIR]

For each N it builds (once, kept in ``--work``) a val2017 LGIP dataset of N images with the real
COCO captions (core families); the images folder links every captioned image id to one of the
local real JPEGs in turn, so any N up to 5,000 works offline. It scores each dataset in a fresh
subprocess with a random open_clip model whose towers are tiny but whose embeddings are
``--width`` wide (the config is written to a local folder, loaded as ``local-dir:``), without a
cache and without image workers, and prints that process's peak RSS and rows/s (and, at its end,
how much of its RSS is anonymous memory and how much file pages mapped from the dataset's Arrow
files, which the kernel can reclaim); then the growth of peak RSS per 1,000 images
(least-squares slope) and its extrapolation to 40,000 images.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from lgip_metric.testing import make_wide_tiny_openclip
from script_args import existing_folder, positive, run

PAPER_IMAGES = 40_000
# Runs in the child: score the dataset and report peak RSS (ru_maxrss is KiB on Linux).
CHILD = """
import json, resource, sys, time
from lgip_metric import api
from lgip_metric.scoring import engine
if sys.argv[5] != "default":
    engine.WINDOW_IMAGES = int(sys.argv[5])
start = time.perf_counter()
run = api.score(sys.argv[1], sys.argv[3], dataset=sys.argv[2], cache_dir="none", num_workers=0, progress=False,
                batch_size=int(sys.argv[4]))
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
kib = {k: int(status[k].split()[0]) * 1024 if k in status else None for k in ("RssAnon", "RssFile")}
print(json.dumps({"rows": run.provenance.counts["scored_rows"], "texts": run.provenance.counts["unique_texts"],
                  "seconds": seconds, "peak_rss": peak, "end_anon": kib["RssAnon"], "end_file": kib["RssFile"]}))
"""


def window_setting(value: str) -> str:
    """``default`` or a number of images."""
    return value if value == "default" else str(positive(value))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--coco", required=True, type=existing_folder, help="folder with annotations/ and val2017_images/")
    parser.add_argument("--sizes", type=positive, nargs="+", default=[250, 500, 1000], help="numbers of images")
    parser.add_argument("--width", type=positive, default=1024, help="embedding width d (default: %(default)s)")
    parser.add_argument("--batch-size", type=positive, default=64)
    parser.add_argument("--window-images", type=window_setting, nargs="+", default=["default"], metavar="N",
                        help="images whose texts the engine plans together, each measured side by side ('default': "
                             "the engine's; a number above the sizes plans every text at once, as 0.2.0 did)")
    parser.add_argument("--work", type=Path, default=None, help="folder for the builds (default: a temporary one)")
    args = parser.parse_args()
    if not (args.coco / "annotations" / "captions_val2017.json").is_file():
        parser.error(f"--coco {args.coco}: no annotations/captions_val2017.json there; give the folder with "
                     "annotations/ and val2017_images/")
    return args


def image_folder(coco: Path, captions: dict, folder: Path) -> Path:
    """Every captioned val2017 file name, linked to the local real JPEGs in turn."""
    real = sorted((coco / "val2017_images").glob("*.jpg"))
    folder.mkdir(parents=True, exist_ok=True)
    for i, image in enumerate(sorted(captions["images"], key=lambda x: x["id"])):
        link = folder / image["file_name"]
        if not link.exists():
            link.symlink_to(real[i % len(real)].resolve())
    return folder


def build(coco: Path, images: Path, n: int, out: Path) -> Path:
    """An LGIP build of ``n`` seeded val2017 images (kept between runs)."""
    if not (out / "README.md").exists():
        subprocess.run([sys.executable, "-m", "lgip_metric.cli", "build", "--captions",
                        str(coco / "annotations" / "captions_val2017.json"), "--images", str(images),
                        "--num-images", str(n), "--out", str(out), "--overwrite", "--quiet"],
                       check=True, stdout=subprocess.DEVNULL)
    return out


def measure(model: str, dataset: Path, out: Path, batch_size: int, window: str) -> dict:
    """Score ``dataset`` in a fresh process (texts planned by windows of ``window`` images); its rows, seconds and
    peak RSS."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), *sys.path]))}
    done = subprocess.run([sys.executable, "-c", CHILD, model, str(dataset), str(out), str(batch_size), window],
                          capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        sys.exit(f"scoring {dataset} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _mb(size: int | None) -> str:
    return "n/a" if size is None else f"{size / 2**20:.0f}"


def main() -> None:
    args = parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        captions = json.loads((args.coco / "annotations" / "captions_val2017.json").read_text(encoding="utf-8"))
        images = image_folder(args.coco, captions, work / "images")
        model = make_wide_tiny_openclip(work / f"wide-tiny-d{args.width}", args.width)
        print(f"model: random open_clip, tiny towers, d = {args.width}; --cache-dir none, --num-workers 0, "
              f"batch {args.batch_size}")
        print(f"{'window':>8} {'images':>7} {'rows':>9} {'texts':>9} {'peak RSS MB':>12} {'rows/s':>9} {'seconds':>8} "
              f"{'at end: anon MB':>15} {'file-mapped MB':>14}")
        datasets = {n: build(args.coco, images, n, work / f"val2017-{n}") for n in sorted(args.sizes)}
        peaks: dict[str, list[float]] = {window: [] for window in args.window_images}
        for n, dataset in datasets.items():  # the settings alternate at each size: the machine's drift hits both
            for window in args.window_images:
                result = measure(model, dataset, work / f"scores-{n}", args.batch_size, window)
                peaks[window].append(result["peak_rss"] / 2**20)
                print(f"{window:>8} {n:>7,} {result['rows']:>9,} {result['texts']:>9,} {peaks[window][-1]:>12.0f} "
                      f"{result['rows'] / result['seconds']:>9.0f} {result['seconds']:>8.1f} "
                      f"{_mb(result['end_anon']):>15} {_mb(result['end_file']):>14}")
        for window, peak in peaks.items():
            if len(datasets) > 1:
                slope, intercept = np.polyfit(np.array(list(datasets)) / 1000, peak, 1)
                print(f"window {window}: growth {slope:.0f} MB peak RSS per 1,000 images (least squares over "
                      f"{len(datasets)} sizes); extrapolated to {PAPER_IMAGES:,} images: "
                      f"{(intercept + slope * PAPER_IMAGES / 1000) / 1024:.1f} GB")


if __name__ == "__main__":
    run(main)
