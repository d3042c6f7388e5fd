"""``lgip export``: write a built LGIP folder's flips in the layout another harness reads (``--format sugarcrepe``:
CLIP_benchmark's SugarCrepe task, :mod:`lgip_dataset.writing.export_sugarcrepe`)."""
from __future__ import annotations

import argparse
from pathlib import Path

from lgip_dataset.writing import export_sugarcrepe

FORMATS = (export_sugarcrepe.FORMAT,)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("build", type=Path, metavar="BUILD", help="a folder made by `lgip build` (with its images)")
    parser.add_argument("--format", required=True, choices=FORMATS,
                        help="sugarcrepe: one <type>.json per flip type ({row_id: {filename, caption, "
                             "negative_caption}}) and the images under val2017/, as CLIP_benchmark's "
                             "sugar_crepe/<task> reads them with --dataset_root OUT")
    parser.add_argument("--out", type=Path, required=True, help="output folder (written whole, then moved into place)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing output folder")


def run(args: argparse.Namespace) -> int:
    manifest = export_sugarcrepe.export_sugarcrepe(args.build, args.out, overwrite=args.overwrite)
    print(f"exported {sum(t['flips'] for t in manifest['tasks'].values()):,} flips of {args.build} and their "
          f"{manifest['images']:,} images to {args.out}")
    for task, entry in manifest["tasks"].items():
        print(f"  {entry['file']}: {entry['flips']:,} flips of type {entry['type']}")
    return 0
