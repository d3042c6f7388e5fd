"""``lgip perturb CAPTION``: print the paraphrases and semantic flips of one caption."""
from __future__ import annotations

import argparse
import json
import sys

from lgip_dataset.perturb import LEXICON_VERSION, MAX_CAPTION_CHARS, Perturber
from lgip_dataset.perturb.registry import FAMILIES, OPT_IN, resolve_families
from lgip_dataset.sources.coco import normalise_caption


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("caption", metavar="CAPTION",
                        help=f"the caption to perturb, quoted (at most {MAX_CAPTION_CHARS} characters; cleaned as "
                             "`lgip build` cleans captions: NFC, no format or control characters)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the replacement and selection choices (default 0)")
    parser.add_argument("--k-same", type=_count, default=6, help="maximum number of paraphrases (default 6)")
    parser.add_argument("--k-diff", type=_count, default=6, help="maximum number of flips (default 6)")
    parser.add_argument("--families", default="core",
                        help="comma-separated families: 'core' (the paper's set, default), 'hard' (the hard flips), 'all' "
                             f"(every family but {' and '.join(OPT_IN)}, built only when named: too few of their flips are "
                             "sound on COCO), or names: " + ", ".join(FAMILIES) + ". Extra families get their own cap (k of their kind)")
    parser.add_argument("--json", action="store_true",
                        help='print one JSON object {"caption", "paraphrases": [{"text", "type"}], '
                             '"flips": [{"text", "type", "original", "replacement", "span"}]}')


def _shows(text: str) -> bool:
    """Whether stdout's encoding can write ``text`` as it is (not under PYTHONIOENCODING=ascii, say)."""
    try:
        text.encode(sys.stdout.encoding or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def run(args: argparse.Namespace) -> int:
    caption = Perturber.validate_caption(normalise_caption(args.caption), what="CAPTION")  # as a build stores it
    perturber = Perturber(k_same=args.k_same, k_diff=args.k_diff, families=resolve_families(args.families, what="--families"))
    result = perturber.perturb(caption, seed=args.seed)
    if args.json:
        record = result.to_dict(with_types=True)
        text = json.dumps(record, ensure_ascii=False)
        print(text if _shows(text) else json.dumps(record))  # escaped where the output cannot show a character
        return 0
    print(f"caption: {result.caption}")
    print(f"paraphrases ({len(result.paraphrases)}):")
    for v in result.paraphrases:
        print(f"  [{v.type}] {v.text}")
    print(f"flips ({len(result.flips)}):")
    width = max((len(v.type) for v in result.flips), default=0)
    for v in result.flips:
        print(f"  [{v.type}]{' ' * (width - len(v.type))} {v.original} -> {v.replacement}: {v.text}")
    print(f"(seed {args.seed}, lexicon {LEXICON_VERSION}, families {','.join(perturber.families)})")
    return 0
