"""The hard flips (and the paper's) judged by instruments no build uses, at several sizes: the card's held-out figures.

Builds the default ``core,hard`` set from nested val2017 subsets (``--sizes``, in captions), all of val2017 (where
the rules were tuned), the Karpathy test images not in val2017 (captions no rule was tuned on) and val2017 plus
those, each at ``--seed``; audits each with
:func:`lgip_metric.audit.audit` (word, character, naive Bayes and context learners on fresh image partitions,
context typicality and a trigram LM on other images' captions, and for the val2017 sets both from the Karpathy
test captions of the images outside them, for the Karpathy-only set from the val2017 captions); records each build's wall and CPU time and peak memory. Writes a JSON record and
a markdown table (``--out``, without suffix)::

    python benchmarks/held_out_audit.py --annotations ../shared/coco/annotations --out docs/held_out_audit

Every build is a separate process (its time and memory are its own); the audits run in this one.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lgip_dataset.records.held_out_reference import HARD_BLOCK, PAPER_TYPES, TYPES

REPO = Path(__file__).resolve().parents[1]
DEFAULT_ANNOTATIONS = REPO.parent / "shared" / "coco" / "annotations"
VAL2017, KARPATHY = "captions_val2017.json", "coco_karpathy_test.json"
COMPOSITIONAL = ("hard_relation", "spatial", "binding")  # audited on a --families all build's validated config
STANDARD = {"per_type_max": 0.57, "min": 0.45}  # what every held-out instrument must read for a family to be reported clean


def merged_captions(annotations: Path, out: Path, with_val: bool = True) -> Path:
    """val2017 plus the Karpathy test images not in val2017 (``with_val=False``: those images alone, captions no
    rule was tuned on), as one official-format captions file."""
    val = json.loads((annotations / VAL2017).read_text())
    known = {image["id"] for image in val["images"]}
    next_id = max(a["id"] for a in val["annotations"]) + 1
    if not with_val:
        val = {**val, "images": [], "annotations": []}
    added = set()
    for entry in json.loads((annotations / KARPATHY).read_text()):
        image_id = int(re.search(r"(\d+)\.jpg$", entry["image"]).group(1))
        if image_id in known:
            continue
        if image_id not in added:
            added.add(image_id)
            val["images"].append({"id": image_id, "file_name": Path(entry["image"]).name})
        for caption in entry["caption"] if isinstance(entry["caption"], list) else [entry["caption"]]:
            val["annotations"].append({"id": next_id, "image_id": image_id, "caption": caption})
            next_id += 1
    path = out / ("captions_val2017_karpathy_test.json" if with_val else "captions_karpathy_test_not_val2017.json")
    path.write_text(json.dumps(val))
    return path


def timed_build(captions: Path, out: Path, seed: int, num_images: int | None, workers: int,
                families: str = "core,hard") -> dict:
    """Run ``lgip build`` in a child process; its wall time, CPU time and peak memory (resource of children)."""
    import resource

    command = [str(Path(sys.executable).parent / "lgip"), "build", "--captions", str(captions), "--no-images",
               "--captions-per-image", "7", "--seed", str(seed), "--families", families, "--out", str(out),
               "--workers", str(workers), "--overwrite"]
    command += ["--num-images", str(num_images)] if num_images else []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"wall_s": round(time.perf_counter() - started, 1),
            "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
            "peak_rss_gb": round(after.ru_maxrss / 2 ** 20, 2)}  # the largest child so far, in KiB


def audited(folder: Path, corpus_file: Path | None, seed: int) -> dict:
    """The held-out figures of a build's hard flips and, audited apart, its paper flips (and its recorded in-sample
    ones)."""
    from lgip_metric import audit

    source = audit.from_build(folder)
    keep = ("pairs", "images", "learners", "typicality", "corpus_typicality", "trigram", "corpus_trigram", "bigram")
    figures, described = {}, []
    for types in (TYPES, PAPER_TYPES):  # the paper's flips apart: the hard flips' partitions stay their own
        rows = audit.flip_rows(source.frame, types=list(types), where=str(folder))
        corpus = (audit.corpus_captions(corpus_file, rows["image_id"].unique(), source.frame["caption"].unique())
                  if corpus_file else None)
        result = audit.audit(source.frame, types=list(types), seed=seed, corpus=corpus, bootstrap=200)
        figures |= {name: {k: v for k, v in entry.items() if k in keep}
                    for name, entry in [*result["blocks"].items(), *result["per_type"].items()]}
        described.append(result["settings"].get("corpus"))
    return {"figures": figures, "in_sample": source.in_sample, "corpus": described[0],  # the hard flips' corpus
            "coverage": coverage(source.frame)}


def coverage(frame) -> dict:
    """The share of the build's images with at least one hard flip, and with one of each hard type."""
    images = frame["image_id"].nunique()
    shares = {t: frame.loc[frame["type"] == t, "image_id"].nunique() / images for t in TYPES}
    return {HARD_BLOCK: frame.loc[frame["type"].isin(TYPES), "image_id"].nunique() / images, **shares}


