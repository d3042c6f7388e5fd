"""Write ``lgip_dataset/reference/held_out_audit.json``: the reference builds' held-out figures for the dataset card.

Joins the JSON of ``benchmarks/held_out_audit.py`` with the verdicts of several blind judges on a sealed draw
(``lgip judge draw`` then one labels file per judge)::

    python benchmarks/held_out_audit.py --out runs/held_out
    lgip judge draw BUILD --types hard_object,hard_color,hard_count --n 150 --seed SEED --sheet sheet.md --key key.json
    python builders/held_out_reference.py runs/held_out.json --key key.json --seed SEED --labels a.tsv b.tsv c.tsv

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
    kappas = [cohen_kappa_score([a[i][0] for i in sorted(a)], [b[i][0] for i in sorted(a)], labels=list(judging.LABELS))
              for a, b in combinations(judges, 2)]
    return {"drawn": len(items), "seed": seed, "judges": len(judges), "counts": counts,
            "shares": {label: n / len(items) for label, n in counts.items()},
            "kappa_min": min(kappas, default=1.0), "kappa_max": max(kappas, default=1.0),
            "per_type": tally["per_type"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("figures", type=Path, help="the JSON written by benchmarks/held_out_audit.py")
    parser.add_argument("--key", type=Path, required=True, help="the sealed draw's key (`lgip judge draw`)")
    parser.add_argument("--seed", type=int, required=True, help="the seed the sealed draw was drawn with")
    parser.add_argument("--labels", type=Path, nargs="+", required=True, help="one labels file per judge")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    figures = json.loads(args.figures.read_text(encoding="utf-8"))
    if "hard_families_version" not in figures:  # written before the benchmark recorded its provenance
        figures = {**_benchmark("held_out_audit").provenance(), **figures}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    record = {**figures, "judged": judged(args.key, args.labels, args.seed)}
    args.out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
