"""Write docs/judged/README.md, the index of every judged round, from the rounds' own records.

    python builders/judged_index.py           # rewrite docs/judged/README.md and the rows the pages quote
    python builders/judged_index.py --check   # write nothing; exit 1 naming each file that differs from its records

Each round folder under docs/judged holds the keys of its sheets, its judges' label files, a ``README.md`` (what was
drawn, why, and what the judges found) and a ``round.json`` with what no key says: the round's number, its kind
(``development``, ``sealed`` or ``census``), the families and the commit the rules froze at, the build it was drawn
from and the judges' names. Everything else in the index is read from the keys and labels with
``lgip_dataset.judging`` (``read_key``, ``read_labels``, ``merge``, and ``judged_counts``, which counts each flip by
its ``majority``): the flips, the labels each flip has, the majority shares and the seed (the one seed of
:data:`SEEDS` whose A/B order and draw order a key has). The pages of docs/ that quote rows of the index name their
draws in a comment, ``<!-- judged-rows: FOLDER, FOLDER/DRAW -->``, and the rows that follow it up to
``<!-- /judged-rows -->`` are written here too. A folder's files come in one of three layouts:

- ``key<suffix>.json[.gz]`` with ``judge<N><suffix>.tsv`` (``builders/merge_judged_rounds.py``'s
  :func:`round_sheets`): the folder is one draw, its sheets and their third judges' sheets together;
- ``key_<draw>.json`` with ``<judge>_<draw>.tsv`` (``extended_flips_3.0.0_sealed``, each judge labelling every sheet):
  each key is a draw;
- ``<census>[_third]_key[_<K>].json.gz`` with ``<census>[_third][_<K>]_J<n>.tsv`` (``extended_flips_census_47k``):
  each census is a draw, the sheets of its third judge included.

``round.json`` gives a folder of several draws a ``draws`` object, each draw's own fields over the folder's.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from merge_judged_rounds import JUDGED, round_sheets  # noqa: E402

from lgip_dataset import judging  # noqa: E402
from lgip_dataset.judging.report import ALL  # noqa: E402

INDEX = JUDGED / "README.md"
PAGES = JUDGED.parent  # docs/: its pages that quote rows of the index
ROWS = re.compile(r"(<!-- judged-rows: (?P<draws>[^>]*?) -->\n)(?P<rows>.*?)(<!-- /judged-rows -->)", re.S)
SEEDS = range(10_000)  # the seeds a key is searched for (the project's draws use 31 to 3501)
MIN_ITEMS = 20  # a key of fewer items (a third judge's few disputed flips) may fit several seeds: not searched
HARD = {"hard_object", "hard_color", "hard_count"}
DRAW_KEY = re.compile(r"key_(?P<draw>[a-z]+)\.json(\.gz)?")
CENSUS_KEY = re.compile(r"(?P<census>.+?)(?P<third>_third)?_key(?P<sheet>_\d+)?\.json\.gz")
NOT_VALID = judging.LABELS[1:]

Sheets = list[tuple[Path, dict[str, Path]]]  # each key with its label files by judge name


class Draw(NamedTuple):
    folder: str
    name: str | None  # None where the folder is one draw
    sheets: Sheets  # the sheets whose labels count: a census's third judges also settled other censuses' flips
    keys: list[Path]  # the keys whose flips the draw counts
    meta: dict


def draws(folder: Path) -> list[Draw]:
    """The draws of a round folder, each with its sheets and its ``round.json`` fields; ValueError naming the folder
    where its files are of no layout above, a key has no label file or ``round.json`` is missing."""
    meta_path = folder / "round.json"
    if not meta_path.is_file():
        raise ValueError(f"{folder}: no round.json (the round's number, kind, families, commit, build and judges)")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    own = meta.pop("draws", {})
    sheets = round_sheets(folder)
    if sheets and all(files for _, files in sheets):
        found = {None: sheets}
    elif any(CENSUS_KEY.fullmatch(path.name) for path in folder.iterdir()):
        found = _census_sheets(folder)
    else:
        found = _draw_sheets(folder)
    if not found or not all(files for group in found.values() for _, files in group):
        raise ValueError(f"{folder}: a key without label files, or files of no layout builders/judged_index.py reads")
    if set(own) != {name for name in found if name is not None}:
        named = sorted(name for name in found if name)
        raise ValueError(f"{folder}: round.json's draws {sorted(own)} are not the folder's {named}")
    census = any(CENSUS_KEY.fullmatch(key.name) for group in found.values() for key, _ in group)
    every = [sheet for group in found.values() for sheet in group]
    order = [None, *own]  # the draws in round.json's order
    return [Draw(folder.name, name, every if census else group,
                 [key for key, _ in group if not (census and CENSUS_KEY.fullmatch(key.name)["third"])],
                 meta | own.get(name, {}))
            for name, group in sorted(found.items(), key=lambda item: order.index(item[0]))]


def _draw_sheets(folder: Path) -> dict[str, Sheets]:
    found = {}
    for key in sorted(folder.iterdir()):
        if m := DRAW_KEY.fullmatch(key.name):
            label = re.compile(rf"(?P<judge>[A-Za-z]+\d+)_{m['draw']}\.tsv")
            files = {f"{folder.name}/{n['judge']}": path for path in sorted(folder.iterdir())
                     if (n := label.fullmatch(path.name))}
            found[m["draw"]] = [(key, files)]
    return found


def _census_sheets(folder: Path) -> dict[str, Sheets]:
    found: dict[str, Sheets] = {}
    for key in sorted(folder.iterdir()):
        if m := CENSUS_KEY.fullmatch(key.name):
            stem = f"{m['census']}{m['third'] or ''}{m['sheet'] or ''}"
            label = re.compile(rf"{re.escape(stem)}_(?P<judge>J\d+)\.tsv")
            files = {f"{folder.name}/{n['judge']}": path for path in sorted(folder.iterdir())
                     if (n := label.fullmatch(path.name))}
            found.setdefault(m["census"], []).append((key, files))
    return found


def key_seed(key: list[dict]) -> int | None:
    """The one seed of :data:`SEEDS` that shows each item of ``key`` as its A/B order says and ranks its items in
    their order (``lgip judge draw``'s ``first_is_original`` and ``rank``); None where none or several do."""
    if len(key) < MIN_ITEMS:
        return None
    shown = [(e["caption"], e["variant"], e["original_is"] == "A") for e in key]
    fits = [seed for seed in SEEDS if all(judging.first_is_original(seed, c, v) == first for c, v, first in shown)]
    fits = [seed for seed in fits
            if (ranks := [judging.rank(seed, e["caption"], e["variant"]) for e in key]) == sorted(ranks)]
    return fits[0] if len(fits) == 1 else None


def measure(draw: Draw) -> dict:
    """The draw's flips, labels a flip, seeds and majority counts, from its keys and label files (every label
    the folder's sheets give the flips of the draw's keys)."""
    store: dict = {}
    seeds, counted = set(), set()
    for key_path, files in draw.sheets:
        key = judging.read_key(key_path)
        labels = {judge: judging.read_labels(path, len(key), key=f"--key {key_path}") for judge, path in files.items()}
        judging.merge(store, key, labels, f"{draw.folder}/{judging.sheet_name(key_path)}")
        if key_path in draw.keys:
            counted |= {(entry["caption"], entry["variant"]) for entry in key}
            seeds.add(key_seed(key))
    records = [store[flip] for flip in sorted(counted)]
    given = sorted({len(r["labels"]) for r in records})
    return {"counts": judging.judged_counts(records)[ALL], "labels": given,
            "seeds": sorted(s for s in seeds if s is not None),
            "types": sorted({t for r in records for t in r["types"]}),
            "unanimous": sum(all(e["label"] == judging.VALID for e in r["labels"]) for r in records)}


def _share(k: int, n: int) -> str:
    return f"{k / n:.1%} ({k:,})"


def draw_id(draw: Draw) -> str:
    """How a page names a draw: its folder, and ``/<draw>`` in a folder of several."""
    return draw.folder + (f"/{draw.name}" if draw.name else "")


def row(draw: Draw, measured: dict, base: str = "") -> str:
    """The draw's row of the index, its links relative to the folder ``base`` names (``judged/`` from docs/)."""
    meta, counts = draw.meta, measured["counts"]
    n = counts["drawn"]
    where = f"[{draw.folder}]({base}{draw.folder}/README.md)" + (f" ({draw.name})" if draw.name else "")
    if (JUDGED / draw.folder / "report.md").is_file():
        where += f", [report]({base}{draw.folder}/report.md)"
    families = meta["families"] + (f" ({meta['commit']})" if meta.get("commit") else "")
    given = measured["labels"]
    labels = str(given[0]) if len(given) == 1 else f"{given[0]}–{given[-1]}"
    seeds = ", ".join(map(str, measured["seeds"])) or "—"
    cells = [str(meta.get("round") or "—"), where, meta["kind"], families, meta["build"], seeds, meta["judges"],
             labels, f"{n:,}", *(_share(counts[label], n) for label in NOT_VALID), _share(measured["unanimous"], n)]
    return "| " + " | ".join(cells) + " |"


HEADER = ("| round | folder | kind | families (commit) | build | seed | judges | labels a flip | flips | "
          + " | ".join(NOT_VALID) + " | every judge valid |\n|---:|---|---|---|---|---:|---|---:|---:|"
          + "---:|" * (len(NOT_VALID) + 1))

INTRO = """\
# Judged rounds: the index

<!-- written by builders/judged_index.py from each round's keys, label files and round.json; do not edit it by hand:
run `python builders/judged_index.py` (tests/test_judged_index.py fails when it is stale) -->

Every blind judgement of this project's flips, one folder a round: the sheets' keys, each judge's label file, the
instructions the judges saw, the report `lgip judge report` wrote and a `README.md` of what was drawn, why, and what
the judges found. The pages give the current figures: [judged hard flips](../judged_hard_flips.md) and
[judged extended flips](../judged_extended_flips.md); [history.md](history.md) holds the judgements made before the
round folders.

Each flip counts once, with the label most of its judges gave (a tie counts against valid). *Kind*: **sealed**, drawn
once after the rules froze, from flips no rule was made from (every sealed draw is development data for the rules made
after it; rounds 5 to 7 kept their folders' names for that later use); **development**, drawn to make rules from;
**census**, every flip of a build. *Seed*: read from the keys (the one seed whose A/B order and draw order each key
has). *Every judge valid*: the flips the `validated` config keeps (it keeps a judged flip only when every judge
labelled it valid). `python builders/merge_judged_rounds.py` merges every hard and compositional round into the
shipped label store; re-count a round with `lgip judge merge --key KEY --labels J1=FILE ... --store STORE` and
`lgip judge report --store STORE`.
"""

NOT_IN_A_FOLDER = """\
Not in a folder: the first census of the compositional flips (hard_relation 2.0.0, spatial 3.0.0, binding 3.0.0; all
4,161 of the val2017 build, then 102 hard_relation flips; sheets `census_1` to `census_11`) is in the shipped label
store only (`lgip judge report --store lgip_dataset/reference/judged_flips.jsonl.gz --types
hard_relation,spatial,binding` counts it with the rest), its protocol in
[extended_flips_3.0.0_sealed](extended_flips_3.0.0_sealed/README.md); and the single-judge rounds 1 to 3 and the
hand-judged flips before them are in [history.md](history.md).
"""


def measured_draws() -> list[tuple[Draw, dict]]:
    """Every draw of every round folder with what its records give, in the index's order: by round, then folder."""
    folders = sorted(path for path in JUDGED.iterdir() if path.is_dir())
    found = [(draw, k) for folder in folders for k, draw in enumerate(draws(folder))]
    found.sort(key=lambda item: (item[0].meta.get("round") or 1_000, item[0].folder, item[1]))
    return [(draw, measure(draw)) for draw, _ in found]


def index_text(measured: list[tuple[Draw, dict]]) -> str:
    """The index as :data:`INDEX` holds it: a table of the hard rounds, one of the compositional ones."""
    tables: dict[str, list[str]] = {"hard": [], "compositional": []}
    for draw, m in measured:
        tables["hard" if set(m["types"]) <= HARD else "compositional"].append(row(draw, m))
    return "\n".join([INTRO, "## Hard flips (hard_object, hard_color, hard_count)", "", HEADER, *tables["hard"], "",
                      "## Compositional flips (hard_relation, spatial, binding)", "", HEADER, *tables["compositional"],
                      "", NOT_IN_A_FOLDER])


def page_text(text: str, where: str, measured: list[tuple[Draw, dict]]) -> str:
    """``text`` with each ``<!-- judged-rows: DRAW, DRAW -->`` block written as the index's rows of those draws;
    ValueError naming ``where`` and a draw no folder holds."""
    rows = {draw_id(draw): row(draw, m, "judged/") for draw, m in measured}

    def block(match: re.Match) -> str:
        names = [name.strip() for name in match["draws"].split(",")]
        unknown = [name for name in names if name not in rows]
        if unknown:
            raise ValueError(f"{where}: no judged round is {', '.join(unknown)}; name a folder of docs/judged "
                             "(FOLDER/DRAW in a folder of several draws)")
        return match.group(1) + "\n".join([HEADER, *(rows[name] for name in names)]) + "\n" + match.group(4)

    return ROWS.sub(block, text)


def outputs() -> dict[Path, str]:
    """What the records give: the index and every docs page that quotes rows of it."""
    measured = measured_draws()
    out = {INDEX: index_text(measured)}
    for page in sorted(PAGES.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        if ROWS.search(text):
            out[page] = page_text(text, page.name, measured)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 naming each file that differs")
    args = parser.parse_args(argv)
    stale = {path: text for path, text in outputs().items()
             if not path.is_file() or path.read_text(encoding="utf-8") != text}
    if not args.check:
        for path, text in stale.items():
            path.write_text(text, encoding="utf-8")
    names = "".join(f"\n  {path.relative_to(PAGES.parent)}" for path in stale)
    print(f"{len(stale)} file(s) {'differ from their records' if args.check else 'rewritten'}{names}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
