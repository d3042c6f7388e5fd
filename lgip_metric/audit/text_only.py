"""The text-only scorers of the audit: the cross-fitted learned adversaries, the n-gram LMs' PR per type
and block, and the words the negatives remove or add most unevenly."""
from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pandas as pd

from lgip_dataset.errors import DataError
from lgip_dataset.selection import adversary, measurable
from lgip_metric import stats
from lgip_metric.audit import held_out
from lgip_metric.audit.blocks import blocks
from lgip_metric.audit.sources import caption_ids, flip_rows
from lgip_metric.statistics import blind

MIN_USES = 20  # a word's uses (as removed or added) before it is listed among the artifacts
TOP_WORDS = 10
NGRAM_SCORERS = {"bigram": "bigram KN LM, the build's own two image folds (in-sample)",
                 "trigram": "trigram KN LM on other images' captions (held out: fresh partition)",
                 "corpus_trigram": "trigram KN LM on a corpus of other images (held out)"}
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def check_learners(learners) -> tuple[str, ...]:
    """The learner names, checked against the held-out learners (a DataError naming the unknown one)."""
    learners = tuple(learners)
    unknown = [name for name in learners if name not in held_out.LEARNERS]
    if unknown or not learners:
        raise DataError(f"--learners {','.join(learners)}: unknown learner {unknown[0] if unknown else '(none)'!r}; "
                        f"choose from {','.join(held_out.LEARNERS)}")
    return learners


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


