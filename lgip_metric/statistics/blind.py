"""Blind baselines (SugarCrepe's lesson): how far text alone goes on the flips.

(a) Text-only plausibility scorers: the bigram Kneser-Ney model of :mod:`lgip_dataset.ngram` (``lm``)
    and, as a check the hard flips were not selected against, the trigram of
    :mod:`lgip_dataset.ngram` (``trigram``), each
    trained on the evaluated dataset's own human captions and **cross-fitted by image**: images
    fall in two folds by a stable hash of their id, the model trained on one fold's captions
    scores the rows of the other fold's images, so no caption is scored by a model that saw it.
    Their blind positive rate per flip type (and over the hard flips) has PR's nesting:
    mean over base pairs of the mean over flips of 1[LM(c) > LM(c†)] (a tie is not positive).
(b) The model's own text-only similarity ``t_sim`` = cos(f_text(c), f_text(c†)) (a column of the
    score file): its mean per type and the share above ``COLLAPSE`` (text-encoder collapse,
    ControlledImCaps).
(c) A learned text-only adversary (``adversary``; :mod:`lgip_dataset.selection.adversary`): a logistic
    regression on the word 1-2-gram difference of caption and flip, one per flip type, cross-fitted
    over five image folds; its held-out accuracy per type (pair-level: the share of flip rows where it
    picks the human caption, a tie counting 1/2) with an image-bootstrap interval. It finds what an
    n-gram LM's plausibility misses: a word that flips only ever remove or add.

``balance`` is SugarCrepe's adversarial refinement, seeded: per flip type, among the flips the LM
ranks below the original and those it ranks above (ties dropped), the larger group is subsampled
to the size of the smaller, so the blind scorer sits at chance (row-level 0.5) on what is kept.
"""
from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np
import pandas as pd

from lgip_dataset.ngram import FOLDS, BigramKN, image_fold
from lgip_dataset.selection import adversary
from lgip_metric import stats
from lgip_metric.statistics import score_table
from lgip_dataset.ngram import TrigramKN

COLLAPSE = 0.99
LM_DESCRIPTION = (
    "bigram language model, interpolated Kneser-Ney (d=0.75), implemented in lgip_dataset.ngram; trained on the "
    "evaluated dataset's own human captions, cross-fitted by image (2 folds by SHA-256 of image_id: the model of "
    "one fold scores the rows of the other fold's images)"
)
TRIGRAM_DESCRIPTION = (
    "trigram language model, interpolated Kneser-Ney (d=0.75), implemented in lgip_dataset.ngram; a second "
    "text-only scorer, not the one the hard flips were selected with; trained and cross-fitted as the bigram"
)

ADVERSARY_DESCRIPTION = (
    "learned text-only adversary (lgip_dataset.selection.adversary): logistic regression (no intercept, C=1, "
    "liblinear) on the {learner} n-gram count difference phi(caption) - phi(flip), trained on [x, -x] so orientation "
    "carries no prior, one per flip type, cross-fitted over {folds} image folds (SHA-256 of image_id); held-out "
    "accuracy: the share of flip rows where it picks the caption (a tie counts 1/2), pair-level, with an "
    "image-bootstrap interval"
)


def _stable_hash(values, salt: str = "") -> np.ndarray:
    """A 64-bit hash of each value's text, identical on every machine and run."""
    return np.array([int.from_bytes(hashlib.sha256(f"{salt}{v}".encode()).digest()[:8], "big") for v in values],
                    dtype=np.uint64)


def image_folds(image_ids) -> np.ndarray:
    """Cross-fitting fold (0 or 1) of each image id (:func:`lgip_dataset.ngram.image_fold`)."""
    codes, uniques = pd.factorize(pd.Series(np.asarray(image_ids)))
    return np.array([image_fold(i) for i in uniques], dtype=np.int64)[codes]  # each distinct id hashed once


LM_COLUMNS = ["image_id", "caption_id", "caption", "variant"]  # all that the text-only scores of a row depend on
ADVERSARY_COLUMNS = ["image_id", "type", "caption", "variant"]  # all that the learned adversary's margins depend on
_KEPT: OrderedDict = OrderedDict()  # (scorer, digest of the columns it reads) -> its scores; the last few only
KEPT = 6


def _kept(scorer: str, rows: pd.DataFrame, columns: list[str], compute):
    """``compute()``, or what it gave for the same ``scorer`` and the same ``columns`` of ``rows`` before in this
    process (the models of a sweep score the same rows: their text-only figures are the same for each)."""
    key = (scorer, hashlib.sha256(pd.util.hash_pandas_object(rows[columns], index=False).to_numpy().tobytes()).hexdigest())
    if key not in _KEPT:
        _KEPT[key] = compute()
        while len(_KEPT) > KEPT:
            _KEPT.popitem(last=False)
    _KEPT.move_to_end(key)
    return _KEPT[key]


