"""The text-only scorers of the audit: the cross-fitted learned adversaries, the n-gram LMs' PR per type
and block, and the words the negatives remove or add most unevenly."""
from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pandas as pd

from lgip_dataset import adversary, measurable
from lgip_dataset.errors import DataError
from lgip_metric import stats
from lgip_metric.audit.sources import caption_ids, flip_rows
from lgip_metric.statistics import blind

PAPER_BLOCK, HARD_BLOCK, ALL_BLOCK = "paper flips", "hard flips", "all flips"
MIN_USES = 20  # a word's uses (as removed or added) before it is listed among the artifacts
TOP_WORDS = 10
NGRAM_SCORERS = {"bigram": (blind.BigramKN, "bigram KN LM"), "trigram": (blind.TrigramKN, "trigram KN LM")}
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def check_learners(learners) -> tuple[str, ...]:
    learners = tuple(learners)
    unknown = [name for name in learners if name not in adversary.LEARNERS]
    if unknown or not learners:
        raise DataError(f"--learners {','.join(learners)}: unknown learner {unknown[0] if unknown else '(none)'!r}; "
                        f"choose from {','.join(adversary.LEARNERS)}")
    return learners


def blocks(types) -> dict[str, list[str]]:
    """The headline blocks present among ``types``: the paper's flips, the hard flips, and all flips
    (unless those are one type, or exactly one of the other blocks)."""
    present = {str(t) for t in types}
    paper = [t for t in stats.CORE_TYPES if t in present and stats.DECLARED_TYPES[t] == stats.FLIP]
    hard = [t for t in stats.HARD_TYPES if t in present]
    named = {**({PAPER_BLOCK: paper} if paper else {}), **({HARD_BLOCK: hard} if hard else {})}
    every = sorted(present)
    same = len(every) == 1 or any(sorted(members) == every for members in named.values())
    return {**named, **({} if same else {ALL_BLOCK: every})}


def positive_rates(rows: pd.DataFrame, original, variant, groups: dict[str, list[str]], *, bootstrap: int,
                   seed: int, confidence: float = 0.95) -> dict[str, dict]:
    """PR (nested by caption, as the statistics nest it) of a scorer's ``original``/``variant`` scores of
    flip ``rows``, per type and per block of ``groups``: ``{name: {"PR", "interval", "counts"}}``."""
    options = dict(bootstrap=bootstrap, seed=seed, confidence=confidence, require_both_kinds=False)
    extra = sorted(set(rows["type"]) - set(stats.DECLARED_TYPES))
    out = dict(blind.positive_rates(rows, original, variant, extra_types=extra, **options)["per_type"])
    original, variant = np.asarray(original), np.asarray(variant)
    for name, members in groups.items():
        mask = rows["type"].isin(members).to_numpy()
        block = rows.loc[mask].assign(type=name)
        out[name] = blind.positive_rates(block, original[mask], variant[mask], extra_types=[name], **options)["headline"]
    return out


