"""Merge every judged round under docs/judged into a label store (by default the package's shipped store).

    python builders/merge_judged_rounds.py                         # updates lgip_dataset/reference/judged_flips.jsonl.gz
    python builders/merge_judged_rounds.py --store rounds.jsonl.gz # the rounds alone (a sealed draw's --exclude-judged)

A round is a folder ``docs/judged/hard_flips_*`` (a draw or census of hard flips) or
``docs/judged/compositional_validated_*`` (a sealed draw of the validated compositional flips): each key
``key<suffix>.json[.gz]`` (what ``lgip judge draw`` wrote) with its judges' label files ``judge<N><suffix>.tsv``.
Each judge's labels go in as judge ``<folder>/judge<N>`` on sheet ``<folder>/<key name>``, exactly as ``lgip judge
merge`` adds them, so running it again changes nothing. A build applies the shipped store by default: a judged flip
is in the ``validated`` config only when every judge labelled it valid.
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path

from lgip_dataset import judging

JUDGED = Path(__file__).resolve().parents[1] / "docs" / "judged"
ROUNDS = ("hard_flips_*", "compositional_validated_*")
KEY = re.compile(r"key(?P<suffix>.*)\.json(\.gz)?")


def round_sheets(folder: Path) -> list[tuple[Path, dict[str, Path]]]:
    """Each key of a round folder with its label files by judge name (``<folder>/judge<N>``)."""
    sheets = []
    for key in sorted(folder.iterdir()):
        found = KEY.fullmatch(key.name)
        if not found:
            continue
        label = re.compile(rf"judge(?P<n>\d+){re.escape(found['suffix'])}\.tsv")
        files = {f"{folder.name}/judge{m['n']}": path for path in sorted(folder.iterdir())
                 if (m := label.fullmatch(path.name))}
        sheets.append((key, files))
    return sheets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=judging.SHIPPED_STORE,
                        help="the label store to merge into (a new one is started; default: the shipped store)")
    path = judging.check_store_name(parser.parse_args().store, "--store")
    with judging.store_lock(path):
        store = judging.read_store(path) if path.exists() else {}
        before, given = len(store), 0
        for folder in sorted(f for pattern in ROUNDS for f in JUDGED.glob(pattern)):
            for key_path, files in round_sheets(folder):
                key = judging.read_key(key_path)
                labels = {judge: judging.read_labels(file, len(key), key=f"--key {key_path}")
                          for judge, file in files.items()}
                given += judging.merge(store, key, labels, f"{folder.name}/{judging.sheet_name(key_path)}")
        judging.write_store(path, store)
    print(f"merged {given:,} label(s) of the judged rounds into {path.name}: {before:,} -> {len(store):,} flip(s) judged")


if __name__ == "__main__":
    main()