def lm_scores(rows: pd.DataFrame, model=BigramKN, train: pd.DataFrame | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Cross-fitted LM log-probabilities of every row's caption and variant.

    ``rows`` needs ``image_id``, ``caption_id``, ``caption`` and ``variant``; ``model`` is the LM
    class (anything with ``fit(sentences)`` and ``logprob(sentence)``). The LMs learn the captions of
    ``train`` (``image_id``, ``caption_id``, ``caption``; default ``rows``), each fold's from its images.
    Without ``train``, the scores of rows already scored by the same LM in this process are read back (the
    models of a sweep score the same rows: the text-only baselines are the same for each).
    """
    if train is not None:
        return _lm_scores(rows, model, train)
    original, variant = _kept(f"{model.__module__}.{model.__qualname__}", rows, LM_COLUMNS,
                              lambda: _lm_scores(rows, model, None))
    return original.copy(), variant.copy()


def _lm_scores(rows: pd.DataFrame, model, train: pd.DataFrame | None) -> tuple[np.ndarray, np.ndarray]:
    fold = image_folds(rows["image_id"].to_numpy())
    train_fold = fold if train is None else image_folds(train["image_id"].to_numpy())
    train = rows if train is None else train
    original = np.empty(len(rows))
    variant = np.empty(len(rows))
    for f in range(FOLDS):
        lm = model().fit(train.loc[train_fold == f].drop_duplicates("caption_id")["caption"].tolist())
        score_rows(lm, rows, original, variant, fold != f)
    return original, variant


def score_rows(lm, rows: pd.DataFrame, original: np.ndarray, variant: np.ndarray, where) -> None:
    """Fill ``original``/``variant`` at the rows of mask ``where`` with ``lm``'s log-probabilities of each row's
    caption and variant (each distinct text scored once)."""
    for out, column in ((original, "caption"), (variant, "variant")):
        codes, texts = pd.factorize(rows.loc[where, column])
        out[where] = np.array([lm.logprob(t) for t in texts])[codes]


def _pr_block(block: dict) -> dict:
    return {"PR": block["PR"], "interval": block.get("intervals", {}).get("PR"), "counts": block["counts"]["PR"]}


def positive_rates(rows: pd.DataFrame, original, variant, **options) -> dict:
    """PR of a scorer (any ``original``/``variant`` scores) on ``rows``: headline and per flip type."""
    result = score_table.statistics(rows, original, variant, **options)
    return {"headline": _pr_block(result), "headline_types": result["headline_types"][stats.FLIP],
            **({stats.HARD: _pr_block(result[stats.HARD])} if stats.HARD in result else {}),
            "per_type": {t: _pr_block(b) for t, b in result["per_type"].items() if b["kind"] == stats.FLIP}}


def balance(rows: pd.DataFrame, lm_original, lm_variant, seed: int = 0) -> tuple[np.ndarray, dict]:
    """Keep-mask of the balanced flip set (paraphrase rows always kept) and the counts per flip type.

    Per flip type, each base pair keeps one flip (LM ties dropped); then the larger of the groups
    "LM prefers the original" / "LM prefers the flip" is cut to the size of the smaller. With one
    flip per base pair the caption-nested blind PR equals the row rate: exactly 0.5 per type. Every
    choice takes the smallest seeded hash of ``row_id``, so it depends on the seed and the rows,
    not on their order.
    """
    keep = (rows["kind"] == stats.PARAPHRASE).to_numpy().copy()
    prefers_original = np.asarray(lm_original) > np.asarray(lm_variant)
    prefers_flip = np.asarray(lm_original) < np.asarray(lm_variant)
    rank = _stable_hash(rows["row_id"].to_numpy(), salt=f"{seed}:")
    counts = {}
    for type_ in sorted(set(rows.loc[rows["kind"] == stats.FLIP, "type"])):
        of_type = (rows["type"] == type_).to_numpy()
        decided = np.flatnonzero(of_type & (prefers_original | prefers_flip))
        by_rank = decided[np.argsort(rank[decided], kind="stable")]
        pairs = rows[["image_id", "caption_id"]].iloc[by_rank]
        one_per_pair = by_rank[~pairs.duplicated().to_numpy()]
        groups = [one_per_pair[prefers_original[one_per_pair]], one_per_pair[prefers_flip[one_per_pair]]]
        size = min(len(g) for g in groups)
        for group in groups:
            keep[group[:size]] = True  # groups are already in rank order
        ties = int(of_type.sum()) - int((of_type & (prefers_original | prefers_flip)).sum())
        counts[type_] = {"flips": int(of_type.sum()), "lm_prefers_original": int((of_type & prefers_original).sum()),
                         "lm_prefers_flip": int((of_type & prefers_flip).sum()), "ties": ties,
                         "base_pairs": len(one_per_pair), "kept": 2 * size}
    return keep, counts


def accuracy_block(margins, image_ids, *, bootstrap: int = 1000, seed: int = 0, confidence: float = 0.95) -> dict:
    """Held-out accuracy of a learner's margins with its image-bootstrap interval, pairs and images."""
    margins, image_ids = np.asarray(margins, dtype=np.float64), np.asarray(image_ids)
    return {"accuracy": adversary.held_out_accuracy(margins),
            "interval": adversary.accuracy_interval(margins, image_ids, bootstrap=bootstrap, seed=seed,
                                                    confidence=confidence),
            "pairs": int(len(margins)), "images": int(len(pd.unique(image_ids)))}


def flip_blocks(types) -> dict[str, list[str]]:
    """The flip types of each headline block present in ``types``: the paper's flips (Table 1's headline,
    every flip type when no core one is present, as the statistics do), the hard flips (when present)."""
    present = set(types)
    paper = [t for t in stats.CORE_TYPES if t in present and stats.DECLARED_TYPES[t] == stats.FLIP]
    hard = [t for t in stats.HARD_TYPES if t in present]
    return {"headline": paper or sorted(present), **({stats.HARD: hard} if hard else {})}


def adversary_report(rows: pd.DataFrame, *, learner: str = "word", bootstrap: int = 1000, seed: int = 0,
                     confidence: float = 0.95, **_options) -> dict | None:
    """The ``adversary`` entry of the blind block: the learned adversary's held-out accuracy per flip type
    and for the headline blocks (``headline``: the paper's flips; ``hard``), None without flip rows."""
    flips = rows.loc[(rows["kind"] == stats.FLIP).to_numpy()]
    if flips.empty:
        return None
    types, image_ids = flips["type"].to_numpy().astype(str), flips["image_id"].to_numpy()
    margins = _kept(f"adversary.{learner}", flips, ADVERSARY_COLUMNS, lambda: adversary.out_of_fold_margins(
        flips["caption"].tolist(), flips["variant"].tolist(), image_ids, types=types, learner=learner)).copy()
    options = dict(bootstrap=bootstrap, seed=seed, confidence=confidence)
    report = {"scorer": ADVERSARY_DESCRIPTION.format(learner=learner, folds=adversary.FOLDS), "learner": learner,
              "folds": adversary.FOLDS}
    for block, members in flip_blocks(types).items():
        mask = np.isin(types, members)
        report[block] = {"types": members, **accuracy_block(margins[mask], image_ids[mask], **options)}
    report["per_type"] = {t: accuracy_block(margins[types == t], image_ids[types == t], **options)
                          for t in sorted(set(types))}
    return report


def text_similarity(rows: pd.DataFrame) -> dict:
    """Mean ``t_sim`` and the share above ``COLLAPSE`` per variant type (rows, not base pairs)."""
    grouped = rows.assign(collapsed=rows["t_sim"] > COLLAPSE).groupby("type", sort=False)
    return {t: {"mean": float(g["t_sim"].mean()), "share_collapsed": float(g["collapsed"].mean()), "rows": len(g)}
            for t, g in grouped}


def blind_report(rows: pd.DataFrame, *, balance_seed: int = 0, **options) -> dict:
    """The ``blind`` block of results.json for one model's score rows.

    ``rows`` are a score file's rows (``row_id``, ids, texts, ``kind``, ``type``, ``s_original``,
    ``s_variant`` and, when the file has it, ``t_sim``); ``options`` go to the statistics. The
    balanced block is None when no flip survives the balancing (e.g. the LM prefers one side always).
    """
    lm_original, lm_variant = lm_scores(rows)
    keep, counts = balance(rows, lm_original, lm_variant, balance_seed)
    kept = rows.loc[keep]
    balanced = None
    if (kept["kind"] == stats.FLIP).any():
        balanced = {
            "blind": positive_rates(kept, lm_original[keep], lm_variant[keep], **options),
            "model": positive_rates(kept, kept["s_original"].to_numpy(), kept["s_variant"].to_numpy(), **options),
        }
    trigram_original, trigram_variant = lm_scores(rows, TrigramKN)
    report = {
        "lm": {"scorer": LM_DESCRIPTION, "blind": positive_rates(rows, lm_original, lm_variant, **options)},
        "trigram": {"scorer": TRIGRAM_DESCRIPTION,
                    "blind": positive_rates(rows, trigram_original, trigram_variant, **options)},
        "balanced": {
            "rule": "per flip type, one flip per base pair, then the LM-prefers-original and LM-prefers-flip "
                    f"flips subsampled to equal size (smallest seeded hash of row_id, seed {balance_seed}); LM ties "
                    "dropped; the blind LM's PR per type is then exactly 0.5, nested as PR is",
            "seed": balance_seed,
            "counts": counts,
            **(balanced or {"blind": None, "model": None}),
        },
    }
    if (learned := adversary_report(rows, **options)) is not None:
        report["adversary"] = learned
    if "t_sim" in rows:
        report["text_similarity"] = {"threshold": COLLAPSE, "per_type": text_similarity(rows)}
    return report
