"""Rebuild the embedded sample ``lgip_dataset/sample`` from the real COCO files in ``shared/coco``.

Only images under CC BY 2.0 (COCO license id 4) or CC BY-SA 2.0 (id 5) may be redistributed in
the repository; the sample holds every such val2017 image present in the folder, all built by the
same code as any other LGIP dataset (``lgip_dataset.writing.materialize.build``), with the paper's core
families and the hard flips (``SAMPLE_FAMILIES``). The same code and COCO files give the same bytes::

    python builders/build_sample.py                  # the COCO folder beside the repository, ../shared/coco
    python builders/pin_sample_scores.py             # then re-pin the tests' fp32 scores, on purpose
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lgip_dataset import SAMPLE_DIR
from lgip_dataset.writing.materialize import BuildConfig, build

COCO_DIR = Path(__file__).resolve().parents[2] / "shared" / "coco"  # ../shared/coco of the repository
REDISTRIBUTABLE_LICENSES = (4, 5)  # Attribution, Attribution-ShareAlike
MAX_SAMPLE_BYTES = 10 * 1024 * 1024
SAMPLE_FAMILIES = "core,hard"  # Table 1's families and the hard set beside it
SAMPLE_NOTE = """## About this sample

Shipped inside the `lgip` package so that everything runs with no download: every COCO val2017 image of
the project's COCO folder licensed CC BY 2.0 or CC BY-SA 2.0, up to 5 human captions each. Rebuild it with
`python builders/build_sample.py`, then re-pin the tests' scores with `python builders/pin_sample_scores.py`."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coco", type=Path, default=COCO_DIR,
                        help="folder with annotations/ and val2017_images/ (default: ../shared/coco of the repository)")
    parser.add_argument("--out", type=Path, default=SAMPLE_DIR, help="output folder (default: the packaged sample)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    images = args.coco / "val2017_images"
    if not images.is_dir():
        parser.error(f"--coco {args.coco}: no val2017_images/ folder there; pass the COCO folder with "
                     "annotations/captions_val2017.json and val2017_images/")
    present = tuple(sorted(int(p.stem) for p in images.glob("*.jpg")))
    config = BuildConfig(
        captions=args.coco / "annotations" / "captions_val2017.json",
        images=images,
        out=args.out,
        seed=args.seed,
        license_ids=REDISTRIBUTABLE_LICENSES,
        image_ids=present,
        families=SAMPLE_FAMILIES,
        title="LGIP embedded sample (COCO val2017, CC BY / CC BY-SA images)",
        extra_card_sections=[SAMPLE_NOTE],
    )
    summary = build(config, overwrite=True)
    size = sum(p.stat().st_size for p in summary.out.rglob("*") if p.is_file())
    print(f"sample: {summary.counts['images']} images, {summary.counts['captions']} captions, {size / 2**20:.2f} MiB")
    if size > MAX_SAMPLE_BYTES:
        print(f"error: the sample is {size:,} bytes, over the {MAX_SAMPLE_BYTES:,}-byte budget", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
