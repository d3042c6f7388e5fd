"""Small, exact bigram and trigram language models with interpolated Kneser-Ney smoothing (no dependencies).

The text-only "blind" plausibility scorer of LGIP: trained on captions, it gives each sentence
``log P(</s> w_n ... w_1 <s>)``. Definitions (Chen & Goodman's interpolated KN, one discount ``d``)::

    P_cont(w)   = max(N1+(. w) - d, 0) / N1+(. .)  +  d * |{w: N1+(. w) > 0}| / N1+(. .) * 1 / |V|
    P(w | v)    = max(c(v w) - d, 0) / c(v)  +  d * N1+(v .) / c(v) * P_cont(w)      (c(v) > 0)
    P(w | v)    = P_cont(w)                                                             (c(v) = 0)

``N1+(. w)`` counts the distinct words seen before ``w``, ``N1+(v .)`` the distinct words seen after
``v``, ``N1+(. .)`` the distinct bigrams; ``V`` is the predicted vocabulary (every word and ``</s>``)
plus one unknown word, so unseen words keep a small, non-zero probability. A model trained on no
text gives every sentence log-probability 0.
"""
from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from typing import Iterable

BOS, EOS = "<s>", "</s>"
FOLDS = 2  # cross-fitting folds of every n-gram model trained on a build's captions
DISCOUNT = 0.75
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters/digits, with an inner apostrophe), punctuation dropped."""
    return _WORD.findall(text.lower())


def sentence_bigrams(text: str) -> list[tuple[str, str]]:
    """The bigrams ``logprob`` scores: ``<s>`` w1 ... wn ``</s>``."""
    tokens = [BOS, *words(text), EOS]
    return list(zip(tokens[:-1], tokens[1:]))


class BigramKN:
    """Interpolated Kneser-Ney bigram model; ``fit`` on sentences, then ``logprob`` of a sentence."""

    def __init__(self, discount: float = DISCOUNT):
        if not 0.0 < discount < 1.0:
            raise ValueError(f"the Kneser-Ney discount must be in (0, 1), got {discount!r}")
        self.discount = discount
        self.bigrams: Counter = Counter()
        self.history: Counter = Counter()  # c(v)
        self.followers: Counter = Counter()  # N1+(v .)
        self.continuation: Counter = Counter()  # N1+(. w)
        self.bigram_types = 0  # N1+(. .)

    def fit(self, sentences: Iterable[str]) -> "BigramKN":
        """Count the bigrams of ``sentences`` (each with ``<s>`` and ``</s>``)."""
        return self.fit_counts(Counter(b for sentence in sentences for b in sentence_bigrams(sentence)))

    def fit_counts(self, bigrams: Counter) -> "BigramKN":
        """Use these bigram counts (of :func:`sentence_bigrams`, e.g. summed over caption sets)."""
        self.bigrams = Counter(bigrams)
        self.history, self.followers, self.continuation = Counter(), Counter(), Counter()
        for (v, w), n in self.bigrams.items():
            self.history[v] += n
            self.followers[v] += 1
            self.continuation[w] += 1
        self.bigram_types = len(self.bigrams)
        return self

    def continuation_prob(self, word: str) -> float:
        """P_cont(word), the lower order distribution (interpolated with uniform over V)."""
        total, d = self.bigram_types, self.discount
        if not total:
            return 1.0
        vocabulary = len(self.continuation) + 1  # + the unknown word
        return max(self.continuation[word] - d, 0.0) / total + d * len(self.continuation) / total / vocabulary

    def prob(self, word: str, previous: str) -> float:
        """P(word | previous)."""
        lower = self.continuation_prob(word)
        seen = self.history[previous]
        if not seen:
            return lower
        d = self.discount
        return max(self.bigrams[(previous, word)] - d, 0.0) / seen + d * self.followers[previous] / seen * lower

    def logprob(self, sentence: str) -> float:
        """Natural-log probability of the whole sentence, ``<s>`` ... ``</s>``."""
        return sum(math.log(self.prob(w, v)) for v, w in sentence_bigrams(sentence))


def sentence_trigrams(text: str) -> list[tuple[str, str, str]]:
    """The trigrams ``TrigramKN.logprob`` scores: ``<s> <s>`` w1 ... wn ``</s>``."""
    tokens = [BOS, BOS, *words(text), EOS]
    return list(zip(tokens, tokens[1:], tokens[2:]))


class TrigramKN:
    """A trigram language model with interpolated Kneser-Ney smoothing.

    The blind LM scorers use it beside the bigram; the hard set's choice balances the preference of one
    trained on the other fold's statistics (:mod:`lgip_dataset.perturb.plausibility`), and the audit's held-out
    LMs are trained on captions no build counted for the flips they score (:mod:`lgip_metric.audit.held_out`).
    Chen & Goodman's interpolated KN with one discount ``d``::

        P3(w | u v) = max(c(u v w) - d, 0) / c(u v .)  +  d * N1+(u v .) / c(u v .) * P2(w | v)
        P2(w | v)   = max(N1+(. v w) - d, 0) / N1+(. v .)  +  d * N1+(v .)' / N1+(. v .) * P1(w)
        P1(w)       = BigramKN.continuation_prob(w)  (continuation counts, interpolated with uniform)

    where ``N1+(v .)'`` counts the distinct w with N1+(. v w) > 0; a history never seen backs off to
    the next order entirely. Sentences are ``<s> <s> w1 ... wn </s>``.
    """

    def __init__(self, discount: float = DISCOUNT):
        self.discount = discount
        self.unigram = BigramKN(discount)  # its continuation_prob is P1

    def fit(self, sentences: Iterable[str]) -> "TrigramKN":
        """Count the trigrams of ``sentences``."""
        return self.fit_counts(Counter(t for sentence in sentences for t in sentence_trigrams(sentence)))

    def fit_counts(self, trigrams: Counter) -> "TrigramKN":
        """Use these trigram counts (of :func:`sentence_trigrams`, e.g. summed over caption sets)."""
        self.trigrams = Counter(trigrams)
        self.history, self.followers = Counter(), Counter()  # c(u v .), N1+(u v .)
        middle = Counter((v, w) for _, v, w in self.trigrams)  # N1+(. v w)
        self.middle, self.middle_history, self.middle_followers = middle, Counter(), Counter()
        for (u, v, _), n in self.trigrams.items():
            self.history[(u, v)] += n
            self.followers[(u, v)] += 1
        for (v, _), n in middle.items():
            self.middle_history[v] += n  # N1+(. v .)
            self.middle_followers[v] += 1
        self.unigram.fit_counts(Counter({(v, w): 1 for v, w in middle}))  # N1+(. w) as its continuation
        return self

    def _p2(self, word: str, previous: str) -> float:
        lower = self.unigram.continuation_prob(word)
        seen = self.middle_history[previous]
        if not seen:
            return lower
        d = self.discount
        return max(self.middle[(previous, word)] - d, 0.0) / seen + d * self.middle_followers[previous] / seen * lower

    def prob(self, word: str, u: str, v: str) -> float:
        """P(word | u v)."""
        lower = self._p2(word, v)
        seen = self.history[(u, v)]
        if not seen:
            return lower
        d = self.discount
        return max(self.trigrams[(u, v, word)] - d, 0.0) / seen + d * self.followers[(u, v)] / seen * lower

    def logprob(self, sentence: str) -> float:
        """Natural-log probability of the whole sentence."""
        return sum(math.log(self.prob(w, u, v)) for u, v, w in sentence_trigrams(sentence))


def by_word_frequency(sentences: Iterable[str]) -> Counter:
    """Word counts over ``sentences`` (the tokens ``logprob`` sees)."""
    return Counter(w for sentence in sentences for w in words(sentence))



def image_half(image_id) -> int:
    """Which half (0 or 1) of its fold an image id falls in: the next 8 bytes of the SHA-256 of its text, modulo 2.
    The hard set's choice reads the split-half reliability of its trigram LM over the two halves."""
    return int.from_bytes(hashlib.sha256(str(image_id).encode()).digest()[8:16], "big") % 2


def image_fold(image_id) -> int:
    """Cross-fitting fold (0 or 1) of an image id: SHA-256 of its text, modulo ``FOLDS``. The blind LMs and the
    hard flips' statistics both fold by it, so no caption is scored or chosen by counts of its own image."""
    return int.from_bytes(hashlib.sha256(str(image_id).encode()).digest()[:8], "big") % FOLDS
