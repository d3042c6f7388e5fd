"""Blind judging of a seeded sample of flips: draw a sheet that hides the type and which text is the
original, then unblind the labels and count them.

    python benchmarks/blind_judging.py draw BUILD --n 150 --seed 0 --types hard_object,hard_color,hard_count \
        --sheet sheet.md --key key.json      # --per-type: --n of each type, in one sheet
    # a judge who sees only sheet.md writes one label per item into labels.tsv: "<item>\t<label>\t<reason>",
    # label one of: valid, linguistically invalid, absurd, not a contradiction
    python benchmarks/blind_judging.py tally --key key.json --labels labels.tsv [--markdown out.md] [--json out.json]
    # several independent judges: --labels once per judge; the majority label counts, agreement is reported
    python benchmarks/blind_judging.py tally --key key.json --labels a.tsv --labels b.tsv --labels c.tsv

``draw`` takes the flips of :func:`draw_flips.draw` (the ``--n`` with the smallest SHA-256 of the
seed and their texts, so judgements carry over a rebuild) and shows each as two texts, A and B, in an
order given by another seeded hash: the judge cannot tell the original from the flip, nor the type.
The judge labels the pair as a probe: *valid* (both texts grammatical and plausible, and they
contradict each other), *linguistically invalid* (one text is broken English), *absurd* (one text is
grammatical but world knowledge alone says it is false, so text alone gives it away), *not a
contradiction* (both could describe the same image). ``tally`` joins the labels to the key and prints
the counts per class and per type with Clopper-Pearson 95% intervals, and the items by class; its
``--json`` file (the counts per type) is what ``lgip audit --judged`` shows beside the audit.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path

from scipy.stats import beta

sys.path.insert(0, str(Path(__file__).resolve().parent))
from draw_flips import draw, rank  # noqa: E402

LABELS = ("valid", "linguistically invalid", "absurd", "not a contradiction")


def _first_is_original(seed: int, caption: str, variant: str) -> bool:
    digest = hashlib.sha256(f"order\n{seed}\n{caption.strip()}\n{variant}".encode()).digest()
    return digest[0] % 2 == 0


def blind_sheet(rows: list[dict], seed: int) -> tuple[str, list[dict]]:
    """The judge's sheet (Markdown) and the key that unblinds it."""
    lines = ["| item | text A | text B |", "|---|---|---|"]
    key = []
    for item, row in enumerate(rows, 1):
        caption, variant = row["caption"].strip(), row["variant"]
        first_original = _first_is_original(seed, caption, variant)
        a, b = (caption, variant) if first_original else (variant, caption)
        lines.append(f"| {item} | {a.replace('|', '/')} | {b.replace('|', '/')} |")
        key.append({"item": item, "type": row["type"], "caption": caption, "variant": variant,
                    "original_is": "A" if first_original else "B"})
    return "\n".join(lines) + "\n", key


