"""A trigram language model with interpolated Kneser-Ney smoothing: the second, independent blind scorer.

The hard flips are selected with bigram statistics (:mod:`lgip_dataset.perturb.plausibility`), so a
blind PR near chance under the bigram alone could be an artefact of that selection; this model (a
different order and different lower-order estimates, trained on captions the flips were not
selected with) checks it. Chen & Goodman's interpolated KN with one discount ``d``::

    P3(w | u v) = max(c(u v w) - d, 0) / c(u v .)  +  d * N1+(u v .) / c(u v .) * P2(w | v)
    P2(w | v)   = max(N1+(. v w) - d, 0) / N1+(. v .)  +  d * N1+(v .)' / N1+(. v .) * P1(w)
    P1(w)       = BigramKN.continuation_prob(w)  (continuation counts, interpolated with uniform)

where ``N1+(v .)'`` counts the distinct w with N1+(. v w) > 0; a history never seen backs off to
the next order entirely. Sentences are ``<s> <s> w1 ... wn </s>``.
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Iterable

from lgip_dataset.ngram import BOS, DISCOUNT, EOS, BigramKN, words


def _trigrams(text: str) -> list[tuple[str, str, str]]:
    tokens = [BOS, BOS, *words(text), EOS]
    return list(zip(tokens, tokens[1:], tokens[2:]))


class TrigramKN:
    """Interpolated Kneser-Ney trigram model; ``fit`` on sentences, then ``logprob`` of a sentence."""

    def __init__(self, discount: float = DISCOUNT):
        self.discount = discount
        self.unigram = BigramKN(discount)  # its continuation_prob is P1

    def fit(self, sentences: Iterable[str]) -> "TrigramKN":
        """Count the trigrams of ``sentences``."""
        self.trigrams = Counter(t for sentence in sentences for t in _trigrams(sentence))
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
        return sum(math.log(self.prob(w, u, v)) for u, v, w in _trigrams(sentence))
