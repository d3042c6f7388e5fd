"""Write ``lgip_dataset/reference/held_out_audit.json``: the reference builds' held-out figures for the dataset card.

Joins the JSON of ``benchmarks/held_out_audit.py`` with the verdicts of several blind judges on a sealed draw
(``lgip judge draw`` then one labels file per judge)::

    python benchmarks/held_out_audit.py --compositional --out runs/held_out
    python benchmarks/held_out_audit.py --seeds 1 --no-subsets --no-karpathy --no-merged --out runs/held_out_seed1
    lgip judge draw BUILD --types hard_object,hard_color,hard_count --n 150 --seed SEED --sheet sheet.md --key key.json
    python builders/held_out_reference.py runs/held_out.json runs/held_out_seed1.json --key key.json --seed SEED \
        --labels a.tsv b.tsv c.tsv [--validated-key vkey.json --validated-seed VSEED --validated-labels d.tsv e.tsv f.tsv]

The ``--validated-*`` draw is a sealed draw of the hard flips of a build's ``validated`` config (``lgip judge draw
--validated-only``): the card gives it beside the draw of all hard flips.

A run that audits some sets again joins the reference record it adds to (``lgip_dataset/reference/held_out_audit.json
runs/again.json``): its records replace those sets' in place.

then rebuild the sample (``builders/build_sample.py``) so its card shows them.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from itertools import combinations
from pathlib import Path

from lgip_dataset import judging
from lgip_dataset.judging.report import defined

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "lgip_dataset" / "reference" / "held_out_audit.json"


def _benchmark(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(REPO / "benchmarks"))
    spec.loader.exec_module(module)
    return module


def judged(key: Path, labels: list[Path], seed: int) -> dict:
    """The majority verdicts of the judges on the sealed draw: counts and shares per label, pairwise kappas."""
    from sklearn.metrics import cohen_kappa_score

    items = judging.read_key(key)
    judges = [judging.read_labels(path, len(items)) for path in labels]
    store: dict = {}
    judging.merge(store, items, {f"judge {k}": verdicts for k, verdicts in enumerate(judges, 1)}, key.stem)
    tally = judging.judged_counts(list(store.values()))
    counts = {label: tally["all"][label] for label in judging.LABELS}
    kappas = [defined(lambda: cohen_kappa_score([a[i][0] for i in sorted(a)], [b[i][0] for i in sorted(a)],
                                                 labels=list(judging.LABELS)))
              for a, b in combinations(judges, 2)]  # None where two judges gave every flip one and the same label
    known = [k for k in kappas if k is not None]
    return {"drawn": len(items), "seed": seed, "judges": len(judges), "counts": counts,
            "shares": {label: n / len(items) for label, n in counts.items()},
            "kappa_min": min(known, default=None), "kappa_max": max(known, default=None),
            "same_label": sum(len({judge[e["item"]][0] for judge in judges}) == 1 for e in items) / len(items),
            "per_type": tally["per_type"]}


def joined(runs: list[dict], paths: list[Path]) -> dict:
    """One record of several runs of the benchmark (or of an earlier reference record): the first run's provenance,
    every run's records in order, where a later run's record of the same set replaces the earlier one in its place
    (naming its run's ``git_hash`` where it differs), and the compositional verdicts of the last run that has them
    (a later audit of the compositional families replaces the earlier one, naming its commit where it differs).
    Runs of other hard families or lgip versions are refused."""
    runs = [run if "hard_families_version" in run else {**_benchmark("held_out_audit").provenance(), **run}
            for run in runs]  # a run written before the benchmark recorded its provenance
    for path, run in zip(paths, runs):
        for key in ("hard_families_version", "lgip_version"):
            if run[key] != runs[0][key]:
                raise SystemExit(f"{path}: {key} {run[key]}, but {paths[0]} has {runs[0][key]}; join runs of one version")
    compositional = [{**run["compositional"], **({} if run.get("git_hash") == runs[0].get("git_hash") else
                                                 {"git_hash": run.get("git_hash")})}
                     for run in runs if "compositional" in run]
    records: dict[tuple, dict] = {}  # a set is its name and size: the val2017 subsets share a name
    for run in runs:
        for record in run["records"]:
            stamp = {} if run.get("git_hash") == runs[0].get("git_hash") else {"git_hash": run.get("git_hash")}
            records[record["set"], record["captions"]] = {**record, **stamp}
    return {**{k: v for k, v in runs[0].items() if k not in ("records", "compositional", "judged")},
            "records": list(records.values()),
            **({"compositional": compositional[-1]} if compositional else {})}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("figures", type=Path, nargs="+",
                        help="the JSON written by benchmarks/held_out_audit.py (several: their records joined, in order)")
    parser.add_argument("--key", type=Path, required=True, help="the sealed draw's key (`lgip judge draw`)")
    parser.add_argument("--seed", type=int, required=True, help="the seed the sealed draw was drawn with")
    parser.add_argument("--labels", type=Path, nargs="+", required=True, help="one labels file per judge")
    parser.add_argument("--validated-key", type=Path, help="a sealed draw of the validated config's hard flips: its key")
    parser.add_argument("--validated-seed", type=int, help="the seed that draw was drawn with")
    parser.add_argument("--validated-labels", type=Path, nargs="+", help="one labels file per judge of that draw")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    validated = (args.validated_key, args.validated_seed, args.validated_labels)
    if any(v is not None for v in validated) and not all(v is not None for v in validated):
        parser.error("--validated-key, --validated-seed and --validated-labels go together; give all three or none")
    figures = joined([json.loads(path.read_text(encoding="utf-8")) for path in args.figures], args.figures)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    record = {**figures, "judged": judged(args.key, args.labels, args.seed)}
    if args.validated_key is not None:
        record["judged_validated"] = judged(args.validated_key, args.validated_labels, args.validated_seed)
    args.out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
