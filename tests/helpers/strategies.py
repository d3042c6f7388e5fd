"""Hypothesis strategies for captions: COCO-like word soup from the lexicons, any Unicode, and seeds."""
from __future__ import annotations

from hypothesis import strategies as st

from lgip_dataset.perturb.lexicon import load_lexicon

LEX = load_lexicon()
NOUNS = sorted({w for key in LEX.noun_forms for w in [" ".join(key)]})
WORDS = sorted(set(NOUNS) | set(LEX.color_group) | set(LEX.numbers) | set(LEX.function_words)
               | {"scattered", "catcher", "business", "category", "sitting", "riding", "way", "juice", "holding",
                  "another", "one-way", "dog's", "TV", "Honda", "a", "an", "of", "is", "are", "stand", "station"})
SEPARATORS = [" ", " ", " ", " ", ", ", ". ", " - ", "  ", "\n", " and "]


def _case(word: str, style: int) -> str:
    return word.upper() if style == 1 else word.capitalize() if style == 2 else word


@st.composite
def word_soup(draw) -> str:
    """Caption-like strings made of lexicon words (nouns, multiword nouns, colors, numbers, function
    words, near misses) with random separators and capitalisation."""
    words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=14))
    styles = draw(st.lists(st.sampled_from([0, 0, 0, 1, 2]), min_size=len(words), max_size=len(words)))
    seps = draw(st.lists(st.sampled_from(SEPARATORS), min_size=len(words), max_size=len(words)))
    text = "".join(_case(w, c) + s for w, c, s in zip(words, styles, seps)).strip()
    return text + draw(st.sampled_from(["", ".", "!", "?", " .", "..."]))


unicode_text = st.text(min_size=1, max_size=120)
mixed = st.builds(lambda a, b, c: a + b + c, word_soup(), unicode_text, word_soup())
captions = st.one_of(word_soup(), unicode_text, mixed).filter(lambda s: s.strip())
seeds = st.integers(min_value=-(2 ** 63), max_value=2 ** 63)
