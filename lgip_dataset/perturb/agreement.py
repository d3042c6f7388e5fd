"""English agreement helpers (a/an, singular/plural), cached.

Articles are only ever chosen for lexicon words (the inserted replacement), a closed set, so a
vowel-sound rule with its exceptions is exact there; a test checks it against ``inflect`` for every
lexicon form. ``inflect`` itself (several seconds to import) is loaded only for the rare singular
of a noun outside the lexicon.
"""
from __future__ import annotations

from functools import lru_cache

_SILENT_H = ("hour", "honest", "honor", "honour", "heir")
_CONSONANT_SOUND = ("uni", "use", "usu", "uti", "ute", "ura", "uri", "eu", "ewe", "one", "once")
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


# Subject-verb agreement: be/have/do (and their negated forms) by table, every other verb by lemminflect.
AUXILIARY_NUMBER = {"is": "are", "are": "is", "was": "were", "were": "was", "has": "have", "have": "has",
                    "does": "do", "do": "does", "isn't": "aren't", "aren't": "isn't", "wasn't": "weren't",
                    "weren't": "wasn't", "hasn't": "haven't", "haven't": "hasn't", "doesn't": "don't",
                    "don't": "doesn't"}
SINGULAR_AUXILIARIES = frozenset(("is", "was", "has", "does", "isn't", "wasn't", "hasn't", "doesn't"))


@lru_cache(maxsize=8192)
def word_lemmas(word: str) -> dict[str, tuple[str, ...]]:
    """Every lemma of ``word`` by universal part of speech, from lemminflect's lexicon ({} when unknown)."""
    from lemminflect import getAllLemmas

    return getAllLemmas(word)


def _inflection(lemma: str, tag: str) -> str | None:
    from lemminflect import getInflection

    forms = getInflection(lemma, tag)
    return forms[0] if forms else None


@lru_cache(maxsize=8192)
def present_verb_number(word: str) -> str | None:
    """"singular" or "plural" when ``word`` (lower-case) is an auxiliary or a present-tense verb form
    that agrees with its subject ("is", "stands" -> singular; "are", "stand" -> plural), else None.
    A bare form ("stand") is also the infinitive: callers only ask where a finite verb stands."""
    if word in AUXILIARY_NUMBER:
        return "singular" if word in SINGULAR_AUXILIARIES else "plural"
    for lemma in word_lemmas(word).get("VERB", ()):
        if word == _inflection(lemma, "VBZ"):
            return "singular"
        if word == _inflection(lemma, "VBP") and word != _inflection(lemma, "VBD"):
            return "plural"
    return None


@lru_cache(maxsize=8192)
def verb_for_number(word: str, singular: bool) -> str | None:
    """The present-tense form of the verb ``word`` (lower-case) that agrees with a singular or
    plural subject ("stand", True -> "stands"; "flies", False -> "fly"); ``word`` itself when it
    already agrees; None when it is no present-tense verb."""
    number = present_verb_number(word)
    if number is None:
        return None
    if (number == "singular") == singular:
        return word
    if word in AUXILIARY_NUMBER:
        return AUXILIARY_NUMBER[word]
    for lemma in word_lemmas(word).get("VERB", ()):
        form = _inflection(lemma, "VBZ" if singular else "VBP")
        if form:
            return form
    return None


@lru_cache(maxsize=8192)
def noun_for_number(word: str, singular: bool) -> str | None:
    """``word`` (a lower-case noun) made singular or plural by lemminflect ("skiers" -> "skier",
    "skier" -> "skiers"), also for words outside its lexicon; None for a non-word."""
    from lemminflect import getInflection, getLemma

    if not word.isalpha():
        return None
    lemmas = getLemma(word, "NOUN", lemmatize_oov=True)
    lemma = lemmas[0] if lemmas else word
    if singular:
        return lemma
    forms = getInflection(lemma, "NNS", inflect_oov=True)
    return forms[0] if forms else None


@lru_cache(maxsize=8192)
def is_noun_like(word: str, adjective_too: bool = False) -> bool:
    """True for a word that can only be a noun (or a noun and a verb) where it stands before or
    after another noun: lemminflect lists it as a noun and not as an adjective or adverb
    ("street", "faucet", "house"), or does not know it at all ("cel", "honda"). Participles and
    -s verb forms are verbs there ("parked", "walking", "stands"). With ``adjective_too`` a word
    that may also be an adjective counts ("flip" of "skateboard flip")."""
    if not word.isalpha() or len(word) < 3:
        return False
    lemmas = word_lemmas(word)
    if not lemmas:
        return True
    if "NOUN" not in lemmas or ("ADJ" in lemmas and not adjective_too) or "ADV" in lemmas:
        return False
    return not any(word in (_inflection(lemma, t) for t in ("VBZ", "VBD", "VBN", "VBG"))
                   for lemma in lemmas.get("VERB", ()))


@lru_cache(maxsize=8192)
def is_verb_only(word: str) -> bool:
    """True for a present-tense verb form that cannot be a noun ("sits", "stand" is a noun too)."""
    return present_verb_number(word) is not None and "NOUN" not in word_lemmas(word)


@lru_cache(maxsize=8192)
def can_be_noun(word: str) -> bool:
    """True when lemminflect lists ``word`` as a noun form, or does not know it."""
    return word.isalpha() and (not word_lemmas(word) or "NOUN" in word_lemmas(word))
