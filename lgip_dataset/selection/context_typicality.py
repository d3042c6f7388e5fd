"""The context instruments: how typical a flip's changed words are with the words its two texts share.

The word, character and naive Bayes learners see only a pair's *difference*; a text tower also reads the words
both texts keep, and knows that "a griddle" belongs in a kitchen, not an office. Two instruments read that:

- **context typicality** (unsupervised): from the co-occurrence of words across whole captions of *other*
  images, the Dirichlet-smoothed pointwise mutual information of each changed word with each context word,
  ``PMI(w, c) = log P(w | c) / P(w)`` with ``P(w | c) = (n(w, c) + ALPHA P(w)) / (n(c) + ALPHA)`` and
  ``P(w) = (n(w) + 1) / (N + V)`` (``n``: captions holding the words, ``N`` captions, ``V`` distinct words of
  those captions). A pair's
  margin is the mean PMI of the words only the caption holds with the shared words, less that of the words
  only the negative holds (> 0: the caption's words are the more typical ones). A pair with no shared content
  word, or no changed word on either side, has margin 0 (a tie, 1/2);
- **the context learner**: a logistic regression (:mod:`lgip_dataset.selection.adversary`'s classifier) whose features
  pair each changed word with each shared word ("griddle|kitchen"), x = phi(caption) - phi(negative),
  cross-fitted on the audit's fresh image partitions like the other learners.

Words are :func:`lgip_dataset.ngram.words`; the context words are the shared ones less the lexicon's function
words (``function_words.json``), which go with any scene. ``lgip audit`` reads both on fresh image partitions or
a corpus the user names. A build computes neither for its hard flips (it balances the sign of its own typicality
reading: its statistics fold, keyed targets); the validated config's compositional flips are chosen with both,
read on the build's own statistics folds (:mod:`lgip_dataset.judging.validated_choice`), so for those the audit's
readings on fresh partitions and corpora are held out by their data only.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from lgip_dataset.selection.adversary import context_features, split_pair

ALPHA = 10.0  # the Dirichlet prior's weight (in captions) pulling P(w | c) towards P(w)


def describe() -> dict:
    """The instruments' settings, for provenance records."""
    return {"typicality": f"mean Dirichlet-smoothed PMI (alpha={ALPHA}) of the words only the caption holds with the "
                          "shared content words, less that of the words only the negative holds; co-occurrence "
                          "within whole captions of other images (the other folds of a fresh partition, or a corpus "
                          "of images outside the audited set, each row by its own statistics fold)",
            "context_learner": "logistic regression on (changed word, shared content word) pairs, "
                               "x = phi(caption) - phi(negative), cross-fitted like the other learners"}


class Pairs:
    """The changed and context words of a set of flip rows, as sparse row-by-word weights over one vocabulary."""

    def __init__(self, captions: list[str], variants: list[str]):
        split = [split_pair(c, v) for c, v in zip(captions, variants)]
        vocabulary: dict[str, int] = {}
        for parts in split:
            for part in parts:
                for word in part:
                    vocabulary.setdefault(word, len(vocabulary))
        self.vocabulary = vocabulary
        self.removed, self.inserted, self.context = (self._weights([parts[k] for parts in split]) for k in range(3))
        self.split = split

    def _weights(self, lists: list[list[str]]) -> sp.csr_matrix:
        """Row i: 1/len(lists[i]) at each of its words (a mean over them)."""
        rows = np.repeat(np.arange(len(lists)), [len(w) for w in lists])
        cols = np.array([self.vocabulary[w] for ws in lists for w in ws], dtype=np.int64)
        values = np.concatenate([np.full(len(w), 1.0 / len(w)) for w in lists if w]) if len(cols) else np.zeros(0)
        return sp.csr_matrix((values, (rows, cols)), shape=(len(lists), len(self.vocabulary)))

    def typicality_margins(self, corpus: list[str], rows: np.ndarray) -> np.ndarray:
        """The typicality margins (module docstring) of ``rows`` (indices) from co-occurrence in ``corpus`` texts."""
        from lgip_dataset.ngram import words

        out = np.zeros(len(rows))
        if not len(rows) or not corpus:
            return out
        known = self.vocabulary
        doc_rows, doc_cols, corpus_words = [], [], set()
        for d, text in enumerate(corpus):
            found = set(words(text))
            corpus_words |= found
            for w in found:
                k = known.get(w)
                if k is not None:
                    doc_rows.append(d)
                    doc_cols.append(k)
        docs = sp.csr_matrix((np.ones(len(doc_rows)), (doc_rows, doc_cols)), shape=(len(corpus), len(known)))
        n_word = np.asarray(docs.sum(axis=0)).ravel()
        together = (docs.T @ docs).tocsr()  # n(w, c) for the words of these pairs
        total, size = float(len(corpus)), float(len(corpus_words))
        prior = (n_word + 1.0) / (total + size)
        context, changed = self.context[rows], (self.removed[rows], self.inserted[rows])
        for side, weights in zip((1.0, -1.0), changed):
            out += side * _mean_pmi(weights, context, together, n_word, prior)
        return out

    def learner_features(self) -> tuple:
        """The context learner's (x, seen): :func:`lgip_dataset.selection.adversary.context_features` of these
        pairs."""
        return context_features(self.split)


def _mean_pmi(changed: sp.csr_matrix, context: sp.csr_matrix, together: sp.csr_matrix, n_word: np.ndarray,
              prior: np.ndarray) -> np.ndarray:
    """Per row, sum over (w, c) of changed[w] * context[c] * PMI(w, c): the mean PMI of its changed words with its
    context words (the weights are 1/count on each side)."""
    a, b = changed.tocoo(), context.tocsr()
    per_entry = np.diff(b.indptr)[a.row]  # each changed word meets every context word of its row
    entry = np.repeat(np.arange(a.nnz), per_entry)
    position = np.repeat(b.indptr[a.row], per_entry) + np.arange(len(entry)) - np.repeat(np.cumsum(per_entry) - per_entry,
                                                                                           per_entry)
    w, c = a.col[entry].astype(np.int64), b.indices[position].astype(np.int64)
    together.sort_indices()
    pairs = together.tocoo()
    size = together.shape[1]
    keys, wanted = pairs.row.astype(np.int64) * size + pairs.col, w * size + c
    found = np.minimum(np.searchsorted(keys, wanted), max(len(keys) - 1, 0))
    joint = np.where(keys[found] == wanted, pairs.data[found], 0.0) if len(keys) else np.zeros(len(wanted))
    pmi = np.log((joint + ALPHA * prior[w]) / (n_word[c] + ALPHA) / prior[w])
    return np.bincount(a.row[entry], weights=a.data[entry] * b.data[position] * pmi, minlength=changed.shape[0])
