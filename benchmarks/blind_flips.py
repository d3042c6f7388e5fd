"""How far text alone goes on a built LGIP folder's flips: counts, blind PR per type, hard coverage.

    python benchmarks/blind_flips.py BUILT_FOLDER [--json OUT.json]

For every flip type: its rows, and the blind PR (caption-nested, as ``lgip evaluate``'s ``blind``
block) of both text-only scorers of :mod:`lgip_metric.statistics.blind`, cross-fitted by image: the bigram
Kneser-Ney LM (the project's blind LM, which the hard flips were selected against) and the
trigram (not selected with). Also the headline PR of the paper's flips and of the hard set, and
the share of captions with at least one hard flip (coverage).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from lgip_dataset import schema
from lgip_dataset.files import hub_io
from lgip_dataset.files.atomic import check_output_file
from lgip_dataset.ngram import BigramKN
from lgip_metric import stats
from lgip_metric.statistics import blind
from lgip_metric.report.tables import markdown
from lgip_dataset.ngram import TrigramKN
from script_args import existing_folder, run


def blind_summary(folder: Path) -> dict:
    """Counts per type, blind PR per type and per headline block under both scorers, coverage."""
    pairs = hub_io.load_config(folder, schema.PAIRS).to_pandas()
    captions = hub_io.load_config(folder, schema.CAPTIONS).to_pandas()
    flips = pairs[pairs["kind"] == schema.FLIP].reset_index(drop=True)
    summary = {"captions": len(captions), "flip_rows": {t: int(n) for t, n in flips["type"].value_counts().items()}}
    with_hard = flips.loc[flips["type"].isin(stats.HARD_TYPES), "caption_id"].nunique()
    summary["hard_coverage"] = {"captions_with_hard_flip": int(with_hard), "captions": len(captions),
                                "share": with_hard / len(captions)}
    for name, model in (("bigram", BigramKN), ("trigram", TrigramKN)):
        # every row, as `lgip evaluate` does: the LMs learn from every caption of the fold, not only from
        # the captions that have a flip, so one family's blind PR does not depend on the others chosen
        original, variant = blind.lm_scores(pairs, model)
        rates = blind.positive_rates(pairs, original, variant, bootstrap=0)
        summary[name] = {"paper_flips": rates["headline"]["PR"], "hard": rates.get(stats.HARD, {}).get("PR"),
                         "per_type": {t: b["PR"] for t, b in rates["per_type"].items()}}
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=existing_folder, help="a folder written by `lgip build`")
    parser.add_argument("--json", type=Path, default=None, help="also write the summary here")
    args = parser.parse_args()
    if args.json:
        check_output_file(args.json, "--json")
    summary = blind_summary(args.folder)
    rows = [[t, summary["flip_rows"][t], f"{summary['bigram']['per_type'][t]:.3f}",
             f"{summary['trigram']['per_type'][t]:.3f}"] for t in summary["bigram"]["per_type"]]
    rows += [["(paper flips)", "", f"{summary['bigram']['paper_flips']:.3f}", f"{summary['trigram']['paper_flips']:.3f}"]]
    if summary["bigram"]["hard"] is not None:
        rows += [["(hard set)", "", f"{summary['bigram']['hard']:.3f}", f"{summary['trigram']['hard']:.3f}"]]
    print(markdown(["flip type", "rows", "blind PR bigram", "blind PR trigram"], rows))
    coverage = summary["hard_coverage"]
    print(f"\nhard coverage: {coverage['captions_with_hard_flip']} / {coverage['captions']} captions "
          f"({coverage['share']:.1%}) have at least one hard flip")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    run(main)
