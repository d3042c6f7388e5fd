"""The figures that the docs and cards repeat, each read from the record it was measured in.

A page marks a figure it repeats as ``<!-- figure: NAME -->VALUE<!-- /figure -->`` (the comments do not show
when the page is rendered; a table's VALUE stands on lines of its own, between the two comments); :func:`render` writes each marked VALUE from :func:`figures`, so a page never types
a figure its record holds. ``python builders/figures.py`` rewrites the pages; ``tests/test_figures.py`` fails when
a page's value differs from its record. The records: the embedded sample's build record
(``sample/lgip_build.json``) and the reference builds' held-out figures and judged draw
(``reference/held_out_audit.json``, :mod:`lgip_dataset.records.held_out_reference`) and ``lgip audit`` of the sample
(``reference/sample_audit.json``).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from statsmodels.stats.proportion import proportion_confint

from lgip_dataset import SAMPLE_DIR
from lgip_dataset.errors import DataError
from lgip_dataset.records import held_out_reference

SAMPLE_AUDIT = Path(__file__).resolve().parents[1] / "reference" / "sample_audit.json"
MARK = re.compile(r"<!-- figure: ([\w. -]+) -->(.*?)<!-- /figure -->", re.S)
# the reference sets by their record's name; the val2017 subsets are named by their captions
SETS = {"val2017, seed 0": "val2017", "val2017, seed 1": "val2017_seed1",
        "Karpathy test images not in val2017, seed 0": "karpathy", "val2017 + Karpathy test, seed 0": "merged"}
BLOCKS = {"hard flips": "hard", "paper flips": "paper", "all flips": "all"}
HELD_OUT = {"word": ("learners", "word", "accuracy"), "char": ("learners", "char", "accuracy"),
            "nb": ("learners", "nb", "accuracy"), "context": ("learners", "context", "accuracy"),
            "typicality": ("typicality", "accuracy"), "corpus_typicality": ("corpus_typicality", "accuracy"),
            "trigram": ("trigram", "PR"), "corpus_trigram": ("corpus_trigram", "PR"), "bigram": ("bigram", "PR")}
HELD_OUT_SETS = ("val2017", "val2017_seed1", "karpathy")  # where the README gives the hard types' largest figure


def _count(n: int) -> str:
    return f"{n:,}"


def _share(x: float) -> str:
    return f"{x:.3f}"


def _percent(x: float) -> str:
    return f"{x:.1%}"


def _dig(entry: dict, path: tuple) -> float | None:
    for key in path:
        entry = entry.get(key) if isinstance(entry, dict) else None
    return entry


def sample_figures(record: dict) -> dict[str, str]:
    """The embedded sample's sizes: images, rows, paraphrases, flips per type, hard flips."""
    counts = record["counts"]
    flips = counts["flips"]
    hard = sum(n for t, n in flips.items() if t.startswith("hard_"))
    out = {"sample.images": _count(counts["images"]), "sample.captions": _count(counts["captions"]),
           "sample.rows": _count(counts["paraphrases"]["total"] + flips["total"]),
           "sample.paraphrases": _count(counts["paraphrases"]["total"]), "sample.flips": _count(flips["total"]),
           "sample.hard_flips": _count(hard)}
    return out | {f"sample.flips.{t}": _count(n) for t, n in flips.items() if t != "total"}