def audit(pairs: pd.DataFrame, *, learners=("word", "char"), folds: int = adversary.FOLDS, bootstrap: int = 1000,
          seed: int = 0, ngram: bool = True, types=None, confidence: float = 0.95, progress: bool = False,
          where: str = "pairs") -> dict:
    """The text-only scorers' figures on the flip rows of ``pairs`` (see the module docstring).

    ``pairs``: columns ``image_id``, ``caption``, ``variant``, ``type`` (``caption_id``, ``row_id``,
    ``kind``, ``original``, ``replacement`` when present; only flip rows are audited, the n-gram LMs
    learn every caption of ``pairs``). Returns ``{"pairs", "images", "types", "blocks", "per_type",
    "artifacts", "settings"}``; a block or type entry has ``pairs``, ``images``, ``learners`` (per learner
    ``accuracy`` and ``interval``) and, with ``ngram``, ``bigram``/``trigram`` (``PR``, ``interval``).
    """
    learners = check_learners(learners)
    try:
        stats.check_options(bootstrap, confidence)
    except stats.LGIPInputError as err:
        raise DataError(f"--bootstrap: {err}") from None
    rows = flip_rows(pairs, types=types, where=where)
    type_of, image_ids = rows["type"].to_numpy().astype(str), rows["image_id"].to_numpy()
    groups = blocks(type_of)
    present = sorted({str(t) for t in type_of})
    entries = {name: _counts(rows, type_of, members) for name, members in groups.items()}
    entries.update({t: _counts(rows, type_of, [t]) for t in present})
    interval = dict(bootstrap=bootstrap, seed=seed, confidence=confidence)
    train = pairs.assign(caption_id=caption_ids(pairs, where)) if "caption_id" in pairs else rows
    reasons = measurable.reasons(type_of, image_ids, [*groups.items(), *((t, [t]) for t in present)], folds, train["image_id"])
    bar = _bar(len(learners) * len(present) * folds, progress)
    for learner in learners:
        bar.set_description(f"{learner} learner, folds")
        margins = adversary.out_of_fold_margins(rows["caption"].tolist(), rows["variant"].tolist(), image_ids,
                                                types=type_of, learner=learner, folds=folds, progress=bar.update)
        for name, members in [*groups.items(), *((t, [t]) for t in present)]:
            mask = np.isin(type_of, members)
            block = blind.accuracy_block(margins[mask], image_ids[mask], **interval)
            entries[name].setdefault("learners", {})[learner] = measurable.figure(
                "accuracy", block["accuracy"], block["interval"], reasons[name]["learner"])
    bar.close()
    if ngram:
        for key, (model, _) in NGRAM_SCORERS.items():
            original, variant = blind.lm_scores(rows, model, train=train[["image_id", "caption_id", "caption"]])
            for name, block in positive_rates(rows, original, variant, groups, **interval).items():
                entries[name][key] = measurable.figure("PR", block["PR"], block["interval"], reasons[name]["lm"])
    return {
        "pairs": len(rows), "images": int(rows["image_id"].nunique()), "types": present,
        "blocks": {name: {"types": members, **entries[name]} for name, members in groups.items()},
        "per_type": {t: entries[t] for t in present},
        "artifacts": word_artifacts(rows),
        "warnings": measurable.few_images_warning({n: e["images"] for n, e in entries.items()}, where),
        "settings": {"learners": list(learners), "folds": folds, "bootstrap": bootstrap, "seed": seed,
                     "confidence": confidence, "ngram": ngram, "learner_settings": adversary.describe(),
                     "min_uses": MIN_USES},
    }


def _counts(rows: pd.DataFrame, type_of: np.ndarray, members: list[str]) -> dict:
    mask = np.isin(type_of, members)
    return {"pairs": int(mask.sum()), "images": int(rows.loc[mask, "image_id"].nunique())}


def _bar(total: int, show: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="fold", disable=not show, leave=False)


def _words(text) -> list[str]:
    return _WORD.findall(text.lower()) if isinstance(text, str) else []


def word_artifacts(rows: pd.DataFrame, *, min_uses: int = MIN_USES, top: int = TOP_WORDS) -> dict[str, list[dict]]:
    """Per type, the lower-cased words used at least ``min_uses`` times on either side of an edit, by how
    unevenly: ``original`` (times removed: in the caption, not matched in the negative) and ``replacement``
    (times inserted), ``imbalance`` = (original - replacement) / uses, sorted by |imbalance| then uses. The
    edited words are the word difference of the two texts, what a text-only learner sees (the replaced word
    with its agreement edits: "A dog is" -> "Two dogs are" removes "a", "dog", "is")."""
    out = {}
    for type_ in sorted(set(rows["type"])):
        mask = (rows["type"] == type_).to_numpy()
        removed, added = Counter(), Counter()
        for caption, variant in zip(rows["caption"][mask], rows["variant"][mask]):
            before, after = Counter(_words(caption)), Counter(_words(variant))
            removed.update(before - after)
            added.update(after - before)
        listed = []
        for word in removed.keys() | added.keys():
            uses = removed[word] + added[word]
            if uses >= min_uses:
                listed.append({"word": word, "original": removed[word], "replacement": added[word], "uses": uses,
                               "imbalance": (removed[word] - added[word]) / uses})
        listed.sort(key=lambda w: (-abs(w["imbalance"]), -w["uses"], w["word"]))
        out[type_] = listed[:top]
    return out
