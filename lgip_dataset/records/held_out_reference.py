"""The held-out figures of the reference builds, shipped with the package for the dataset card.

A build chooses its hard flips against its own instruments, so the figures it can report itself are in-sample.
How far text alone goes on the hard flips is measured apart, on instruments no build uses, by
``benchmarks/held_out_audit.py`` (val2017 subsets and val2017, where the rules were tuned; the Karpathy test images
not in val2017 and val2017 + those, captions no rule was tuned on), with the
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
PAPER_BLOCK, PAPER_TYPES = "paper flips", ("object", "color", "count")
SUBSET = "val2017 subset"  # the reference sets of the scaling check, named by their size


@lru_cache(maxsize=1)
def load() -> dict | None:
    """The shipped reference figures (None when the package has none)."""
    path = resources.files("lgip_dataset") / "reference" / REFERENCE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


LEARNERS = ("word", "char", "nb", "context")


def _learners(figures: dict) -> str:
    return " / ".join(f"{figures['learners'][k]['accuracy']:.3f}" if k in figures["learners"] else "—" for k in LEARNERS)


def _typicality(figures: dict) -> str:
    """Context typicality from a corpus of other images / from the build's other folds."""
    corpus, folds = figures.get("corpus_typicality"), figures.get("typicality")
    return " / ".join(f"{f['accuracy']:.3f}" if f and f.get("accuracy") is not None else "—" for f in (corpus, folds))


def _lm(figures: dict, key: str) -> str:
    return f"{figures[key]['PR']:.3f}" if figures.get(key) else "—"


def _label(record: dict) -> str:
    """A reference set's name with whether the rules were tuned on it."""
    tuned = record.get("rules_tuned_on_it")
    return record["set"] + ("" if tuned is None else " (rules tuned on it)" if tuned else
                            " (held out: no rule tuned on it)")


def table(reference: dict) -> str:
    """One row per reference set: captions, the hard set's and each type's held-out learners, the trigrams' PR."""
    names = " / ".join(LEARNERS)
    rows = [f"| set | captions | hard flips: {names} | " + " | ".join(f"{t}: {names}" for t in TYPES)
            + " | context typicality, corpus / other folds: hard flips | " + " | ".join(TYPES)
            + " | trigram PR, corpus of other images / other folds | corpus trigram PR: " + " / ".join(TYPES)
            + " | in-sample: the build's word learner |",
            "|---|---:|---|" + "---|" * len(TYPES) + "---|" + "---|" * len(TYPES) + "---|---|---|"]
    for record in reference["records"]:
        figures = record["audit"]["figures"]
        hard = figures[HARD_BLOCK]
        own = record["audit"]["in_sample"].get(HARD_BLOCK)
        rows.append(f"| {_label(record)} | {record['captions']:,} | {_learners(hard)} | "
                    + " | ".join(_learners(figures[t]) for t in TYPES if t in figures)
                    + f" | {_typicality(hard)} | " + " | ".join(_typicality(figures[t]) for t in TYPES if t in figures)
                    + f" | {_lm(hard, 'corpus_trigram')} / {_lm(hard, 'trigram')} | "
                    + " / ".join(_lm(figures[t], "corpus_trigram") for t in TYPES if t in figures) + " | "
                    + (f"{own['accuracy']:.3f} |" if own else "— |"))
    return "\n".join(rows)


def paper_table(reference: dict) -> str | None:
    """One row per reference set that audited the paper's own flips (object, color, count) with the same
    instruments: how far text alone goes on them, beside the hard flips' table (None where no set did)."""
    names = " / ".join(LEARNERS)
    rows = [f"| set | paper flips | {names} | object: {names} | color: {names} | count: {names} "
            "| context typicality, corpus / other folds | trigram PR, corpus / other folds |",
            "|---|---:|---|---|---|---|---|---|"]
    for record in reference["records"]:
        figures = record["audit"]["figures"]
        paper = figures.get(PAPER_BLOCK)
        if paper:
            rows.append(f"| {_label(record)} | {paper['pairs']:,} | {_learners(paper)} | "
                        + " | ".join(_learners(figures[t]) if t in figures else "—" for t in PAPER_TYPES)
                        + f" | {_typicality(paper)} | {_lm(paper, 'corpus_trigram')} / {_lm(paper, 'trigram')} |")
    return "\n".join(rows) if len(rows) > 2 else None


