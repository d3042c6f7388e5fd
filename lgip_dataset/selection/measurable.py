"""Whether a cross-fitted text-only figure was measured, and if not, why.

The audit's learners (:mod:`lgip_dataset.selection.adversary`, one per type, trained on the other image folds'
pairs), the n-gram LMs (two image folds, :mod:`lgip_dataset.ngram`) and the build's hard-flip learner
score each pair with a model that never saw its image. Such a figure is measured only when

- its pairs lie on at least ``MIN_IMAGES`` images: over fewer, the held-out figure rests on a handful of
  images and the image-bootstrap interval on as few clusters (two images give "0.882 [0.85, 0.91]"), and
- every fold holding a scored pair has training data in another fold: a pair of a fold without one is
  scored by no model (a margin of 0, a tie) and reads as chance, "0.500 [0.500, 0.500]".

Otherwise the figure is ``None`` with the reason beside it (:func:`figure`), never a number. A measured
figure over fewer than ``WARN_IMAGES`` images is kept, with a warning that its interval is wide.
This module is the one place of that rule: the audit calls it per type and block, the build per type.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

MIN_IMAGES = 10  # fewer images: no cross-fitted figure is reported
RULE = (f"a cross-fitted figure is measured only over at least {MIN_IMAGES} images, each pair scored by a model "
        "trained on other image folds; where that fails it reads 'not measurable' with the reason, never a number")
WARN_IMAGES = 100  # fewer images: the figure is reported with a warning
NOT_MEASURABLE = "not_measurable"  # the key of the reason beside a None figure


def _too_few(image_ids) -> str | None:
    images = len(pd.unique(np.asarray(image_ids, dtype=object)))
    if images < MIN_IMAGES:
        return f"{images} image{'s' if images != 1 else ''}, fewer than {MIN_IMAGES}"
    return None


def _orphan_folds(scored_folds, training_folds) -> bool:
    """Whether some fold holding a scored pair has no training data in any other fold."""
    training = set(np.asarray(training_folds).tolist())
    return any(not (training - {f}) for f in set(np.asarray(scored_folds).tolist()))


def learner_reason(image_ids, types, folds: int, partition=None) -> str | None:
    """Why the held-out accuracy of learners trained per type over ``folds`` image folds on these pairs is not
    measurable (None: it is). ``partition``: each pair's fold in the partition the learners were cross-fitted on
    (default: :func:`lgip_dataset.selection.adversary.image_folds`)."""
    from lgip_dataset.selection.adversary import image_folds

    image_ids, types = np.asarray(image_ids, dtype=object), np.asarray([str(t) for t in types])
    too_few = _too_few(image_ids)
    if too_few:
        return too_few
    partition = image_folds(image_ids, folds) if partition is None else np.asarray(partition)
    for type_ in sorted(set(types.tolist())):
        fold = partition[types == type_]
        if _orphan_folds(fold, fold):
            return f"type {type_!r}: every pair in one image fold, no learner to score it"
    return None


def lm_reason(image_ids, train_image_ids) -> str | None:
    """Why the PR of the cross-fitted n-gram LMs on pairs of ``image_ids``, trained on the captions of
    ``train_image_ids`` (two image folds, :func:`lgip_dataset.ngram.image_fold`), is not measurable."""
    from lgip_dataset.ngram import image_fold

    too_few = _too_few(image_ids)
    if too_few:
        return too_few
    scored = [image_fold(i) for i in pd.unique(np.asarray(image_ids, dtype=object))]
    training = [image_fold(i) for i in pd.unique(np.asarray(train_image_ids, dtype=object))]
    if _orphan_folds(scored, training):
        return "every caption in one image fold, no LM to score it"
    return None


def corpus_reason(image_ids, corpus_image_ids) -> str | None:
    """Why the figures of an LM (or co-occurrence) trained on a caption corpus of other images are not measurable
    on pairs of ``image_ids`` (None: they are): each pair is scored by the corpus captions of its own image's
    statistics fold (:func:`lgip_dataset.ngram.image_fold`), so every fold holding a scored pair needs corpus
    captions of at least ``MIN_IMAGES`` images of that fold; with fewer the pairs of that fold are scored by a
    handful of captions or by an empty model."""
    from lgip_dataset.ngram import image_fold

    too_few = _too_few(image_ids)
    if too_few:
        return too_few
    corpus = pd.Series([image_fold(i) for i in pd.unique(np.asarray(corpus_image_ids, dtype=object))], dtype=int)
    if len(corpus) < MIN_IMAGES:
        return f"the corpus has {len(corpus)} other image{'s' if len(corpus) != 1 else ''}, fewer than {MIN_IMAGES}"
    for fold in sorted({image_fold(i) for i in pd.unique(np.asarray(image_ids, dtype=object))}):
        images = int((corpus == fold).sum())
        if images < MIN_IMAGES:
            return (f"the corpus has {images} image{'s' if images != 1 else ''} in statistics fold {fold}, fewer than "
                    f"{MIN_IMAGES}: the pairs of that fold would be scored by {'no' if not images else 'too few'} "
                    "corpus captions")
    return None


def reasons(type_of, image_ids, named: list, folds: int, train_image_ids) -> dict:
    """Per named group of types (``[(name, members)]``: an audit's blocks and types), why its learners'
    accuracy (``"learner"``) and its n-gram LMs' PR (``"lm"``) are not measurable (None: they are)."""
    type_of, image_ids = np.asarray(type_of), np.asarray(image_ids, dtype=object)
    out = {}
    for name, members in named:
        mask = np.isin(type_of, members)
        out[name] = {"learner": learner_reason(image_ids[mask], type_of[mask], folds),
                     "lm": lm_reason(image_ids[mask], train_image_ids)}
    return out


def figure(key: str, value, interval, reason: str | None) -> dict:
    """``{key: value, "interval": interval}``, or with a ``reason`` ``{key: None, "interval": None,
    "not_measurable": reason}``."""
    if reason:
        return {key: None, "interval": None, NOT_MEASURABLE: reason}
    return {key: value, "interval": interval}


def few_images_warning(images_by_figure: dict[str, int], where: str) -> list[str]:
    """One warning naming the figures measured over fewer than ``WARN_IMAGES`` images (none otherwise)."""
    few = [f"{name} ({images})" for name, images in images_by_figure.items() if MIN_IMAGES <= images < WARN_IMAGES]
    if not few:
        return []
    return [f"{where}: {', '.join(few)} images: cross-fitted figures over fewer than {WARN_IMAGES} images have wide "
            "intervals; read them as rough"]
