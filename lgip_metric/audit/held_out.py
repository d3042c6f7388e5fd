"""The audit's held-out instruments: text-only scorers that no build ever uses, on partitions no build draws.

A probe set balanced against its own instruments reads chance on them by construction; what it shows to a
scorer it was never tuned on is the figure that counts. So the audit judges the flips with:

- **learners on fresh image partitions**: the word and character n-gram logistic regressions of
  :mod:`lgip_dataset.selection.adversary`, and a learner of another class, multinomial naive Bayes on the word
  1-2-gram counts (``nb``: trained on the captions as one class and the flips as the other, its margin the
  log-likelihood ratio of the caption minus that of the flip), each cross-fitted over ``REPEATS`` random
  partitions of the images into ``FOLDS`` folds drawn at audit time from the audit's own stream
  (:data:`STREAM`; a build draws from another), one learner per type; reported as the mean and the range
  over the draws;
- **a Kneser-Ney trigram on captions of other images**: cross-fitted over the same fresh partitions (trained
  on the captions of the other folds' images) and, with a caption corpus (:func:`corpus_captions`), one trained
  on the corpus's captions of images outside the audited set, per row only on those of its image's statistics
  fold: a build chooses a caption's flips with the other fold's counts, so no build counted them for that row.
  A build's own LMs are a bigram and a trigram on its statistics' folds.

Blocks pool their types' margins, as the in-sample figures do.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from lgip_dataset.errors import DataError
from lgip_dataset.selection import adversary, context_typicality as context
from lgip_metric.statistics import blind

LEARNERS = ("word", "char", "nb", "context")
FOLDS = 5
REPEATS = 5
STREAM = 0x61756474  # the audit's partitions: numpy.random.default_rng([STREAM, seed, draw])
NB_ALPHA = 1.0
NB_FEATURES = "word"  # naive Bayes reads the word 1-2-gram counts


def describe() -> dict:
    """The held-out instruments' settings, for provenance records."""
    return {"folds": FOLDS, "repeats": REPEATS, "partition_stream": STREAM,
            "partitions": "each draw a random partition of the distinct image ids (sorted text order, then "
                          "numpy.random.default_rng([stream, seed, draw]).permutation) into near-equal folds",
            "learners": {"word": "logistic regression on word 1-2-grams (lgip_dataset.selection.adversary)",
                         "char": "logistic regression on character 2-4-grams (lgip_dataset.selection.adversary)",
                         "nb": f"sklearn MultinomialNB(alpha={NB_ALPHA}) on word 1-2-gram counts, captions one class "
                               "and flips the other; margin = log-likelihood ratio of caption minus flip",
                         "context": context.describe()["context_learner"]},
            "typicality": context.describe()["typicality"],
            "lm": "trigram Kneser-Ney (lgip_dataset.ngram), trained on the captions of the other folds' "
                  "images, and on a corpus's captions of images outside the audited set when one is given (each row by "
                  "those of its own image's statistics fold, which no build counts for it)"}


def partitions(image_ids, *, seed: int = 0, repeats: int = REPEATS, folds: int = FOLDS) -> list[np.ndarray]:
    """The audit's ``repeats`` fresh partitions of ``image_ids`` into ``folds`` folds (one array of folds per draw)."""
    return [adversary.random_folds(image_ids, folds, (STREAM, seed, draw)) for draw in range(repeats)]


def _nb_margins(counts: tuple, fold: np.ndarray, groups: np.ndarray, folds: int) -> np.ndarray:
    """Each pair's naive Bayes margin from the model trained on its group's pairs of the other folds."""
    import scipy.sparse as sp
    from sklearn.naive_bayes import MultinomialNB

    first, second = counts
    margins = np.zeros(len(fold))
    if first is None:
        return margins
    for group in np.unique(groups):
        in_group = groups == group
        for f in range(folds):
            test, train = np.flatnonzero(in_group & (fold == f)), np.flatnonzero(in_group & (fold != f))
            if not len(test) or not len(train):
                continue
            vocabulary = np.flatnonzero(np.asarray((first[train] + second[train]).sum(axis=0)).ravel() > 0)
            if not len(vocabulary):
                continue
            model = MultinomialNB(alpha=NB_ALPHA).fit(
                sp.vstack([first[train][:, vocabulary], second[train][:, vocabulary]]).tocsr(),
                np.r_[np.ones(len(train)), np.zeros(len(train))])
            weights = model.feature_log_prob_[1] - model.feature_log_prob_[0]  # classes_ are [0, 1]
            margins[test] = np.asarray((first[test] - second[test])[:, vocabulary] @ weights).ravel()
    return margins