def _instruments(entry: dict) -> dict:
    """Every held-out instrument's figure of one audited type: learners, typicality, the LMs' PR."""
    figures = {f"{k} learner": v.get("accuracy") for k, v in entry["learners"].items()}
    figures |= {name: entry[key].get("accuracy") for key, name in (("typicality", "typicality, other folds"),
                                                                    ("corpus_typicality", "typicality, corpus"))
                if entry.get(key)}
    return figures | {name: entry[key]["PR"] for key, name in (("trigram", "trigram, other folds"),
                                                               ("corpus_trigram", "trigram, corpus")) if entry.get(key)}


def compositional_set(folder: Path) -> str:
    """The set a given ``--families all`` build holds, named from its build record (captions file, size, seed)."""
    info = json.loads((folder / "lgip_build.json").read_text(encoding="utf-8"))
    return (f"{info['source']['captions']} ({info['counts']['captions']:,} captions), seed {info['seed']}, "
            "--families all")


def compositional(folder: Path, name: str, seed: int) -> dict:
    """The held-out figures of the compositional families on the validated config of a ``--families all`` build, and
    whether each meets :data:`STANDARD` (every instrument within it)."""
    import pandas as pd

    from lgip_metric import audit

    frame = pd.read_parquet(folder / "validated")
    result = audit.audit(frame, types=list(COMPOSITIONAL), seed=seed, bootstrap=200)
    families = {}
    for family, entry in result["per_type"].items():
        figures = _instruments(entry)
        values = [v for v in figures.values() if v is not None]
        families[family] = {"pairs": entry["pairs"], "images": entry["images"], "figures": figures,
                            "meets_standard": bool(values) and STANDARD["min"] <= min(values)
                            and max(values) <= STANDARD["per_type_max"]}
    return {"set": name, "config": "validated", "standard": STANDARD, "families": families}