def compositional_table(compositional: dict) -> str:
    """The compositional families on a validated config: each held-out instrument, and whether the family meets the
    standard (every instrument within it) or is labelled as missing it."""
    families = compositional["families"]
    names = list(dict.fromkeys(name for f in families.values() for name in f["figures"]))
    standard = compositional["standard"]
    rows = [f"| family ({compositional['config']} config) | flips | " + " | ".join(names) + " | verdict |",
            "|---|---:|" + "---|" * len(names) + "---|"]
    for family, f in sorted(families.items()):
        verdict = ("meets the standard" if f["meets_standard"] else
                   f"**misses the standard** (every instrument within {standard['min']}–{standard['per_type_max']})")
        rows.append(f"| {family} | {f['pairs']:,} | "
                    + " | ".join(f"{f['figures'][n]:.3f}" if f["figures"].get(n) is not None else "—" for n in names)
                    + f" | {verdict} |")
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
    judged, validated = reference.get("judged"), reference.get("judged_validated")
    judged_text = "" if not judged else (
        f"\n\nJudged blind on a sealed draw of {judged['drawn']} hard flips (drawn after the rules froze, "
        f"{_verdicts(judged)}." + ("" if not validated else
        f" On a sealed draw of {validated['drawn']} hard flips of the `validated` config of the Karpathy-only build "
        "(every hard flip of that build judged by two blind judges, and kept only when every judge labelled it valid; "
        f"{_verdicts(validated)}."))
    return ("## Held out: how far text alone goes on instruments the build never used\n\n"
            "The headline figures for the hard flips. Learners of two classes (word, character and context logistic "
            "regressions, naive Bayes on word 1-2-grams; the context learner pairs each changed word with each word both "
            "texts share), each the mean over 5 random image partitions drawn at audit time; context typicality (the "
            "share of flips whose caption's own words co-occur more typically with the words both texts share, in "
            "whole captions of other images); and trigram LMs trained on the captions of other images (of a corpus outside the build, "
            "each row scored by the half of it no build counts for that row, and of the build's other folds); 0.5 "
            "is chance and a figure "
            f"below it is an artifact too. Measured on the reference builds (hard families "
            f"{reference['hard_families_version']}, lgip {reference['lgip_version']}, commit {reference['git_hash']}, "
            f"{reference['machine']}) by `python benchmarks/held_out_audit.py`; the last column is in-sample, for "
            f"comparison only; the val2017 subsets of the scaling check are docs/hard_flips.md's.{note}\n\n"
            + table({**reference, "records": [r for r in reference["records"] if not r["set"].startswith(SUBSET)]})
            + _paper_text(reference) + judged_text
            + _compositional_text(reference))


def _verdicts(judged: dict) -> str:
    """A sealed draw's seed, judges and majority shares, for the card."""
    shares = judged["shares"]
    kappa = (f"pairwise Cohen's kappa {judged['kappa_min']:.2f}–{judged['kappa_max']:.2f}"
             if judged.get("kappa_min") is not None else
             f"the judges gave the same label to {judged['same_label']:.0%} of the flips, so Cohen's kappa is undefined")
    return (f"seed {judged['seed']}; {judged['judges']} independent judges, type and original hidden; {kappa}): "
            f"{shares['linguistically invalid']:.1%} "
            f"linguistically invalid, {shares['absurd']:.1%} absurd, {shares['not a contradiction']:.1%} not a "
            "contradiction (majority label)")


def _paper_text(reference: dict) -> str:
    """The paper's own flips under the same instruments on the first reference set that audited them (the table of
    every set is docs/hard_flips.md's)."""
    record = next((r for r in reference["records"] if PAPER_BLOCK in r["audit"]["figures"]), None)
    if record is None:
        return ""
    paper = record["audit"]["figures"][PAPER_BLOCK]
    return (f"\n\nThe paper's own flips, under the same held-out instruments on {_label(record)} ({paper['pairs']:,} "
            f"flips): {' / '.join(LEARNERS)} {_learners(paper)}; context typicality, corpus / other folds "
            f"{_typicality(paper)}; trigram PR, corpus / other folds {_lm(paper, 'corpus_trigram')} / "
            f"{_lm(paper, 'trigram')}: text alone goes far where the flip was not chosen against it, so a model's PR "
            "there partly measures its text tower (every set: the lgip repository's docs/hard_flips.md).")


def _compositional_text(reference: dict) -> str:
    """The compositional families' held-out figures, each labelled clean or not, where the reference has them."""
    compositional = reference.get("compositional")
    if not compositional:
        return ""
    return ("\n\nThe compositional families (hard_relation, spatial, binding), on the validated config of "
            f"{compositional['set']}: a family that misses the standard is not reported beside the clean ones, "
            "since text alone tells its flips apart and a model's PR there partly measures its text tower's prior.\n\n"
            + compositional_table(compositional))