class Learners:
    """The held-out learners of one set of flip rows: features computed once, margins per (learner, draw)."""

    def __init__(self, captions: list[str], variants: list[str], types: np.ndarray, image_ids: np.ndarray):
        self.captions, self.variants = captions, variants
        self.groups = np.unique(np.asarray(types, dtype=str), return_inverse=True)[1]
        self.image_ids = image_ids
        self._features: dict[str, tuple] = {}
        self._context: context.Pairs | None = None

    @property
    def context(self) -> context.Pairs:
        """The pairs' changed and context words (:mod:`lgip_dataset.selection.context_typicality`), split once."""
        if self._context is None:
            self._context = context.Pairs(self.captions, self.variants)
        return self._context

    def _of(self, learner: str) -> tuple:
        key = NB_FEATURES + ":counts" if learner == "nb" else learner
        if key not in self._features:
            if learner == "nb":
                self._features[key] = adversary.pair_counts(self.captions, self.variants, NB_FEATURES)
            elif learner == "context":
                self._features[key] = self.context.learner_features()
            else:
                self._features[key] = adversary.pair_features(self.captions, self.variants, learner)
        return self._features[key]

    def margins(self, learner: str, fold: np.ndarray, folds: int = FOLDS) -> np.ndarray:
        """Every pair's margin (> 0: the learner picks the caption) from learners of the other folds of ``fold``."""
        if learner == "nb":
            return _nb_margins(self._of(learner), fold, self.groups, folds)
        if learner not in (*adversary.LEARNERS, "context"):
            raise DataError(f"unknown held-out learner {learner!r}: one of {', '.join(LEARNERS)}")
        return adversary.fold_margins(self._of(learner), fold, self.groups, folds=folds)


def spread(values) -> dict:
    """Mean, min and max of per-draw figures (nan-free; None when there are none)."""
    values = [float(v) for v in values if v is not None and np.isfinite(v)]
    if not values:
        return {"mean": None, "min": None, "max": None, "draws": []}
    return {"mean": float(np.mean(values)), "min": min(values), "max": max(values), "draws": values}


def learner_figures(rows: pd.DataFrame, groups: dict[str, list[str]], *, learners=LEARNERS, seed: int = 0,
                    repeats: int = REPEATS, folds: int = FOLDS, progress=None) -> dict[str, dict[str, dict]]:
    """Held-out accuracy of each learner per block and type of ``groups`` (``{name: members}``), over the audit's
    fresh partitions: ``{name: {learner: spread}}``. ``progress`` is called once per (learner, draw)."""
    type_of, image_ids = rows["type"].to_numpy().astype(str), rows["image_id"].to_numpy()
    scorer = Learners(rows["caption"].astype(str).tolist(), rows["variant"].astype(str).tolist(), type_of, image_ids)
    masks = {name: np.isin(type_of, members) for name, members in groups.items()}
    draws: dict[str, dict[str, list]] = {name: {learner: [] for learner in learners} for name in groups}
    for fold in partitions(image_ids, seed=seed, repeats=repeats, folds=folds):
        for learner in learners:
            margins = scorer.margins(learner, fold, folds)
            for name, mask in masks.items():
                draws[name][learner].append(adversary.held_out_accuracy(margins[mask]))
            if progress is not None:
                progress()
    return {name: {learner: spread(values) for learner, values in by_learner.items()} for name, by_learner in draws.items()}