def provenance() -> dict:
    """What the figures were measured with: the package, the hard families' version, the commit, the machine."""
    import os
    import platform

    from lgip_dataset import __version__
    from lgip_dataset.perturb.families.hard import VERSION
    from lgip_metric.results.record import git_hash

    return {"lgip_version": __version__, "hard_families_version": VERSION, "git_hash": git_hash(),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPU cores, {platform.python_version()}"}


def _spread_cell(figure: dict | None) -> str:
    """A held-out figure's mean with its range over the partitions ("—" where absent or not measurable)."""
    if not figure or figure.get("accuracy") is None:
        return "—"
    return f"{figure['accuracy']:.3f} ({figure['range'][0]:.3f}–{figure['range'][1]:.3f})"


def markdown(records: list[dict]) -> str:
    """One row per (set, block or type): pairs, the learners' mean and range, the LMs' PR, the in-sample figure."""
    lines = ["| set | captions | type | flips | word | char | nb | context | typicality, other folds | typicality, corpus "
             "| trigram, other folds | trigram, corpus | in-sample: build's learner |",
             "|---|---:|---|---:|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        for name, f in r["audit"]["figures"].items():
            cells = [_spread_cell(f["learners"].get(k)) for k in ("word", "char", "nb", "context")]
            cells += [_spread_cell(f.get("typicality")),
                      f"{f['corpus_typicality']['accuracy']:.3f}" if f.get("corpus_typicality") else "—"]
            lm = [f"{f[k]['PR']:.3f}" if f.get(k) else "—" for k in ("trigram", "corpus_trigram")]
            own = r["audit"]["in_sample"].get(name)
            own_cell = f"{own['accuracy']:.3f}" if own else "—"
            lines.append(f"| {r['set']} | {r['captions']:,} | {name} | {f['pairs']:,} | {' | '.join(cells)} | "
                         f"{' | '.join(lm)} | {own_cell} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from script_args import positive, whole_list  # here: the tests load this file's functions without its folder

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotations", type=Path, default=DEFAULT_ANNOTATIONS,
                        help=f"folder with {VAL2017} and {KARPATHY}")
    parser.add_argument("--sizes", type=whole_list(1), default="6000,12000",
                        help="val2017 subsets, in captions (default: %(default)s)")
    parser.add_argument("--seeds", type=whole_list(0), default="0", help="build seeds of the val2017 set (default: %(default)s)")
    parser.add_argument("--no-subsets", action="store_true", help="leave out the val2017 subsets")
    parser.add_argument("--no-val2017", action="store_true", help="leave out all of val2017 (every --seeds)")
    parser.add_argument("--no-karpathy", action="store_true", help="leave out the Karpathy test images not in val2017")
    parser.add_argument("--no-merged", action="store_true", help="leave out val2017 + Karpathy test")
    parser.add_argument("--workers", type=positive, default=2)
    parser.add_argument("--compositional", action="store_true",
                        help="also build val2017 + Karpathy test with --families all and audit the validated config's "
                             f"{', '.join(COMPOSITIONAL)}")
    parser.add_argument("--compositional-build", type=Path, default=None, metavar="DIR",
                        help="audit this --families all build's validated config instead of building one")
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="keep each build in DIR (one folder per set) instead of a temporary folder")
    parser.add_argument("--out", type=Path, required=True, help="output path without suffix (.json and .md written)")
    args = parser.parse_args(argv)
    val = args.annotations / VAL2017
    seeds = args.seeds
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        plan = [(f"val2017 subset, seed {seeds[0]}", val, seeds[0], size // 5, val.parent / KARPATHY)
                for size in ([] if args.no_subsets else args.sizes)]
        plan += [(f"val2017, seed {seed}", val, seed, None, val.parent / KARPATHY)
                 for seed in ([] if args.no_val2017 else seeds)]
        if not args.no_karpathy:
            plan.append((f"Karpathy test images not in val2017, seed {seeds[0]}",
                         merged_captions(args.annotations, tmp, False), seeds[0], None, val))
        if not args.no_merged:
            plan.append((f"val2017 + Karpathy test, seed {seeds[0]}", merged_captions(args.annotations, tmp), seeds[0],
                         None, None))
        records = []
        for k, (name, captions, seed, images, corpus) in enumerate(plan):
            out = (args.keep / f"build-{k}") if args.keep else tmp / "build"
            timing = timed_build(captions, out, seed, images, args.workers)
            info = json.loads((out / "lgip_build.json").read_text())
            record = {"set": name, "rules_tuned_on_it": captions == val,
                      "captions": info["counts"]["captions"], "images": info["counts"]["images"],
                      "seed": seed, "build": timing, "audit": audited(out, corpus, seed=0)}
            records.append(record)
            print(f"{name}: {record['captions']:,} captions, build {timing['wall_s']} s wall / {timing['cpu_s']} s CPU, "
                  f"peak {timing['peak_rss_gb']} GB", flush=True)
        extra = {}
        if args.compositional or args.compositional_build:
            folder = args.compositional_build or (args.keep or tmp) / "build-all"
            if not args.compositional_build:
                timed_build(merged_captions(args.annotations, tmp), folder, seeds[0], None, args.workers, "all")
            extra["compositional"] = compositional(folder, compositional_set(folder) if args.compositional_build else
                                                   f"val2017 + Karpathy test, seed {seeds[0]}, --families all", seed=0)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps({**provenance(), "records": records, **extra}, indent=2) + "\n")
    args.out.with_suffix(".md").write_text(markdown(records))
    print(markdown(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
