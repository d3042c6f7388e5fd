"""LGIP next to CLIP_benchmark (its SugarCrepe ``image_caption_selection`` task) on the same flips.

    pip install -e .[peer]          # CLIP_benchmark, an optional extra
    python benchmarks/bench_peer.py [--model ViT-B-16] [--dataset DIR] [--limit 200] [--repeat 3] [--work DIR]

It exports the flips of an LGIP dataset (default: the embedded sample) to the layout CLIP_benchmark
reads for ``sugar_crepe/<task>`` (``<root>/val2017/<file>`` images and ``<root>/<task>.json`` with
``filename``, ``caption``, ``negative_caption``; CLIP_benchmark accepts only SugarCrepe's seven task
names, so the flips go into ``replace_att.json`` whatever their type) and into an LGIP folder holding
only those flips; saves one open_clip model with seeded random weights as a ``local-dir`` folder both
tools load (``--model``: an open_clip architecture, by default a real-size ViT-B/16 so the ratio measures
compute as a user meets it, or ``tiny`` for the 2-layer test model, where process start-up dominates);
then runs ``clip_benchmark eval --task image_caption_selection`` (fp32: ``--no_amp``) and ``lgip score``
(fp32, no cache; tree packing as by default, each distinct token prefix encoded once) on them,
interleaved, ``--repeat`` times, and prints the median wall times, their ratio, and CLIP_benchmark's accuracy next to LGIP's pair-level PR (the share of flips whose caption
scores strictly above the flip). Both decide ``s(image, caption)`` against ``s(image, flip)``; the
two differ only where the scores tie: CLIP_benchmark's argmax takes the first (the caption) and
counts a tie as correct, LGIP's PR counts it as not preferred. Ties are counted and printed.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from lgip_dataset import SAMPLE_DIR, schema
from lgip_dataset.writing.card import write_minimal_card
from lgip_metric.testing import make_random_openclip, make_tiny_openclip
from script_args import existing_folder, positive, run

TASK = "replace_att"  # any of SugarCrepe's task names; CLIP_benchmark accepts no other


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="ViT-B-16",
                        help="open_clip architecture built with seeded random weights, or 'tiny' (default: %(default)s)")
    parser.add_argument("--dataset", type=existing_folder, default=SAMPLE_DIR,
                        help="LGIP folder (default: the embedded sample)")
    parser.add_argument("--limit", type=positive, default=None, help="use the first N flips (default: all)")
    parser.add_argument("--repeat", type=positive, default=3, help="interleaved runs of each tool (default: %(default)s)")
    parser.add_argument("--batch-size", type=positive, default=64)
    parser.add_argument("--work", type=Path, default=None, help="folder for the exports (default: a temporary one)")
    return parser.parse_args()


def read_config(folder: Path, config: str) -> pd.DataFrame:
    return pd.concat([pq.read_table(p).to_pandas() for p in sorted((folder / config).glob("*.parquet"))])


def export(dataset: Path, limit: int | None, work: Path) -> tuple[Path, Path, int]:
    """The flips as a SugarCrepe root and as an LGIP folder; how many flips."""
    pairs = read_config(dataset, schema.PAIRS)
    flips = pairs[pairs["kind"] == "flip"].head(limit) if limit else pairs[pairs["kind"] == "flip"]
    images = read_config(dataset, schema.IMAGES)
    images = images[images["image_id"].isin(flips["image_id"])]
    root = work / "sugar_crepe"
    (root / "val2017").mkdir(parents=True, exist_ok=True)
    names = {}
    for image_id, cell in zip(images["image_id"], images["image"]):
        names[image_id] = f"{int(image_id):012d}.jpg"
        (root / "val2017" / names[image_id]).write_bytes(cell["bytes"])
    annotations = {str(i): {"filename": names[row.image_id], "caption": row.caption, "negative_caption": row.variant}
                   for i, row in enumerate(flips.itertuples())}
    (root / f"{TASK}.json").write_text(json.dumps(annotations), encoding="utf-8")
    lgip = work / "lgip-flips"
    for config, table in ((schema.IMAGES, images), (schema.PAIRS, flips)):
        (lgip / config).mkdir(parents=True, exist_ok=True)
        source = pq.read_schema(next((dataset / config).glob("*.parquet")))
        pq.write_table(pa.Table.from_pandas(table, schema=source, preserve_index=False),
                       lgip / config / f"{schema.SPLIT}-00000-of-00001.parquet")
    write_minimal_card(lgip, (schema.IMAGES, schema.PAIRS), "# flips exported for bench_peer")
    return root, lgip, len(flips)


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command[:3])} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return time.perf_counter() - start


def main() -> None:
    args = parse_args()
    clip_benchmark = shutil.which("clip_benchmark")
    if clip_benchmark is None:
        sys.exit("clip_benchmark is not installed: pip install -e .[peer]")
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        root, lgip, n_flips = export(args.dataset, args.limit, work)
        model = (make_tiny_openclip(work / "model") if args.model == "tiny"  # local-dir:<folder>: config + seeded
                 else make_random_openclip(work / "model", args.model))  # random weights
        peer_out, lgip_out = work / "clip_benchmark.json", work / "lgip-scores"
        peer = [clip_benchmark, "eval", "--dataset", f"sugar_crepe/{TASK}", "--dataset_root", str(root),
                "--task", "image_caption_selection", "--model", model, "--pretrained", "local", "--no_amp",
                "--batch_size", str(args.batch_size), "--num_workers", "0", "--output", str(peer_out), "--quiet"]
        ours = [sys.executable, "-m", "lgip_metric.cli", "score", "--model", model, "--dataset", str(lgip),
                "--out", str(lgip_out), "--cache-dir", "none", "--num-workers", "0", "--device", "cpu",
                "--batch-size", str(args.batch_size), "--no-progress"]
        times = {"clip_benchmark": [], "lgip": []}
        for _ in range(args.repeat):
            times["clip_benchmark"].append(timed(peer))
            times["lgip"].append(timed(ours))
        accuracy = json.loads(peer_out.read_text(encoding="utf-8"))["metrics"]["acc"]
        scores = pd.read_parquet(lgip_out / "scores.parquet")
        preferred = int((scores["s_original"] > scores["s_variant"]).sum())
        ties = int((scores["s_original"] == scores["s_variant"]).sum())
        peer_s, lgip_s = (float(np.median(t)) for t in times.values())
        print(f"{n_flips:,} flips of {args.dataset.name}, open_clip {args.model} with random weights (fp32, CPU), "
              f"{args.repeat} interleaved runs each, batch {args.batch_size}")
        print(f"clip_benchmark image_caption_selection  median {peer_s:8.2f} s   {' '.join(f'{t:.2f}' for t in times['clip_benchmark'])}")
        print(f"lgip score                              median {lgip_s:8.2f} s   {' '.join(f'{t:.2f}' for t in times['lgip'])}")
        packing = json.loads((lgip_out / "provenance.json").read_text(encoding="utf-8"))["text"]["tree_packing"]
        print(f"ratio clip_benchmark / lgip: {peer_s / lgip_s:.1f}x   (lgip text tree packing {packing.split(':')[0]})")
        print(f"CLIP_benchmark acc {accuracy:.6f} = {round(accuracy * n_flips)} of {n_flips}; "
              f"LGIP pair-level PR {preferred / len(scores):.6f} = {preferred} of {len(scores)} scored; ties {ties}")
        same = round(accuracy * n_flips) == preferred + ties and len(scores) == n_flips
        print("equal decisions (ties counted as CLIP_benchmark does)" if same else
              "NOT EQUAL: the tools decide differently on some flips (see the docstring for why they may)")


if __name__ == "__main__":
    run(main)