def typicality_figures(rows: pd.DataFrame, train: pd.DataFrame, groups: dict[str, list[str]], *, seed: int = 0,
                       repeats: int = REPEATS, folds: int = FOLDS) -> dict[str, dict]:
    """Context typicality (:mod:`lgip_dataset.selection.context_typicality`) per block and type of ``groups`` over the
    audit's fresh partitions: each row's margin from the co-occurrence in the captions (``train``: ``image_id``,
    ``caption_id``, ``caption``) of the other folds' images; ``{name: spread}`` of the share where the caption's words
    are the more typical (a tie 1/2)."""
    pairs = context.Pairs(rows["caption"].astype(str).tolist(), rows["variant"].astype(str).tolist())
    train = train.drop_duplicates("caption_id")
    type_of = rows["type"].to_numpy().astype(str)
    masks = {name: np.isin(type_of, members) for name, members in groups.items()}
    draws: dict[str, list] = {name: [] for name in groups}
    for fold in partitions(pd.concat([rows["image_id"], train["image_id"]]).to_numpy(), seed=seed, repeats=repeats,
                           folds=folds):
        row_fold, train_fold = fold[:len(rows)], fold[len(rows):]
        margins = np.zeros(len(rows))
        for f in range(folds):
            scored = np.flatnonzero(row_fold == f)
            if len(scored):
                margins[scored] = pairs.typicality_margins(train["caption"][train_fold != f].astype(str).tolist(), scored)
        for name, mask in masks.items():
            draws[name].append(adversary.held_out_accuracy(margins[mask]))
    return {name: spread(values) for name, values in draws.items()}


def corpus_typicality_margins(rows: pd.DataFrame, corpus: list[tuple[object, str]]) -> np.ndarray:
    """Every row's context typicality margin from the co-occurrence in the ``corpus`` captions (``(image id, text)``)
    of the row's own statistics fold, which no build counts for it (as :func:`corpus_lm_scores`)."""
    from lgip_dataset.ngram import FOLDS as STATISTICS_FOLDS
    from lgip_dataset.ngram import image_fold

    pairs = context.Pairs(rows["caption"].astype(str).tolist(), rows["variant"].astype(str).tolist())
    row_fold = np.array([image_fold(i) for i in rows["image_id"]], dtype=np.int64)
    corpus_fold = np.array([image_fold(i) for i, _ in corpus], dtype=np.int64)
    margins = np.zeros(len(rows))
    for f in range(STATISTICS_FOLDS):
        scored = np.flatnonzero(row_fold == f)
        if len(scored):
            margins[scored] = pairs.typicality_margins([t for (_, t), k in zip(corpus, corpus_fold) if k == f], scored)
    return margins


def fresh_lm_scores(rows: pd.DataFrame, train: pd.DataFrame, fold_of_rows: np.ndarray, fold_of_train: np.ndarray,
                    folds: int) -> tuple[np.ndarray, np.ndarray]:
    """Trigram log-probabilities of every row's caption and variant, each from the model trained on the captions
    (``train``: ``caption_id``, ``caption``) of the other folds' images."""
    from lgip_dataset.ngram import TrigramKN

    original, variant = np.zeros(len(rows)), np.zeros(len(rows))
    for f in range(folds):
        scored = fold_of_rows == f
        if not scored.any():
            continue
        lm = TrigramKN().fit(train.loc[fold_of_train != f].drop_duplicates("caption_id")["caption"].tolist())
        blind.score_rows(lm, rows, original, variant, scored)
    return original, variant


def corpus_lm_scores(rows: pd.DataFrame, corpus: list[tuple[object, str]]) -> tuple[np.ndarray, np.ndarray]:
    """Trigram log-probabilities of every row's caption and variant from a model trained on the ``corpus`` captions
    (``(image id, text)``) of the row's own statistics fold (:func:`lgip_dataset.ngram.image_fold`): a build chooses
    the flips of an image's captions with the counts of the *other* fold only (the shipped table's and its own),
    so this half of the corpus is one no build counted for the rows it scores, whatever the corpus."""
    from lgip_dataset.ngram import FOLDS as STATISTICS_FOLDS
    from lgip_dataset.ngram import TrigramKN, image_fold

    row_fold = np.array([image_fold(i) for i in rows["image_id"]], dtype=np.int64)
    corpus_fold = np.array([image_fold(i) for i, _ in corpus], dtype=np.int64)
    original, variant = np.zeros(len(rows)), np.zeros(len(rows))
    for f in range(STATISTICS_FOLDS):
        if (row_fold == f).any():
            lm = TrigramKN().fit([text for (_, text), k in zip(corpus, corpus_fold) if k == f])
            blind.score_rows(lm, rows, original, variant, row_fold == f)
    return original, variant


