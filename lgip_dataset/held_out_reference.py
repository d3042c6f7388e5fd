"""The held-out figures of the reference builds, shipped with the package for the dataset card.

A build chooses its hard flips against its own instruments, so the figures it can report itself are in-sample.
How far text alone goes on the hard flips is measured apart, on instruments no build uses, by
``benchmarks/held_out_audit.py`` (val2017 subsets, val2017 at two seeds, val2017 + Karpathy test), with the
verdicts of blind judges on a sealed draw; ``reference/held_out_audit.json`` holds those figures with what they
were measured with, and :func:`card_section` shows them in every card of a build of the same hard families.
"""
from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

REFERENCE = "held_out_audit.json"
TYPES = ("hard_object", "hard_color", "hard_count")
HARD_BLOCK = "hard flips"


@lru_cache(maxsize=1)
def load() -> dict | None:
    """The shipped reference figures (None when the package has none)."""
    path = resources.files("lgip_dataset") / "reference" / REFERENCE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _learners(figures: dict) -> str:
    return " / ".join(f"{figures['learners'][k]['accuracy']:.3f}" for k in ("word", "char", "nb"))


def _lm(figures: dict, key: str) -> str:
    return f"{figures[key]['PR']:.3f}" if figures.get(key) else "—"


def table(reference: dict) -> str:
    """One row per reference set: captions, the hard set's and each type's held-out learners, the trigrams' PR."""
    rows = ["| set | captions | hard flips: word / char / nb | " + " | ".join(f"{t}: word / char / nb" for t in TYPES)
            + " | trigram PR, corpus of other images / other folds | corpus trigram PR: " + " / ".join(TYPES)
            + " | in-sample: the build's word learner |",
            "|---|---:|---|" + "---|" * len(TYPES) + "---|---|---|"]
    for record in reference["records"]:
        figures = record["audit"]["figures"]
        hard = figures[HARD_BLOCK]
        own = record["audit"]["in_sample"].get(HARD_BLOCK)
        rows.append(f"| {record['set']} | {record['captions']:,} | {_learners(hard)} | "
                    + " | ".join(_learners(figures[t]) for t in TYPES if t in figures)
                    + f" | {_lm(hard, 'corpus_trigram')} / {_lm(hard, 'trigram')} | "
                    + " / ".join(_lm(figures[t], "corpus_trigram") for t in TYPES if t in figures) + " | "
                    + (f"{own['accuracy']:.3f} |" if own else "— |"))
    return "\n".join(rows)


def card_section(info: dict) -> str | None:
    """The card's held-out section for a build's record ``info``: the reference builds' figures when the build
    has hard flips (with a note where its hard families' version is not the one measured), and the judged
    sealed draw."""
    reference = load()
    if not info.get("hard_flips") or reference is None:
        return None
    version = (info.get("families") or {}).get("hard_object", {}).get("version")
    note = ("" if version in (None, reference["hard_families_version"]) else
            f" This build's hard families are version {version}; the figures were measured on version "
            f"{reference['hard_families_version']}: re-measure them with the command below.")
    judged = reference.get("judged")
    judged_text = "" if not judged else (
        f"\n\nJudged blind on a sealed draw of {judged['drawn']} hard flips (drawn after the rules froze, seed "
        f"{judged['seed']}; {judged['judges']} independent judges, type and original hidden; pairwise Cohen's "
        f"kappa {judged['kappa_min']:.2f}–{judged['kappa_max']:.2f}): {judged['shares']['linguistically invalid']:.1%} "
        f"linguistically invalid, {judged['shares']['absurd']:.1%} absurd, {judged['shares']['not a contradiction']:.1%} "
        "not a contradiction (majority label).")
    return ("## Held out: how far text alone goes on instruments the build never used\n\n"
            "The headline figures for the hard flips. Learners of two classes (word and character logistic "
            "regressions, naive Bayes on word 1-2-grams), each the mean over 5 random image partitions drawn at "
            "audit time, and trigram LMs trained on the captions of other images (of a corpus outside the build, "
            "each row scored by the half of it no build counts for that row, and of the build's other folds); 0.5 "
            "is chance and a figure "
            f"below it is an artifact too. Measured on the reference builds (hard families "
            f"{reference['hard_families_version']}, lgip {reference['lgip_version']}, commit {reference['git_hash']}, "
            f"{reference['machine']}) by `python benchmarks/held_out_audit.py`; the last column is in-sample, for "
            f"comparison only.{note}\n\n" + table(reference) + judged_text)
