"""Write every figure the pages repeat from its record (:mod:`lgip_dataset.records.figures`).

    python builders/figures.py                  # rewrite the marked figures of README.md, docs/*.md and the cards
    python builders/figures.py --sample-audit   # first re-measure `lgip audit lgip_dataset/sample` into its record
    python builders/figures.py --check          # change nothing; exit 1 naming each page whose figures differ

The sample's audit record is ``lgip_dataset/reference/sample_audit.json`` (the JSON of ``lgip audit``, with the
command's defaults); the other records are written by the builds and benchmarks that measure them.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from lgip_dataset.records.figures import SAMPLE_AUDIT, render

REPO = Path(__file__).resolve().parents[1]


def pages() -> list[Path]:
    """The pages that repeat figures: README.md, docs/*.md, the metric's card."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "lgip_metric" / "README.md"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample-audit", action="store_true",
                        help=f"re-measure the embedded sample's audit into its record ({SAMPLE_AUDIT.name}) first")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a page's figures differ")
    args = parser.parse_args(argv)
    if args.sample_audit:
        from lgip_metric.cli import main as lgip

        os.chdir(REPO)  # the record names the sample by its path in the repository
        code = lgip(["audit", "lgip_dataset/sample", "--json", str(SAMPLE_AUDIT), "--no-progress"])
        if code:
            return code
    stale = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        new = render(text, str(page.relative_to(REPO)))
        if new != text:
            stale.append(page.relative_to(REPO))
            if not args.check:
                page.write_text(new, encoding="utf-8")
    verb = "differ from their records" if args.check else "rewritten"
    print(f"{len(stale)} page(s) {verb}" + "".join(f"\n  {p}" for p in stale))
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