def audit(pairs: pd.DataFrame, *, learners=held_out.LEARNERS, folds: int = held_out.FOLDS,
          repeats: int = held_out.REPEATS, bootstrap: int = 1000, seed: int = 0, ngram: bool = True, types=None,
          confidence: float = 0.95, progress: bool = False, where: str = "pairs", corpus: tuple | None = None) -> dict:
    """The text-only scorers' figures on the flip rows of ``pairs`` (see the module docstring).

    ``pairs``: columns ``image_id``, ``caption``, ``variant``, ``type`` (``caption_id``, ``row_id``,
    ``kind``, ``original``, ``replacement`` when present; only flip rows are audited, the n-gram LMs
    learn every caption of ``pairs``). Held out (:mod:`lgip_metric.audit.held_out`): each learner's accuracy
    over ``repeats`` fresh image partitions into ``folds`` folds (``accuracy``: the mean, ``range``: min and
    max, ``draws``), the trigram LM trained on the other folds' captions of the first partition (``trigram``)
    and, with ``corpus`` (captions, description; :func:`held_out.corpus_captions`), one trained on a corpus of
    other images (``corpus_trigram``). In-sample: the bigram LM cross-fitted on the two image folds that a
    build's own LM uses (``bigram``). Returns ``{"pairs", "images", "types", "blocks", "per_type",
    "artifacts", "settings"}``; a figure that is a PR has ``PR`` and ``interval``.
    """
    learners = check_learners(learners)
    try:
        stats.check_options(bootstrap, confidence)
    except stats.LGIPInputError as err:
        raise DataError(f"--bootstrap: {err}") from None
    rows = flip_rows(pairs, types=types, where=where)
    type_of = rows["type"].to_numpy().astype(str)
    groups = blocks(type_of)
    present = sorted({str(t) for t in type_of})
    named = {**groups, **{t: [t] for t in present}}
    entries = {name: _counts(rows, type_of, members) for name, members in named.items()}
    interval = dict(bootstrap=bootstrap, seed=seed, confidence=confidence)
    train = pairs.assign(caption_id=caption_ids(pairs, where)) if "caption_id" in pairs else rows
    reasons = measurable.reasons(type_of, rows["image_id"].to_numpy(), list(named.items()), folds, train["image_id"])
    bar = _bar(len(learners) * repeats, progress)
    bar.set_description("learners on fresh partitions")
    figures = held_out.learner_figures(rows, named, learners=learners, seed=seed, repeats=repeats, folds=folds,
                                       progress=bar.update)
    bar.close()
    for name, by_learner in figures.items():
        reason = reasons[name]["learner"]
        entries[name]["learners"] = {k: measurable.figure("accuracy", v["mean"], None, reason) if reason else
                                     {"accuracy": v["mean"], "range": [v["min"], v["max"]], "draws": v["draws"]}
                                     for k, v in by_learner.items()}
    context_train = train[["image_id", "caption_id", "caption"]]
    typical = held_out.typicality_figures(rows, context_train, named, seed=seed, repeats=repeats, folds=folds)
    corpus_margins = held_out.corpus_typicality_margins(rows, corpus[0]) if corpus is not None else None
    if corpus is not None:
        corpus_images = [image for image, _ in corpus[0]]
        for name, members in named.items():
            mask = np.isin(type_of, members)
            reasons[name]["corpus"] = measurable.corpus_reason(rows["image_id"].to_numpy()[mask], corpus_images)
    for name, members in named.items():
        reason = reasons[name]["lm"]
        v = typical[name]
        entries[name]["typicality"] = (measurable.figure("accuracy", v["mean"], None, reason) if reason else
                                       {"accuracy": v["mean"], "range": [v["min"], v["max"]], "draws": v["draws"]})
        if corpus_margins is not None:
            mask = np.isin(type_of, members)
            entries[name]["corpus_typicality"] = measurable.figure(
                "accuracy", adversary.held_out_accuracy(corpus_margins[mask]),
                adversary.accuracy_interval(corpus_margins[mask], rows["image_id"].to_numpy()[mask], bootstrap=bootstrap,
                                            seed=seed, confidence=confidence), reasons[name]["corpus"])
    if ngram:
        train = context_train
        scored = {"bigram": blind.lm_scores(rows, blind.BigramKN, train=train)}
        fold = held_out.partitions(pd.concat([rows["image_id"], train["image_id"]]).to_numpy(), seed=seed, repeats=1,
                                   folds=folds)[0]
        scored["trigram"] = held_out.fresh_lm_scores(rows, train, fold[:len(rows)], fold[len(rows):], folds)
        if corpus is not None:
            scored["corpus_trigram"] = held_out.corpus_lm_scores(rows, corpus[0])
        for key, (original, variant) in scored.items():
            for name, block in positive_rates(rows, original, variant, groups, **interval).items():
                reason = reasons[name]["corpus" if key == "corpus_trigram" else "lm"]
                entries[name][key] = measurable.figure("PR", block["PR"], block["interval"], reason)
    return {
        "pairs": len(rows), "images": int(rows["image_id"].nunique()), "types": present,
        "blocks": {name: {"types": members, **entries[name]} for name, members in groups.items()},
        "per_type": {t: entries[t] for t in present},
        "artifacts": word_artifacts(rows),
        "warnings": measurable.few_images_warning({n: e["images"] for n, e in entries.items()}, where),
        "settings": {"learners": list(learners), "folds": folds, "repeats": repeats, "bootstrap": bootstrap,
                     "seed": seed, "confidence": confidence, "ngram": ngram, "learner_settings": adversary.describe(),
                     "held_out": held_out.describe(), "min_uses": MIN_USES,
                     **({"corpus": corpus[1]} if corpus is not None else {})},
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


def scaling(rows: pd.DataFrame, sizes, *, learners=held_out.LEARNERS, repeats: int = held_out.REPEATS,
            seed: int = 0) -> list[dict]:
    """:func:`held_out.scaling` of the flip ``rows`` over their headline blocks (per type too)."""
    type_of = rows["type"].to_numpy().astype(str)
    groups = {**blocks(type_of), **{t: [t] for t in sorted(set(type_of))}}
    return held_out.scaling(rows, groups, sizes, learners=check_learners(learners), seed=seed, repeats=repeats)