def held_out_figures(reference: dict) -> dict[str, str]:
    """``held_out.SET.BLOCK.INSTRUMENT`` for every reference set, block or type and held-out instrument, with
    ``…pairs`` and ``…in_sample``; ``held_out.SET.captions``; the hard types' largest figure over the val2017 and
    Karpathy-only sets; the compositional families' figures and the judged draw."""
    out: dict[str, str] = {}
    largest = []
    for record in reference["records"]:
        name = SETS.get(record["set"], f"val2017_{record['captions'] // 1000}k")
        out[f"held_out.{name}.captions"] = _count(record["captions"])
        for block, entry in record["audit"]["figures"].items():
            key = f"held_out.{name}.{BLOCKS.get(block, block)}"
            out[f"{key}.pairs"] = _count(entry["pairs"])
            for instrument, path in HELD_OUT.items():
                value = _dig(entry, path)
                if value is not None:
                    out[f"{key}.{instrument}"] = _share(value)
                    if name in HELD_OUT_SETS and block in held_out_reference.TYPES:
                        largest.append(value)
            measured = [v for v in (_dig(entry, path) for path in HELD_OUT.values()) if v is not None]
            if measured:
                out[f"{key}.max"] = _share(max(measured))
            own = record["audit"]["in_sample"].get(block)
            if own:
                out[f"{key}.in_sample"] = _share(own["accuracy"])
        for block, share in record["audit"].get("coverage", {}).items():
            out[f"held_out.{name}.coverage.{BLOCKS.get(block, block)}"] = _percent(share)
    if largest:
        out["held_out.hard_types_max"] = _share(max(largest))
    for family, entry in (reference.get("compositional") or {}).get("families", {}).items():
        out[f"compositional.{family}.pairs"] = _count(entry["pairs"])
        for instrument, value in entry["figures"].items():
            if value is not None:
                out[f"compositional.{family}.{instrument.replace(', ', '_').replace(' ', '_')}"] = _share(value)
    out["table.held_out"] = f"\n{held_out_reference.table(reference)}\n"  # a table stands on lines of its own
    paper = held_out_reference.paper_table(reference)
    if paper:
        out["table.held_out_paper"] = f"\n{paper}\n"
    if reference.get("compositional"):
        out["table.compositional"] = f"\n{held_out_reference.compositional_table(reference['compositional'])}\n"
    for name in ("judged", "judged_validated"):  # the sealed draws of all hard flips and of the validated ones
        if reference.get(name):
            out |= judged_figures(name, reference[name])
    return out


def judged_figures(name: str, judged: dict) -> dict[str, str]:
    """``NAME.drawn``, ``.judges``, ``.seed``, the kappas (``.kappa_min``/``.kappa_max``, or ``.same_label`` where
    kappa is undefined), ``.not_valid`` and each label's share with its Clopper-Pearson 95% interval."""
    out = {f"{name}.drawn": _count(judged["drawn"]), f"{name}.judges": str(judged["judges"]),
           f"{name}.seed": str(judged["seed"]), f"{name}.not_valid": _percent(1 - judged["shares"]["valid"])}
    if judged.get("kappa_min") is not None:
        out |= {f"{name}.kappa_min": f"{judged['kappa_min']:.2f}", f"{name}.kappa_max": f"{judged['kappa_max']:.2f}"}
    if judged.get("same_label") is not None:
        out[f"{name}.same_label"] = f"{judged['same_label']:.0%}"
    for label, n in judged["counts"].items():
        low, high = proportion_confint(n, judged["drawn"], alpha=0.05, method="beta")  # Clopper-Pearson
        key = f"{name}.{label.replace(' ', '_')}"
        out |= {key: _percent(n / judged["drawn"]), f"{key}.low": f"{low:.1%}", f"{key}.high": f"{high:.1%}"}
    return out


def sample_audit_figures(result: dict) -> dict[str, str]:
    """``lgip audit`` of the sample, per block: the learners' means (lowest, highest) and their partitions' range,
    and the block's images."""
    out = {}
    for block, entry in result["blocks"].items():
        key = f"sample_audit.{BLOCKS.get(block, block)}"
        learners = [v for v in entry["learners"].values() if v.get("accuracy") is not None]
        out[f"{key}.images"] = _count(entry["images"])
        if learners:
            means = [v["accuracy"] for v in learners]
            out |= {f"{key}.learners_low": f"{min(means):.2f}", f"{key}.learners_high": f"{max(means):.2f}",
                    f"{key}.range_low": f"{min(v['range'][0] for v in learners):.2f}",
                    f"{key}.range_high": f"{max(v['range'][1] for v in learners):.2f}"}
    return out


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def figures() -> dict[str, str]:
    """Every named figure, formatted as the pages show it."""
    reference = held_out_reference.load()
    return (sample_figures(_read(Path(SAMPLE_DIR) / "lgip_build.json"))
            | (sample_audit_figures(_read(SAMPLE_AUDIT)) if SAMPLE_AUDIT.is_file() else {})
            | (held_out_figures(reference) if reference else {}))


def render(text: str, where: str, known: dict[str, str] | None = None) -> str:
    """``text`` with every marked figure written from its record; a DataError names an unknown figure and ``where``."""
    known = figures() if known is None else known

    def value(match: re.Match) -> str:
        name = match.group(1)
        if name not in known:
            raise DataError(f"{where}: no record holds the figure {name!r}; the names are those of "
                            "lgip_dataset.records.figures.figures()")
        return f"<!-- figure: {name} -->{known[name]}<!-- /figure -->"

    return MARK.sub(value, text)
