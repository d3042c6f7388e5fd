"""How the hard flips' coverage grows with the captions their statistics count.

    python benchmarks/hard_coverage.py --captions ../shared/coco/annotations/captions_val2017.json \
        --statistics-captions ../shared/coco/annotations/coco_karpathy_test.json \
        [--sample 2000] [--fractions 0.125 0.25 0.5 0.75 1] [--project 616767]

The statistics pool is every image of ``--captions`` and of the ``--statistics-captions`` files
(each image once, as ``lgip build --statistics-captions`` counts them). For each fraction it counts
that share of the pool's images (chosen by a stable hash of the image id, so each smaller pool is
inside the larger ones) and runs the hard families on a seeded sample of ``--captions`` captions,
cross-fitted by image as in a build; it prints the captions counted, the share of sampled captions
with at least one hard flip (coverage) and the hard flips per type. With the whole val2017 file and
the Karpathy test captions, the last fraction is what a full val2017 build counts. It then fits
coverage against log2(captions counted) and projects it to ``--project`` captions (default: the 2017
train and val captions, 591,753 + 25,014) with that slope and with the last two rows' slope: a
projection, not a measurement.
"""
from __future__ import annotations

import argparse
import hashlib
import math
import random
from collections import Counter
from pathlib import Path

import numpy as np

from lgip_dataset.errors import DataError
from lgip_dataset.perturb import Perturber
from lgip_dataset.perturb.plausibility import count_captions
from lgip_dataset.perturb.registry import resolve_families
from lgip_dataset.sources.coco import read_captions
from lgip_dataset.sources.skips import SkipLog
from lgip_dataset.sources.statistics_captions import read_statistics_files, statistics_captions
from script_args import positive, run

COCO_2017_CAPTIONS = 591_753 + 25_014  # train2017 + val2017


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--captions", type=Path, required=True, help="the build's captions file (sampled)")
    parser.add_argument("--statistics-captions", type=Path, nargs="*", default=[], help="more captions for the pool")
    parser.add_argument("--sample", type=positive, default=2000, help="captions sampled for the coverage")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.125, 0.25, 0.5, 0.75, 1.0])
    parser.add_argument("--project", type=positive, default=COCO_2017_CAPTIONS, help="captions to project coverage to")
    return parser.parse_args()


def in_fraction(image_id, fraction: float) -> bool:
    """A stable share ``fraction`` of image ids (nested: a smaller fraction's ids are in every larger one's)."""
    return int.from_bytes(hashlib.sha256(f"pool:{image_id}".encode()).digest()[:8], "big") < fraction * 2 ** 64


def coverage(sample: list[tuple[object, str]], pool: list[tuple[object, str]]) -> tuple[float, Counter]:
    """Share of ``sample`` captions with a hard flip, and the hard flips per type, with ``pool``'s statistics."""
    perturber = Perturber(families=resolve_families("hard"), plausibility=count_captions(pool))
    flips, covered = Counter(), 0
    for image_id, caption in sample:
        found = perturber.perturb(caption, image_id=image_id).flips
        covered += bool(found)
        flips.update(v.type for v in found)
    return covered / len(sample), flips


def main() -> None:
    args = parse_args()
    try:
        entries = read_captions(args.captions, SkipLog())
        extra = read_statistics_files(args.statistics_captions)
    except DataError as err:
        raise SystemExit(f"hard_coverage.py: {err}") from None
    captions = [(e.image_id, c.text) for e in entries for c in e.captions]
    if args.sample > len(captions):
        raise SystemExit(f"hard_coverage.py: --sample {args.sample} is more than the {len(captions):,} captions of "
                         f"{args.captions}; ask for fewer")
    more, _ = statistics_captions(extra, {e.image_id for e in entries})
    pool = captions + list(more)
    sample = random.Random(args.seed).sample([(i, c.strip()) for i, c in captions], args.sample)
    print(f"pool: {len(pool):,} captions of {len({i for i, _ in pool}):,} images; sample: {len(sample):,} captions "
          f"of {args.captions.name} (seed {args.seed})")
    print(f"{'captions counted':>17} {'coverage':>9}  hard flips per type")
    sizes, shares = [], []
    for fraction in sorted(args.fractions):
        counted = [(i, c) for i, c in pool if in_fraction(i, fraction)]
        share, flips = coverage(sample, counted)
        sizes.append(len(counted))
        shares.append(share)
        print(f"{len(counted):>17,} {share:>9.1%}  {dict(sorted(flips.items()))}", flush=True)
    if len(sizes) > 1:
        doublings = math.log2(args.project / sizes[-1])
        slope, intercept = np.polyfit(np.log2(sizes), shares, 1)
        last = (shares[-1] - shares[-2]) / math.log2(sizes[-1] / sizes[-2])
        print(f"per doubling of the captions counted: {slope:.1%} (least squares), {last:.1%} (last two rows)")
        print(f"projected to {args.project:,} captions: {slope * math.log2(args.project) + intercept:.1%} with the "
              f"first, {shares[-1] + last * doublings:.1%} with the second (returns diminish: a projection only)")

if __name__ == "__main__":
    run(main)