def corpus_captions(path: str | Path, audited_images, audited_captions) -> tuple[list[tuple[object, str]], dict]:
    """The captions (``(image id, text)``) of a COCO or Karpathy captions file whose images are outside the audited
    set (and whose text is none of the audited captions), and what was kept and left out. A DataError names the
    file when it holds no such caption."""
    from lgip_dataset.sources.coco import read_captions
    from lgip_dataset.sources.skips import SkipLog

    entries = read_captions(path, SkipLog())
    images = {str(i) for i in audited_images}
    texts = {str(t) for t in audited_captions}
    kept, same_image, same_text = [], 0, 0
    for entry in entries:
        if str(entry.image_id) in images:
            same_image += len(entry.captions)
            continue
        for caption in entry.captions:
            if caption.text in texts:
                same_text += 1
            else:
                kept.append((entry.image_id, caption.text))
    if not kept:
        raise DataError(f"--lm-corpus {path}: none of its captions is of an image outside the audited set; pass "
                        "captions of other images")
    return kept, {"file": Path(path).name, "captions": len(kept),
                  "images": sum(1 for e in entries if str(e.image_id) not in images),
                  "left_out_audited_images": same_image, "left_out_audited_texts": same_text,
                  "scored_by": "each row by the corpus captions of its own image's statistics fold (half the corpus), "
                               "which no build counts for it"}


def scaling(rows: pd.DataFrame, groups: dict[str, list[str]], sizes, *, learners=LEARNERS, seed: int = 0,
            repeats: int = REPEATS, folds: int = FOLDS) -> list[dict]:
    """The held-out learners' mean accuracy per block and type of ``groups`` on nested random image subsets of
    about each of ``sizes`` captions (the images in one seeded order, taken until the size is reached) and on
    all of ``rows``: ``[{"captions", "images", "pairs", "figures": {name: {learner: mean}}, "not_measurable":
    {name: reason}}]`` by size. A figure the audit's rule (:mod:`lgip_dataset.selection.measurable`) finds not
    measurable on a subset (fewer than 10 images, a type in one image fold) is None, its reason in
    ``not_measurable``. A size at or above the whole set is left out (the last entry is the whole set)."""
    from lgip_dataset.selection import measurable

    captions = rows.groupby(rows["image_id"].astype(str))["caption_id" if "caption_id" in rows else "caption"].nunique()
    order = captions.index.to_numpy()[np.argsort(adversary.random_folds(captions.index, len(captions),
                                                                        (STREAM, seed, 1 << 20)), kind="stable")]
    running = np.cumsum(captions.loc[order].to_numpy())
    out = []
    for size in [*(s for s in sorted(sizes) if s < running[-1]), int(running[-1])]:
        images = set(order[:int(np.searchsorted(running, size)) + 1])
        subset = rows.loc[rows["image_id"].astype(str).isin(images).to_numpy()]
        figures = learner_figures(subset, groups, learners=learners, seed=seed, repeats=repeats, folds=folds)
        type_of = subset["type"].to_numpy().astype(str)
        reasons = {}
        for name, members in groups.items():
            mask = np.isin(type_of, members)
            reasons[name] = measurable.learner_reason(subset["image_id"].to_numpy()[mask], type_of[mask], folds)
        out.append({"captions": int(captions.loc[list(images)].sum()), "images": len(images), "pairs": len(subset),
                    "figures": {name: {k: None if reasons[name] else v["mean"] for k, v in by.items()}
                                for name, by in figures.items()},
                    "not_measurable": {name: reason for name, reason in reasons.items() if reason}})
    return out
