"""A text-only learned adversary of a probe set's (caption, negative) pairs, cross-fitted by image.

The hypothesis-only / AFLite test of annotation artifacts: a linear model sees only the two texts of
a pair and learns which one is the human caption. If the negatives carry a systematic text
difference (a word that is only ever removed, a replacement drawn from a skewed list), it finds it
and picks the original far above chance without ever seeing the image; on a probe whose texts carry
no systematic difference it sits at 0.5.

Learner: a bag of n-grams (``"word"``: word 1-2-grams; ``"char"``: character 2-4-grams within word
boundaries), or (``"context"``) each changed word paired with each content word both texts share
("griddle|kitchen": what a text tower knows of which things go together, :func:`context_features`),
counted by scikit-learn's ``CountVectorizer`` fitted on the training pairs' texts only;
a pair's feature is x = phi(original) - phi(variant) and a ``LogisticRegression`` without intercept
is trained on the symmetric augmentation ([x, -x] with labels [1, 0]), so the orientation of a pair
carries no prior and w.x > 0 means "the first text is the original".

Cross-fitting: images fall in ``FOLDS`` folds by a stable hash of their id (:func:`image_folds`);
every pair's margin comes from the learner trained on the pairs of the other folds' images, so no
pair is scored by a model that saw its image (and the captions of that image).
"""
from __future__ import annotations

import hashlib
from functools import lru_cache

import numpy as np

FOLDS = 5
LEARNERS = ("word", "char")  # word 1-2-gram counts; character 2-4-grams (analyzer="char_wb")
WORD_TOKENS = r"(?u)\b\w+\b"  # every word, one-letter ones ("a") included
C = 1.0
RANDOM_STATE = 0
SETTINGS = {
    "word": {"analyzer": "word", "ngram_range": (1, 2), "token_pattern": WORD_TOKENS, "lowercase": True},
    "char": {"analyzer": "char_wb", "ngram_range": (2, 4), "lowercase": True},
}
CLASSIFIER = {"fit_intercept": False, "C": C, "solver": "liblinear", "random_state": RANDOM_STATE}
CONTEXT = "context"  # the learner on (changed word, shared content word) pairs
SEPARATOR = "|"  # joins a changed word and a context word into a context-learner feature


def describe() -> dict:
    """The learner settings, for provenance records."""
    return {"features": {name: {k: list(v) if isinstance(v, tuple) else v for k, v in s.items()}
                         for name, s in SETTINGS.items()},
            "classifier": "sklearn LogisticRegression " + ", ".join(f"{k}={v!r}" for k, v in CLASSIFIER.items()),
            "training": "x = phi(original) - phi(variant); trained on [x, -x] with labels [1, 0]; "
                        "vectorizer fitted on the training pairs' texts only"}


def image_folds(image_ids, folds: int = FOLDS) -> np.ndarray:
    """Fold of each image id: SHA-256 of str(image_id) (first 8 bytes, big-endian) modulo folds."""
    ids = list(image_ids)
    cache: dict[str, int] = {}
    out = np.empty(len(ids), dtype=np.int64)
    for i, value in enumerate(ids):
        key = str(value)
        fold = cache.get(key)
        if fold is None:
            fold = cache[key] = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") % folds
        out[i] = fold
    return out


def random_folds(image_ids, folds: int, entropy) -> np.ndarray:
    """Fold of each image id in a random partition of the distinct ids into ``folds`` near-equal folds, drawn
    with ``numpy.random.default_rng(entropy)`` (``entropy``: a tuple of ints naming the stream, the seed and
    the draw, so that the build's and the audit's partitions never coincide). The ids are put in their
    sorted text order first, so the partition depends on the set of ids and the entropy, not on row order."""
    import pandas as pd

    codes, uniques = pd.factorize(pd.Series([str(i) for i in image_ids], dtype=object))
    order = np.argsort(np.asarray(uniques, dtype=str), kind="stable")
    fold_of_sorted = np.random.default_rng(list(entropy)).permutation(len(uniques)) % folds
    fold_of_unique = np.empty(len(uniques), dtype=np.int64)
    fold_of_unique[order] = fold_of_sorted
    return fold_of_unique[codes] if len(codes) else np.empty(0, dtype=np.int64)


def text_groups(image_ids, texts) -> list[str]:
    """Each row's cross-fitting group: its image joined with every image that shares one of its texts (compared
    as their lower-cased words), named by the group's first image id in text order. A learner cross-fitted on
    images alone would meet a held-out pair's very caption among its training pairs wherever two images share
    it ("A man riding a wave on top of a surfboard."), and read it as known, not as a text habit."""
    import pandas as pd
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    from lgip_dataset.ngram import words

    image_codes, images = pd.factorize(pd.Series([str(i) for i in image_ids], dtype=object))
    text_codes, _ = pd.factorize(pd.Series([" ".join(words(str(t))) for t in texts], dtype=object))
    if not len(image_codes):
        return []
    count = len(images) + int(text_codes.max()) + 1
    graph = sp.coo_matrix((np.ones(len(image_codes)), (image_codes, len(images) + text_codes)), shape=(count, count))
    _, component = connected_components(graph, directed=False)
    name = pd.Series(np.asarray(images, dtype=str)).groupby(component[:len(images)]).transform("min").to_numpy()
    return name[image_codes].tolist()


