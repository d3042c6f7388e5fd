"""One caption prepared for the families: its words, their neighbours and its object-noun units."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from lgip_dataset.perturb.lexicon import Lexicon, NounForm
from lgip_dataset.perturb.text import Token, match_case, tokenize


POSSESSIVE = ("'s", "’s")


def possessor(word: str) -> str:
    """``word`` without a possessive 's ("woman's": "woman")."""
    return next((word[:-len(p)] for p in POSSESSIVE if word.endswith(p)), word)


@dataclass(frozen=True)
class Unit:
    """Words ``start..end-1`` (token indices) that form one lexicon noun, e.g. "teddy bear", and
    its character span, which leaves out a possessive 's ("dog's" -> "dog")."""
    start: int
    end: int
    form: NounForm | None  # None: a blocked compound ("toilet bowl")
    span: tuple[int, int]


class CaptionContext:
    """A caption, its tokens and the lexicon; neighbour lookups only see whitespace-joined words."""

    def __init__(self, text: str, lex: Lexicon):
        self.text = text
        self.lex = lex
        self.tokens: list[Token] = tokenize(text)
        self.memo: dict = {}  # per-caption values that families compute once and share

    def joined(self, i: int, j: int) -> bool:
        """True when tokens i and j = i + 1 are separated by whitespace only (no punctuation)."""
        return 0 <= i and j < len(self.tokens) and self.text[self.tokens[i].end:self.tokens[j].start].isspace()

    def next_word(self, i: int) -> Token | None:
        return self.tokens[i + 1] if self.joined(i, i + 1) else None

    def prev_word(self, i: int) -> Token | None:
        return self.tokens[i - 1] if self.joined(i - 1, i) else None

    def is_content(self, tok: Token | None) -> bool:
        """A word that is neither a function word nor a number word."""
        return tok is not None and tok.low not in self.lex.function_words and tok.low not in self.lex.numbers

    def sentence_start(self, i: int) -> bool:
        """True when token ``i`` opens the caption or follows sentence-final punctuation."""
        if i == 0:
            return True
        gap = self.text[self.tokens[i - 1].end:self.tokens[i].start]
        return "." in gap or "!" in gap or "?" in gap

    @cached_property
    def shouting(self) -> bool:
        """True when the caption is written mostly in capitals ("TWO DOGS ON A BED")."""
        return sum(map(str.isupper, self.text)) > sum(map(str.islower, self.text))

    def inserted(self, words: str) -> str:
        """``words`` that a variant inserts (not replacing any word), all-caps in an all-caps caption."""
        return words.upper() if self.shouting else words

    def cased(self, i: int, model: str, word: str) -> str:
        """``word`` in the case of ``model``, which is written at token ``i``."""
        return match_case(model, word, sentence_start=self.sentence_start(i),
                          shouting=model.isupper() and self.shouting)

    @cached_property
    def units(self) -> dict[int, Unit]:
        """Lexicon nouns by start index, matched longest-first left to right ("hot dog" before "dog")."""
        found: dict[int, Unit] = {}
        lows = [t.low for t in self.tokens]
        stems = [w[:-2] if w.endswith(POSSESSIVE) and len(w) > 2 else w for w in lows]
        i = 0
        while i < len(lows):
            n = self._unit_length(lows, stems, i)
            if n:
                last = self.tokens[i + n - 1]
                end = last.end - (len(last.low) - len(stems[i + n - 1]))
                found[i] = Unit(i, i + n, self.lex.noun_forms[(*lows[i:i + n - 1], stems[i + n - 1])],
                                (self.tokens[i].start, end))
            i += n or 1
        return found

    def _unit_length(self, lows: list[str], stems: list[str], i: int) -> int:
        """Words in the longest lexicon noun starting at token ``i`` (0: none); only its last word
        may carry a possessive 's."""
        forms = self.lex.noun_forms
        if lows[i] in self.lex.unit_starts:
            for n in range(min(self.lex.max_unit_words, len(lows) - i), 1, -1):
                if (*lows[i:i + n - 1], stems[i + n - 1]) in forms \
                        and all(self.joined(k, k + 1) for k in range(i, i + n - 1)):
                    return n
        return 1 if (stems[i],) in forms else 0

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Character span of tokens ``start..end-1``."""
        return self.tokens[start].start, self.tokens[end - 1].end
