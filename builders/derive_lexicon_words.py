"""Derive ``lgip_dataset/lexicons/common_words.json`` from COCO captions (run once, output committed).

A word is "common" when, away from the start of a sentence, it is written in lower case more often
than capitalised: "a", "two", "man" are common; "Honda", "TV", "I", "Paul" are not. The paraphrase
generator lower-cases a wrapped caption's first word only when it is common.

    python builders/derive_lexicon_words.py [CAPTIONS_JSON] [--out PATH]
"""
from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

from lgip_dataset.perturb.lexicon import LEXICON_VERSION
from lgip_dataset.perturb.text import tokenize

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CAPTIONS = REPO.parent / "shared" / "coco" / "annotations" / "captions_val2017.json"
DEFAULT_OUT = REPO / "lgip_dataset" / "lexicons" / "common_words.json"
SENTENCE_END = re.compile(r"[.!?]\s*$")


def common_words(captions: list[str]) -> list[str]:
    """Words whose mid-sentence lower-case uses outnumber their capitalised ones."""
    lower, capital = Counter(), Counter()
    for caption in captions:
        tokens = tokenize(caption)
        for prev, tok in zip(tokens, tokens[1:]):
            if SENTENCE_END.search(caption[prev.end:tok.start]) or not tok.text[0].isalpha():
                continue
            (lower if tok.text == tok.low else capital)[tok.low] += 1
    return sorted(w for w, n in lower.items() if n > capital[w])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("captions", nargs="?", type=Path, default=DEFAULT_CAPTIONS)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    captions = [a["caption"] for a in json.loads(args.captions.read_text("utf-8"))["annotations"]]
    words = common_words(captions)
    payload = {
        "version": LEXICON_VERSION,
        "description": "Words written in lower case more often than capitalised away from a sentence start in "
                       f"{args.captions.name} ({len(captions)} captions); made by builders/derive_lexicon_words.py.",
        "words": words,
    }
    args.out.write_text(json.dumps(payload, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"{len(words)} common words -> {args.out}")


if __name__ == "__main__":
    main()