def _vectorizer(learner: str):
    from sklearn.feature_extraction.text import CountVectorizer

    if learner not in SETTINGS:
        raise ValueError(f"unknown learner {learner!r}: one of {', '.join(LEARNERS)}")
    return CountVectorizer(**SETTINGS[learner], dtype=np.float64)


def pair_counts(originals: list[str], variants: list[str], learner: str = "word"):
    """(phi(original), phi(variant)) of every pair: the sparse n-gram counts of ``learner``'s analyser over
    the n-grams of all the texts (each distinct text analysed once); (None, None) when no text has an n-gram."""
    import pandas as pd

    codes, texts = pd.factorize(pd.Series([str(t) for t in originals] + [str(t) for t in variants], dtype=object))
    vectorizer = _vectorizer(learner)
    try:
        counts = vectorizer.fit_transform(list(texts)).tocsr()
    except ValueError:  # no n-gram in any text (empty vocabulary)
        return None, None
    return counts[codes[:len(originals)]], counts[codes[len(originals):]]


def _pair_features(originals: list[str], variants: list[str], learner: str):
    """(x, seen) of every pair: x = phi(original) - phi(variant) (:func:`pair_counts`), and ``seen`` the sparse
    0/1 indicator of the n-grams in either text of the pair (a training fold's vocabulary is the union of its
    pairs' rows)."""
    first, second = pair_counts(originals, variants, learner)
    if first is None:
        return None, None
    seen = (first + second).tocsr()
    seen.data[:] = 1.0
    return (first - second).tocsr(), seen


def _fit_margins(x, seen, train: np.ndarray, test: np.ndarray) -> np.ndarray:
    """Margins of the ``test`` pairs (indices) from a learner fitted on the ``train`` pairs: the features
    are the n-grams of the training pairs' texts only (the vocabulary of a vectorizer fitted on them)."""
    import scipy.sparse as sp
    from sklearn.linear_model import LogisticRegression

    if len(train) == 0 or len(test) == 0 or x is None:
        return np.zeros(len(test))
    vocabulary = np.flatnonzero(np.asarray(seen[train].sum(axis=0)).ravel() > 0)
    if len(vocabulary) == 0:
        return np.zeros(len(test))
    x_train = x[train][:, vocabulary]
    model = LogisticRegression(**CLASSIFIER)
    model.fit(sp.vstack([x_train, -x_train]).tocsr(), np.r_[np.ones(len(train)), np.zeros(len(train))])
    return np.asarray(x[test][:, vocabulary] @ model.coef_.ravel(), dtype=np.float64).ravel()


def out_of_fold_margins(originals, variants, image_ids, *, types=None, learner="word", folds=FOLDS,
                        progress=None, train=None) -> np.ndarray:
    """Each pair's margin w·(phi(original) - phi(variant)) from a learner trained only on the pairs of the
    OTHER image folds (> 0: the learner picks the original, the human caption). With `types`, one learner per
    type (trained on that type's pairs of the other folds). A fold with no training pairs gives margin 0.
    ``progress``, when given, is called once per (type, fold) after its learner has scored its pairs.
    ``train``, a boolean mask, lets only those pairs train the learners; every pair is still scored (a
    generator's candidates, by learners trained on the other folds' chosen pairs)."""
    originals, variants = [str(t) for t in originals], [str(t) for t in variants]
    if len(originals) != len(variants) or len(originals) != len(image_ids):
        raise ValueError(f"originals, variants and image_ids differ in length "
                         f"({len(originals)}, {len(variants)}, {len(image_ids)})")
    _vectorizer(learner)  # an unknown learner fails before any work
    fold = image_folds(image_ids, folds)
    groups = np.zeros(len(originals), dtype=np.int64)
    if types is not None:
        if len(types) != len(originals):
            raise ValueError(f"types has {len(types)} entries for {len(originals)} pairs")
        _, groups = np.unique(np.asarray([str(t) for t in types]), return_inverse=True)
    features = _pair_features(originals, variants, learner) if originals else (None, None)
    return fold_margins(features, fold, groups, train=train, folds=folds, progress=progress)


def pair_features(originals, variants, learner: str = "word") -> tuple:
    """The features :func:`fold_margins` reads, of (original, variant) pairs that several calls score (a
    generator's candidates, scored again whenever the chosen set changes): computed once."""
    if learner == CONTEXT:
        return context_features([split_pair(str(c), str(v)) for c, v in zip(originals, variants)])
    _vectorizer(learner)
    return _pair_features([str(t) for t in originals], [str(t) for t in variants], learner) if originals else (None, None)


