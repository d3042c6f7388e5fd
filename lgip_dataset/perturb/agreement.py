"""English agreement helpers (a/an, singular/plural), cached.

Articles are only ever chosen for lexicon words (the inserted replacement), a closed set, so a
vowel-sound rule with its exceptions is exact there; a test checks it against ``inflect`` for every
lexicon form. ``inflect`` itself (several seconds to import) is loaded only for the rare singular
of a noun outside the lexicon.
"""
from __future__ import annotations

from functools import lru_cache

_SILENT_H = ("hour", "honest", "honor", "honour", "heir")
_CONSONANT_SOUND = ("uni", "use", "usu", "uti", "ute", "ura", "eu", "ewe", "one", "once")
_VOWEL_SOUND_DIGITS = ("8", "11", "18")


@lru_cache(maxsize=4096)
def indefinite_article(phrase: str) -> str:
    """"a" or "an" for ``phrase`` ("an elephant", "a giraffe", "an eight", "a unicycle")."""
    word = phrase.split(" ", 1)[0].lower()
    if word.startswith(_SILENT_H):
        return "an"
    if word.startswith(_CONSONANT_SOUND):
        return "a"
    if word[:1].isdigit():
        return "an" if word.startswith(_VOWEL_SOUND_DIGITS) and not word.startswith(("80", "180", "110")) else "a"
    return "an" if word[:1] in "aeiou" else "a"


@lru_cache(maxsize=1)
def _inflect_engine():
    import inflect

    return inflect.engine()


@lru_cache(maxsize=4096)
def singular_of(word: str) -> str | None:
    """The singular of a plural noun not in the lexicon ("skiers" -> "skier"), else None."""
    low = word.lower()
    if not low.endswith("s") or not low.isalpha():
        return None
    singular = _inflect_engine().singular_noun(low)
    return singular or None
