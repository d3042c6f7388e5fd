"""Derive ``lgip_dataset/lexicons/plausibility_counts.json.gz``, the hard flips' shipped statistics.

Counts (caption bigrams, target–context pairs; see ``lgip_dataset.perturb.plausibility``) of the
Karpathy test captions (val2014 images), folded by COCO image id like every build, **without** the
images of the excluded captions files (by default val2017, the source LGIP is built from): a
val2017 build then adds its own captions per fold, and no statistic is counted twice. A build from
any COCO source stays cross-fitted even where images overlap, because an image's fold is the same
in the table and in the build, and a caption's flips only see the other folds.

    python builders/derive_plausibility_counts.py [KARPATHY_JSON] [--exclude CAPTIONS_JSON ...] [--out PATH]
"""
from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

from lgip_dataset.perturb.lexicon import load_lexicon
from lgip_dataset.perturb.plausibility import COUNTS_FILE, count_captions
from lgip_dataset.sources.coco import read_captions
from lgip_dataset.sources.skips import SkipLog

REPO = Path(__file__).resolve().parents[1]
ANNOTATIONS = REPO.parent / "shared" / "coco" / "annotations"
DEFAULT_SOURCE = ANNOTATIONS / "coco_karpathy_test.json"
DEFAULT_EXCLUDE = (ANNOTATIONS / "captions_val2017.json",)
DEFAULT_OUT = REPO / "lgip_dataset" / "lexicons" / COUNTS_FILE


def derive(source: Path, exclude: list[Path]) -> tuple[dict, dict]:
    """The folded counts' JSON and a summary (images and captions used and excluded)."""
    skips = SkipLog()
    excluded = {e.image_id for path in exclude for e in read_captions(path, skips)}
    entries = read_captions(source, skips)
    kept = [e for e in entries if e.image_id not in excluded]
    counts = count_captions(((e.image_id, c.text) for e in kept for c in e.captions), load_lexicon())
    data = counts.to_json()
    data["image_ids"] = sorted(e.image_id for e in kept)  # so that a build never counts these images again
    data["source"] = {"captions": source.name, "excluded_images_of": [p.name for p in exclude],
                      "images": len(kept), "captions_counted": sum(len(e.captions) for e in kept),
                      "images_excluded": len(entries) - len(kept)}
    return data, data["source"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", nargs="?", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--exclude", type=Path, nargs="*", default=list(DEFAULT_EXCLUDE))
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    data, summary = derive(args.source, args.exclude)
    payload = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    args.out.write_bytes(gzip.compress(payload, mtime=0))
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes): {json.dumps(summary)}")


if __name__ == "__main__":
    main()