def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    """Exact 95% interval of a proportion k / n."""
    low = 0.0 if k == 0 else float(beta.ppf(0.025, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(0.975, k + 1, n - k))
    return low, high


def read_labels(path: Path, items: int) -> dict[int, tuple[str, str]]:
    """item -> (label, reason) from a tab-separated file; SystemExit naming the line for a bad one."""
    labels = {}
    with path.open(encoding="utf-8") as handle:
        for number, row in enumerate(csv.reader(handle, delimiter="\t"), 1):
            if not row or row[0].startswith("#"):
                continue
            try:
                item, label = int(row[0]), row[1].strip().lower()
            except (ValueError, IndexError):
                raise SystemExit(f"{path}:{number}: expected '<item>\\t<label>\\t<reason>', got {row!r}") from None
            if label not in LABELS or not 1 <= item <= items:
                raise SystemExit(f"{path}:{number}: item {item} label {label!r}: items are 1..{items}, labels "
                                 f"{', '.join(LABELS)}")
            labels[item] = (label, row[2].strip() if len(row) > 2 else "")
    missing = sorted(set(range(1, items + 1)) - set(labels))
    if missing:
        raise SystemExit(f"{path}: no label for items {missing[:10]}{' ...' if len(missing) > 10 else ''}")
    return labels


def tally(key: list[dict], labels: dict[int, tuple[str, str]]) -> str:
    """Counts per class (with intervals) and per type, then every item that is not valid."""
    n = len(key)
    counts = Counter(labels[k["item"]][0] for k in key)
    lines = ["| class | count | share (95% CI) |", "|---|---:|---|"]
    for label in LABELS:
        low, high = clopper_pearson(counts[label], n)
        lines.append(f"| {label} | {counts[label]} | {counts[label] / n:.1%} ({low:.1%}-{high:.1%}) |")
    types = sorted({k["type"] for k in key})
    lines += ["", "| type | drawn | " + " | ".join(LABELS) + " |", "|---|---:|" + "---:|" * len(LABELS)]
    for type_ in types:
        of_type = [labels[k["item"]][0] for k in key if k["type"] == type_]
        lines.append(f"| {type_} | {len(of_type)} | " + " | ".join(str(of_type.count(lab)) for lab in LABELS) + " |")
    lines += ["", "| item | type | class | caption | flip | reason |", "|---|---|---|---|---|---|"]
    for k in key:
        label, reason = labels[k["item"]]
        if label != "valid":
            lines.append(f"| {k['item']} | {k['type']} | {label} | {k['caption']} | {k['variant']} | {reason} |")
    return "\n".join(lines) + "\n"


def majority(judges: list[dict[int, tuple[str, str]]]) -> dict[int, tuple[str, str]]:
    """item -> (the label most judges gave, their reasons); a tie between labels goes to the one that is not
    valid and, among those, the first in ``LABELS`` order (a flip counts as valid only when most judges say so)."""
    out = {}
    for item in judges[0]:
        votes = Counter(judge[item][0] for judge in judges)
        top = max(votes.values())
        winners = [label for label in LABELS if votes[label] == top]
        label = next((w for w in winners if w != "valid"), winners[0]) if len(winners) > 1 else winners[0]
        reasons = "; ".join(judge[item][1] for judge in judges if judge[item][0] == label and judge[item][1])
        out[item] = (label, reasons)
    return out


def agreement(judges: list[dict[int, tuple[str, str]]]) -> str:
    """Pairwise Cohen's kappa over the four labels and over valid / not valid, and Fleiss' kappa (3+ judges)."""
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    items = sorted(judges[0])
    lines = ["| judges | agreement | Cohen's kappa (4 labels) | Cohen's kappa (valid or not) |", "|---|---:|---:|---:|"]
    for a in range(len(judges)):
        for b in range(a + 1, len(judges)):
            first, second = [judges[a][i][0] for i in items], [judges[b][i][0] for i in items]
            same = sum(x == y for x, y in zip(first, second)) / len(items)
            binary = cohen_kappa_score([x == "valid" for x in first], [y == "valid" for y in second])
            lines.append(f"| {a + 1} and {b + 1} | {same:.1%} | {cohen_kappa_score(first, second, labels=list(LABELS)):.2f} "
                         f"| {binary:.2f} |")
    if len(judges) >= 3:
        table = aggregate_raters([[LABELS.index(j[i][0]) for j in judges] for i in items], n_cat=len(LABELS))[0]
        lines.append(f"\nFleiss' kappa over {len(judges)} judges (4 labels): {fleiss_kappa(table):.2f}")
    return "\n".join(lines) + "\n"


def judged_counts(key: list[dict], labels: dict[int, tuple[str, str]]) -> dict:
    """The counts per type and class, as ``lgip audit --judged`` reads them."""
    per_type: dict[str, Counter] = {}
    for k in key:
        per_type.setdefault(k["type"], Counter())[labels[k["item"]][0]] += 1
    return {"format": "lgip-judged", "version": 1, "labels": list(LABELS),
            "per_type": {t: {"drawn": sum(c.values()), **{label: c[label] for label in LABELS}}
                         for t, c in sorted(per_type.items())}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("draw", help="write the blinded sheet and its key")
    d.add_argument("folder", type=Path, help="a folder written by `lgip build`")
    d.add_argument("--n", type=int, default=150)
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--types", default="hard_object,hard_color,hard_count")
    d.add_argument("--per-type", action="store_true",
                   help="draw --n flips of each type (not --n in all), shown in one sheet in the seeded order")
    d.add_argument("--sheet", type=Path, required=True)
    d.add_argument("--key", type=Path, required=True)
    t = sub.add_parser("tally", help="unblind the labels and count them")
    t.add_argument("--key", type=Path, required=True)
    t.add_argument("--labels", type=Path, required=True, action="append",
                   help="one judge's labels; repeat for each independent judge (the majority label counts)")
    t.add_argument("--markdown", type=Path, default=None, help="also write the tables here")
    t.add_argument("--json", type=Path, default=None, help="also write the counts per type here (for lgip audit --judged)")
    args = parser.parse_args(argv)
    if args.command == "draw":
        if not (args.folder / "pairs").is_dir():
            sys.exit(f"{args.folder}: no pairs config; give a folder written by `lgip build`")
        types = args.types.split(",")
        drawn = [row for t in types for row in draw(args.folder, args.n, args.seed, {t})] if args.per_type \
            else draw(args.folder, args.n, args.seed, set(types))
        drawn.sort(key=lambda row: rank(args.seed, row["caption"], row["variant"]))
        sheet, key = blind_sheet(drawn, args.seed)
        args.sheet.write_text(sheet, encoding="utf-8")
        args.key.write_text(json.dumps(key, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {len(key)} items to {args.sheet} (key: {args.key})")
        return
    key = json.loads(args.key.read_text(encoding="utf-8"))
    judges = [read_labels(path, len(key)) for path in args.labels]
    labels = majority(judges) if len(judges) > 1 else judges[0]
    text = tally(key, labels)
    if len(judges) > 1:
        text = (f"Majority of {len(judges)} independent blind judges (a tie counts against valid).\n\n" + text
                + "\n### Agreement\n\n" + agreement(judges))
    print(text)
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps(judged_counts(key, labels), indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
