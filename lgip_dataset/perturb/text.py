"""Word tokens with character offsets, and case matching."""
from __future__ import annotations

import re
from typing import NamedTuple

# A word: letters/digits (any script), joined by inner apostrophes or hyphens ("dog's", "one-way").
# Hyphenated compounds are single words, so "black-and-white" or "two-story" is never half-flipped.
WORD_RE = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")


class Token(NamedTuple):
    text: str
    low: str
    start: int
    end: int


def tokenize(text: str) -> list[Token]:
    """The words of ``text`` with their [start, end) character offsets."""
    new = tuple.__new__  # the NamedTuple constructor is a Python function, this is its C core
    return [new(Token, (m[0], m[0].lower(), m.start(), m.end())) for m in WORD_RE.finditer(text)]


def is_title(word: str) -> bool:
    """True for "Dog", "A": first letter upper-case, the rest lower-case."""
    return word[:1].isupper() and (len(word) == 1 or word[1:] == word[1:].lower())


def capitalized(word: str) -> str:
    """``word`` with its first letter upper-case, unless that letter has no capital that lower-cases
    back to it ("ß" -> "SS", the micro sign "µ" -> Greek "Μ" -> "μ"): then as is, since the change
    would also change the word's spelling."""
    first = word[:1].upper()
    return first + word[1:] if first.lower() == word[:1].lower() else word


def match_case(model: str, word: str, *, sentence_start: bool = False, shouting: bool = False) -> str:
    """``word`` written in the case of ``model``: ALL CAPS in an all-caps caption, Capitalised when
    ``model`` is ("Two" -> "Three") or starts a sentence ("TV stand" -> "Dog stand"); otherwise as
    is, so a mid-sentence acronym ("a TV") does not make its replacement upper-case."""
    if shouting and model.isupper():
        return word.upper()
    if model[:1].isupper() and (sentence_start or is_title(model.split()[0])):
        return capitalized(word)
    return word


def same_case(model: str, word: str) -> str:
    """``word`` (another form of the word ``model``, e.g. its plural) in the case of ``model``."""
    if model.isupper():
        return word.upper()
    return capitalized(word) if model[:1].isupper() else word
