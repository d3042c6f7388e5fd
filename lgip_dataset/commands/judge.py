"""``lgip judge``: blind judging of a build's flips (:mod:`lgip_dataset.judging`; docs/judging.md).

``draw`` writes blinded sheets of flips and the keys that unblind them, ``merge`` adds judges' label files
of one sheet to a label store, ``report`` counts a store's labels and the judges' agreement.
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from lgip_dataset.commands import at_least_one


def _names(value: str) -> list[str]:
    """``a,b`` -> the names, in order, once each; argparse reports an empty list."""
    names = list(dict.fromkeys(name.strip() for name in value.split(",") if name.strip()))
    if not names:
        raise argparse.ArgumentTypeError(f"expected comma-separated flip types, got {value!r}")
    return names


def _judge_file(value: str) -> tuple[str, Path]:
    """``NAME=FILE`` -> (the judge's name, their label file); argparse reports anything else."""
    name, equals, path = value.partition("=")
    if not equals or not name.strip() or not path:
        raise argparse.ArgumentTypeError(f"expected NAME=FILE (a judge's name, then their label file), got {value!r}")
    return name.strip(), Path(path)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    draw = actions.add_parser("draw", help="write blinded sheets of a build's flips and the keys that unblind them",
                              description="Draw flips of a built folder in a seeded order and write each sheet as a "
                                          "Markdown table | item | text A | text B | (type and original hidden), with "
                                          "its key (JSON).")
    draw.add_argument("folder", type=Path, help="a folder written by `lgip build`")
    draw.add_argument("--types", type=_names, required=True, help="comma-separated flip types to draw from")
    size = draw.add_mutually_exclusive_group(required=True)
    size.add_argument("--n", type=at_least_one, help="flips to draw: those first in the seeded order")
    size.add_argument("--all", action="store_true", help="every flip of --types (in the seeded order)")
    draw.add_argument("--per-type", action="store_true", help="--n flips of each type, not --n in all")
    draw.add_argument("--seed", type=int, default=0, help="seed of the order and of text A/B (default: %(default)s)")
    draw.add_argument("--split", type=at_least_one, default=1, metavar="K",
                      help="deal the flips round robin onto K sheets, written to the --sheet and --key names with _1.._K "
                           "added to their stems (default: one sheet)")
    draw.add_argument("--exclude-judged", type=Path, metavar="STORE",
                      help="leave out the flips this label store holds two or more labels of")
    draw.add_argument("--disputed", type=Path, metavar="STORE",
                      help="take only the flips whose labels in this store have no strict majority (the third judge's sheet)")
    draw.add_argument("--validated-only", action="store_true",
                      help="take only the flips of the folder's validated config (a sealed draw from validated flips: "
                           "judged valid and, for the compositional families, chosen across the build)")
    draw.add_argument("--sheet", type=Path, required=True, help="the judge's sheet (Markdown) to write")
    draw.add_argument("--key", type=Path, required=True, help="the key (JSON) to write; keep it from the judge")
    merge = actions.add_parser("merge", help="add judges' label files of one sheet to a label store",
                               description="Unblind each judge's labels of one sheet with its key and add them to a "
                                           "label store (JSON Lines, one record per flip; created when missing).")
    merge.add_argument("--key", type=Path, required=True, help="the sheet's key, as `lgip judge draw` wrote it")
    merge.add_argument("--labels", type=_judge_file, action="append", required=True, metavar="NAME=FILE",
                       help="a judge's name and label file (lines '<item>\\t<label>\\t<reason>'); once per judge")
    merge.add_argument("--store", type=Path, required=True, help="the label store (.jsonl or .jsonl.gz)")
    merge.add_argument("--sheet-name", default=None,
                       help="the sheet's name noted with each label (default: the key's file name less .json[.gz])")
    report = actions.add_parser("report", help="count a label store's labels per type, with the judges' agreement",
                                description="Print the majority labels per type and class with Clopper-Pearson 95% "
                                            "intervals, Cohen's and Fleiss' kappa, and the flips not judged valid.")
    report.add_argument("--store", type=Path, required=True, help="the label store (.jsonl or .jsonl.gz)")
    report.add_argument("--types", type=_names, default=None, help="comma-separated flip types (default: all in the store)")
    report.add_argument("--markdown", type=Path, default=None, help="also write the report here")
    report.add_argument("--json", type=Path, default=None,
                        help="also write the counts per type and the agreement here (for `lgip audit --judged`)")


def run(args: argparse.Namespace) -> int:
    return {"draw": _draw, "merge": _merge, "report": _report}[args.action](args)


def _numbered(path: Path, sheets: int) -> list[Path]:
    """``path`` for one sheet; else ``<stem>_1<suffix>`` .. ``<stem>_K<suffix>``."""
    return [path] if sheets == 1 else [path.with_name(f"{path.stem}_{k}{path.suffix}") for k in range(1, sheets + 1)]


def _draw(args: argparse.Namespace) -> int:
    from lgip_dataset import judging
    from lgip_dataset.errors import DataError
    from lgip_dataset.files.atomic import atomic_write_text, check_output_file, is_special

    sheets, keys = _numbered(args.sheet, args.split), _numbered(args.key, args.split)
    if set(sheets) & set(keys):
        raise DataError(f"--sheet {args.sheet} and --key {args.key} name the same file; the key must stay apart")
    for path, option in [*((p, "--sheet") for p in sheets), *((p, "--key") for p in keys)]:
        check_output_file(path, option)
    for key in keys:
        if os.path.lexists(key) and not is_special(key):  # a device or pipe is written to, never replaced
            raise DataError(f"--key {key} exists: it is the only way to unblind the sheet it was drawn with; give "
                            "another --key, or remove that file if its sheet is not to be judged")
    exclude = judging.read_store(args.exclude_judged, "--exclude-judged") if args.exclude_judged else None
    disputed = judging.read_store(args.disputed, "--disputed") if args.disputed else None
    rows = judging.draw(args.folder, args.types, n=args.n, per_type=args.per_type, seed=args.seed,
                        exclude_judged=exclude, disputed=disputed, validated_only=args.validated_only)
    for part, sheet, key in zip(judging.split(rows, args.split), sheets, keys):
        text, items = judging.blind_sheet(part, args.seed)
        atomic_write_text(sheet, text, "--sheet")
        atomic_write_text(key, judging.key_text(items), "--key")
        print(f"wrote {len(items)} item(s) to {sheet} (key: {key})")
    return 0


def _merge(args: argparse.Namespace) -> int:
    from lgip_dataset import judging
    from lgip_dataset.errors import DataError

    store_path = judging.check_store_name(args.store, "--store")
    key = judging.read_key(args.key)
    names = [name for name, _ in args.labels]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise DataError(f"--labels: judge {', '.join(map(repr, repeated))} is named twice; give each judge one file")
    labels = {name: judging.read_labels(path, len(key), key=f"--key {args.key}") for name, path in args.labels}
    sheet = args.sheet_name or judging.sheet_name(args.key)
    with judging.store_lock(store_path):  # a second merge into this store waits: neither loses a label
        store = judging.read_store(store_path) if store_path.exists() else {}
        given = judging.merge(store, key, labels, sheet)
        judging.write_store(store_path, store)
    print(f"merged {given} label(s) of {len(labels)} judge(s) ({', '.join(names)}) on the {len(key)} flip(s) of sheet "
          f"{sheet!r} into {store_path} ({len(store)} flip(s) judged there)")
    return 0


def _report(args: argparse.Namespace) -> int:
    from lgip_dataset import judging
    from lgip_dataset.files.atomic import atomic_write_text, check_output_file

    for path, option in ((args.markdown, "--markdown"), (args.json, "--json")):
        if path is not None:
            check_output_file(path, option)
    records = judging.records_of(judging.read_store(args.store), args.types)
    text = judging.report_markdown(records)
    print(text)
    if args.markdown:
        atomic_write_text(args.markdown, text, "--markdown")
    if args.json:
        atomic_write_text(args.json, json.dumps(judging.judged_counts(records), indent=1) + "\n", "--json")
    return 0