@lru_cache(maxsize=1)
def function_words() -> frozenset[str]:
    """The lexicon's function words, which go with any scene: never a context word."""
    from lgip_dataset.perturb.lexicon import load_lexicon

    return load_lexicon().function_words


def split_pair(caption: str, variant: str) -> tuple[list[str], list[str], list[str]]:
    """(words only the caption holds, words only the negative holds, shared content words), each sorted."""
    from lgip_dataset.ngram import words

    before, after = set(words(str(caption))), set(words(str(variant)))
    shared = (before & after) - function_words()
    return sorted(before - after), sorted(after - before), sorted(shared)


def context_features(split: list[tuple[list[str], list[str], list[str]]]) -> tuple:
    """The context learner's (x, seen) of pairs split by :func:`split_pair`: per pair, each changed word paired
    with each context word, +1 on the caption's side and -1 on the negative's; (None, None) when no pair has a
    shared context word."""
    import pandas as pd
    from sklearn.feature_extraction.text import CountVectorizer

    def doc(changed: list[str], context: list[str]) -> str:
        return " ".join(f"{w}{SEPARATOR}{c}" for w in changed for c in context)

    originals = [doc(removed, context) for removed, _, context in split]
    negatives = [doc(inserted, context) for _, inserted, context in split]
    codes, texts = pd.factorize(pd.Series(originals + negatives, dtype=object))
    try:
        counts = CountVectorizer(analyzer=str.split, dtype=np.float64).fit_transform(list(texts)).tocsr()
    except ValueError:  # no pair has a shared context word
        return None, None
    first, second = counts[codes[:len(originals)]], counts[codes[len(originals):]]
    seen = (first + second).tocsr()
    seen.data[:] = 1.0
    return (first - second).tocsr(), seen


def fold_margins(features: tuple, fold: np.ndarray, groups: np.ndarray, *, train=None, folds: int = FOLDS,
                 progress=None) -> np.ndarray:
    """:func:`out_of_fold_margins` of pairs whose :func:`pair_features`, image folds and learner groups
    (one learner per group) are given."""
    x, seen = features
    trains = np.ones(len(fold), dtype=bool) if train is None else np.asarray(train, dtype=bool)
    from threadpoolctl import threadpool_limits

    margins = np.zeros(len(fold))
    with threadpool_limits(limits=1):  # liblinear gains nothing from BLAS threads; they spin against other work
        _fill_margins(margins, x, seen, groups, fold, folds, progress, trains)
    return margins


def _fill_margins(margins: np.ndarray, x, seen, groups: np.ndarray, fold: np.ndarray, folds: int, progress,
                  trains: np.ndarray) -> None:
    for group in np.unique(groups):
        in_group = groups == group
        for f in range(folds):
            test = np.flatnonzero(in_group & (fold == f))
            if len(test):
                margins[test] = _fit_margins(x, seen, np.flatnonzero(in_group & (fold != f) & trains), test)
            if progress is not None:
                progress()


def held_out_accuracy(margins) -> float:
    """Mean of 1[m > 0] + 0.5 * 1[m == 0] (nan for no margins)."""
    margins = np.asarray(margins, dtype=np.float64)
    if margins.size == 0:
        return float("nan")
    return float(np.mean((margins > 0) + 0.5 * (margins == 0)))


def accuracy_interval(margins, image_ids, *, bootstrap: int = 1000, seed: int = 0,
                      confidence: float = 0.95) -> list[float] | None:
    """Percentile interval of :func:`held_out_accuracy` under a cluster bootstrap over images.

    Each resample draws the images with replacement (seeded ``numpy.random.default_rng(seed)``) and
    weighs every pair by its image's draw count; None without pairs or with ``bootstrap == 0``.
    """
    margins = np.asarray(margins, dtype=np.float64)
    if margins.size == 0 or bootstrap <= 0:
        return None
    codes = np.unique(np.asarray([str(i) for i in image_ids]), return_inverse=True)[1]
    images = int(codes.max()) + 1
    hits = np.bincount(codes, weights=(margins > 0) + 0.5 * (margins == 0), minlength=images)
    pairs = np.bincount(codes, minlength=images).astype(np.float64)
    rng = np.random.default_rng(seed)
    estimates = np.empty(bootstrap)
    step = max(1, (1 << 22) // images)  # draw count matrices of ~4M cells at a time
    for start in range(0, bootstrap, step):
        size = min(step, bootstrap - start)
        counts = rng.multinomial(images, np.full(images, 1.0 / images), size=size).astype(np.float64)
        estimates[start:start + size] = (counts @ hits) / (counts @ pairs)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(estimates, [tail, 100 - tail])
    return [float(low), float(high)]
