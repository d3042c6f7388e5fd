"""Draw a seeded random sample of flips from a built LGIP folder, for judging them by hand (unblinded; `lgip judge
draw` writes the blinded sheets).

    lgip build --captions ../shared/coco/annotations/captions_val2017.json --no-images \
        --captions-per-image 7 --seed 0 --out BUILD
    python benchmarks/draw_flips.py BUILD [--n 60] [--seed 0] [--types object,color,count]

Prints a Markdown table (number, type, caption, flip, and empty judgement columns) of ``--n``
flips drawn uniformly from the ``pairs`` config's flips of ``--types``: the ``--n`` distinct
(caption, flip) texts with the smallest SHA-256 of the seed and the two texts
(:func:`lgip_dataset.judging.draw`). The same folder and seed always give the same sample
(docs/judged_core_flips.md is one), and a flip keeps its rank in any other build that has it, so a
rebuild that changes a few flips changes only those in the sample and the judgements of the others
carry over.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lgip_dataset.errors import LGIPError
from lgip_dataset.judging import draw
from script_args import positive


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path, help="a folder written by `lgip build`")
    parser.add_argument("--n", type=positive, default=60, help="flips to draw (default 60)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the draw (default 0)")
    parser.add_argument("--types", default="object,color,count", help="comma-separated flip types")
    args = parser.parse_args(argv)
    try:
        rows = draw(args.folder, args.types.split(","), n=args.n, seed=args.seed)
    except LGIPError as err:
        sys.exit(f"error: {err}")
    print("| # | type | caption | flip | judgement | class | reason |")
    print("|---|---|---|---|---|---|---|")
    for k, row in enumerate(rows, 1):
        cells = [str(k), row["type"], row["caption"].strip(), row["variant"], "", "", ""]
        print("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")


if __name__ == "__main__":
    main()
