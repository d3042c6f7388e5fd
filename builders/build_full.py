"""Materialise the paper-scale LGIP dataset from a COCO download.

The paper's setting: 40,000 COCO train2017 images, all five captions each, K_same = K_diff = 6::

    python builders/build_full.py --coco /data/coco --out build/lgip-train2017

``--coco`` must hold ``annotations/captions_train2017.json`` and ``train2017/``. Any other
``lgip build`` option given here (``--num-images 100``, ``--families all``, ``--groups``) is passed
on and overrides the paper's value.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lgip_metric.cli import main as lgip_main

PAPER = {"--num-images": "40000", "--captions-per-image": "5", "--k-same": "6", "--k-diff": "6", "--seed": "0"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coco", type=Path, required=True, help="COCO root with annotations/ and train2017/")
    parser.add_argument("--split", default="train2017", help="image folder / captions file stem (default train2017)")
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument("--overwrite", action="store_true")
    args, overrides = parser.parse_known_args(argv)
    command = ["build", "--captions", str(args.coco / "annotations" / f"captions_{args.split}.json"),
               "--images", str(args.coco / args.split), "--out", str(args.out)]
    command += [item for pair in PAPER.items() for item in pair]  # later options (the overrides) win
    return lgip_main(command + overrides + (["--overwrite"] if args.overwrite else []))


if __name__ == "__main__":
    sys.exit(main())
