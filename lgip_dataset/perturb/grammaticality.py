"""Human captions that are broken English already: any flip of one is an invalid pair whatever it changes.

Each rule reads the one caption alone (no counts of other captions) and is kept for its precision on val2017:
an article that does not fit the next word ("a elephant"), a plural count before a singular noun ("Two girl"),
a misspelt word ("congaing", "EGYPTION"), a subject and verb of different numbers ("A man prepare", "Girls
stands"), "a" before a plural noun ("a khaki pants", "A women"), a doubled or misplaced function word ("a the
couch", "of of"), "to" for "two" ("with to small boys") and "of" for "off"/"on" after a posture ("sitting of a
TV"). Word frequencies come from ``wordfreq`` (its English list), word classes from ``lemminflect``.
"""
from __future__ import annotations

import math
import string
from collections.abc import Callable
from functools import lru_cache

from lgip_dataset.perturb.agreement import (AUXILIARY_NUMBER, can_be_noun, is_verb_only, present_verb_number,
                                            word_lemmas)
from lgip_dataset.perturb.context import CaptionContext
from lgip_dataset.perturb.lexicon import Lexicon
from lgip_dataset.perturb.places import load_places

RARE_ZIPF = 2.5  # a word unknown to lemminflect and rarer than this (Zipf scale) may be misspelt...
NEAR_MARGIN = 2.5  # ...when a word one edit away is this much more frequent ("diffrent" -> "different")
COMPOUND_ZIPF = 3.0  # a word wordfreq has never seen is no misspelling when it joins two words this frequent
_PLURAL_DETERMINERS = frozenset({"these", "those", "several", "many"})
_VOWEL_LETTER_CONSONANT_SOUND = ("eu", "one", "once", "ewe")  # "a European", "a one-way street"
_U_VOWEL_SOUND = ("um", "un", "up", "ug")  # "an umbrella", "an upside", "an ugly"; but "a unicorn" ("uni")
_SUBJECT_DETERMINERS = frozenset({"a", "an", "the", "one", "this", "that", "these", "those", "some", "several",
                                  "many"})
_SINGULAR_DETERMINERS = ("a", "an", "one", "every", "this")  # never before a plural noun ("a khaki pants")
_QUANTITY_WORDS = frozenset({"few", "many", "great", "good", "little", "whole", "lot", "dozen", "couple",
                             "number", "other", "others"})  # "a few", "a great many": a plural follows
_AFTER_ARTICLE = frozenset({"a", "an", "the", "of", "at", "with", "is", "are", "and", "for", "from", "by"})
_NEVER_DOUBLED = frozenset({"a", "an", "the", "of", "with", "and", "is", "are", "at", "for", "from", "by", "to",
                            "in"})  # "on on" may be a particle and a preposition ("turned on on a desk")
_BEFORE_TWO = frozenset({"with", "of", "at", "by", "from", "for", "near", "between", "and"})  # "with to small boys"
_POSTURES = frozenset({"sitting", "standing", "laying", "lying", "hanging", "jumping", "getting", "walking",
                       "riding", "flying", "resting", "sleeping", "parked", "leaning", "floating", "climbing",
                       "falling", "perched", "running", "skiing", "surfing"})  # "sitting of a TV": off, on
_DETERMINERS = frozenset({"a", "an", "the", "this", "that", "his", "her", "their", "its", "my", "your", "our"})
_ANIMATE = frozenset({"person", "animal"})  # supercategories whose subject any present verb must agree with
_POSSESSIVE_MARKS = ("'", "’")


@lru_cache(maxsize=1)
def _frequencies() -> dict[str, float]:
    from wordfreq import get_frequency_dict

    return get_frequency_dict("en")


def zipf(word: str) -> float:
    """``word``'s frequency on the Zipf scale (log10 per billion words; 0 for a word wordfreq never saw)."""
    freq = _frequencies().get(word)
    return math.log10(freq) + 9 if freq else 0.0


@lru_cache(maxsize=8192)
def _nearest_zipf(word: str) -> float:
    """The highest Zipf frequency of a word one edit (a letter dropped, added, changed or two swapped) away."""
    letters, best = string.ascii_lowercase, 0.0
    for i in range(len(word) + 1):
        head, tail = word[:i], word[i:]
        near = [head + c + tail for c in letters]
        if tail:
            near += [head + tail[1:]] + [head + c + tail[1:] for c in letters if c != tail[0]]
        if len(tail) > 1:
            near.append(head + tail[1] + tail[0] + tail[2:])
        best = max(best, max(map(zipf, (w for w in near if w != word))))
    return best


def _known(word: str) -> bool:
    return bool(word_lemmas(word))


def _compound(word: str) -> bool:
    """True for two frequent words written as one ("littleboy", "streetlight")."""
    return any(_known(word[:k]) and _known(word[k:]) and min(zipf(word[:k]), zipf(word[k:])) >= COMPOUND_ZIPF
               for k in range(3, len(word) - 2))


_lexicon_words: tuple[Lexicon, frozenset[str]] | None = None


def _lexicon_word(lex: Lexicon, word: str) -> bool:
    """True for a word of the project's lexicons (object nouns, places, colours, numbers, function words)."""
    global _lexicon_words
    if _lexicon_words is None or _lexicon_words[0] is not lex:
        words = {w for form in lex.noun_forms for w in form} | {w for form in load_places().group_of for w in form}
        _lexicon_words = lex, frozenset(words | set(lex.color_group) | set(lex.numbers) | lex.function_words)
    return word in _lexicon_words[1]


@lru_cache(maxsize=8192)
def misspelt(word: str) -> bool:
    """True for a lower-case word of 3+ letters that lemminflect does not know and wordfreq finds rare: never seen
    and no compound of two words, or rarer than ``RARE_ZIPF`` with a word one edit away ``NEAR_MARGIN`` more
    frequent ("holdng", "diffrent"; not "skateboarder", "cabinetry")."""
    if len(word) < 3 or not word.isalpha() or _known(word):
        return False
    frequency = zipf(word)
    if frequency == 0:
        return not _compound(word)
    return frequency < RARE_ZIPF and _nearest_zipf(word) >= frequency + NEAR_MARGIN


def spelling(ctx: CaptionContext) -> bool:
    """A misspelt word, not of the lexicons, not a capitalised name inside a mixed-case caption."""
    return any(misspelt(tok.low) and not _lexicon_word(ctx.lex, tok.low)
               and (ctx.shouting or not tok.text[:1].isupper() or ctx.sentence_start(i))
               for i, tok in enumerate(ctx.tokens))


def article(ctx: CaptionContext) -> bool:
    """"a" before a vowel sound or "an" before a consonant ("a elephant", "a umbrella", "A EGYPTION", "an dog"; a
    "u" word only where it surely opens with a vowel sound: "a unicorn", "a used car" are sound)."""
    for i, tok in enumerate(ctx.tokens):
        nxt = ctx.next_word(i)
        if nxt is None or not nxt.low[:1].isalpha():
            continue
        word = nxt.low
        vowel = ((word[0] in "aeio" and not word.startswith(_VOWEL_LETTER_CONSONANT_SOUND))
                 or (word.startswith(_U_VOWEL_SOUND) and not word.startswith("uni")))
        if (tok.low == "a" and vowel) or (
                tok.low == "an" and word[0] not in "aeiouh" and nxt.text.islower() and word.isalpha()):  # "an mp3"
            return True
    return False


def _noun_follows(ctx: CaptionContext, i: int, plural_too: bool) -> bool:
    """True when the word after token ``i`` may go on with its noun phrase ("two computer screens", "a sports
    car"): a lexicon noun, or a word lemminflect may take for a noun (or, with ``plural_too``, any word in -s)
    that is no function word and no participle; False at a function word, a participle, the end or (unless
    ``plural_too``) an -s verb."""
    nxt = ctx.next_word(i)
    if nxt is None or nxt.low in ctx.lex.function_words or nxt.low.endswith(("ing", "ed")):
        return False
    if i + 1 in ctx.units or (plural_too and nxt.low.endswith("s")):
        return True
    return can_be_noun(nxt.low) and present_verb_number(nxt.low) != "singular"


def plural_count(ctx: CaptionContext) -> bool:
    """A plural count or demonstrative before a singular object noun, no colour, that ends its phrase ("Two girl",
    "these man"; not "two computer screens", "several orange cones")."""
    singular = {u.start: u.end for u in ctx.units.values() if u.form is not None and u.form.number == "singular"
                and ctx.tokens[u.start].low not in ctx.lex.color_group}  # "three orange, white and black fish"
    return any((ctx.lex.numbers.get(tok.low, 0) >= 2 or tok.low in _PLURAL_DETERMINERS) and i + 1 in singular
               and ctx.next_word(i) is not None and not _noun_follows(ctx, singular[i + 1] - 1, True)
               for i, tok in enumerate(ctx.tokens))


def _adjective(ctx: CaptionContext, low: str) -> bool:
    lemmas = word_lemmas(low)
    return low in ctx.lex.color_group or ("ADJ" in lemmas and "VERB" not in lemmas)


def _possessive(ctx: CaptionContext, i: int) -> bool:
    tok = ctx.tokens[i]
    return tok.low.endswith(("'s", "’s")) or ctx.text[tok.end:tok.end + 1] in _POSSESSIVE_MARKS


def _after_adjectives(ctx: CaptionContext, i: int) -> int:
    """The first token from ``i`` on that is not an adjective joined to the word before it."""
    while i < len(ctx.tokens) and ctx.joined(i - 1, i) and _adjective(ctx, ctx.tokens[i].low) \
            and ctx.tokens[i].low not in _QUANTITY_WORDS:
        i += 1
    return i


def _plural_noun(ctx: CaptionContext, i: int) -> int | None:
    """The end of a plural noun at token ``i`` (a lexicon plural, a pair noun such as "pants", a noun lemminflect
    knows only as a plural in -s), not a possessive; else None."""
    if i >= len(ctx.tokens) or not ctx.joined(i - 1, i):
        return None
    unit = ctx.units.get(i)
    if unit is not None:
        plural = unit.form is not None and unit.form.number == "plural" and not _possessive(ctx, unit.end - 1)
        return unit.end if plural else None
    word = ctx.tokens[i].low
    lemmas = word_lemmas(word)
    plural = word in ctx.lex.pair_nouns or (word.endswith("s") and set(lemmas) == {"NOUN"}
                                            and word not in lemmas["NOUN"])
    return i + 1 if plural and not _possessive(ctx, i) else None


def singular_before_plural(ctx: CaptionContext) -> bool:
    """"a"/"an"/"one"/"every"/"this", adjectives and a plural noun that ends its phrase ("a khaki pants", "A women
    is") or names persons ("A women tennis player"); not a quantity ("a few people", "a great many", "a pair of
    pants") or another plural modifying a noun ("a sports car")."""
    for i, tok in enumerate(ctx.tokens):
        if tok.low not in _SINGULAR_DETERMINERS:
            continue
        start = _after_adjectives(ctx, i + 1)
        end = _plural_noun(ctx, start)
        if end is not None and (not _noun_follows(ctx, end - 1, False) or _persons(ctx, start)):
            return True
    return False


def _persons(ctx: CaptionContext, i: int) -> bool:
    """True when the noun at token ``i`` is a lexicon form of a person group ("women", "men")."""
    unit = ctx.units.get(i)
    return unit is not None and unit.form is not None and ctx.lex.groups[unit.form.group].supercategory == "person"


@lru_cache(maxsize=4096)
def _past_form(word: str) -> bool:
    from lemminflect import getInflection

    return any(word in getInflection(lemma, tag) for lemma in word_lemmas(word).get("VERB", ())
               for tag in ("VBD", "VBN"))


def agreement(ctx: CaptionContext) -> bool:
    """A sentence's subject (a determiner or count, adjectives, a lexicon noun) and the verb right after it of
    different numbers: any present verb after a person or an animal ("A man prepare", "Girls stands"), an
    auxiliary after any other noun ("Pizza are"). A bare verb after a singular must be no noun ("A dog show"),
    and a past form ("The man found") is no present verb."""
    for start in (i for i in range(len(ctx.tokens)) if ctx.sentence_start(i)):
        first = start + (ctx.tokens[start].low in _SUBJECT_DETERMINERS or ctx.tokens[start].low in ctx.lex.numbers)
        if first == start and _adjective(ctx, ctx.tokens[start].low):  # "Young girls stands"
            first += 1
        unit = ctx.units.get(_after_adjectives(ctx, first))
        if unit is None or unit.form is None or unit.form.number not in ("singular", "plural") \
                or _possessive(ctx, unit.end - 1) or any(not ctx.joined(k, k + 1) for k in range(start, unit.end - 1)):
            continue
        verb = ctx.next_word(unit.end - 1)
        if verb is None or _past_form(verb.low) or (verb.low in ctx.lex.function_words
                                                    and verb.low not in AUXILIARY_NUMBER):
            continue
        if verb.low not in AUXILIARY_NUMBER and ctx.lex.groups[unit.form.group].supercategory not in _ANIMATE:
            continue
        number = present_verb_number(verb.low)
        if (unit.form.number == "singular" and number == "plural" and is_verb_only(verb.low)) or (
                unit.form.number == "plural" and number == "singular"):
            return True
    return False


def function_words(ctx: CaptionContext) -> bool:
    """An article before another article or a preposition ("a the couch", "A with plate"), or a function word
    written twice ("of of", "a a")."""
    for i, tok in enumerate(ctx.tokens):
        nxt = ctx.next_word(i)
        if nxt is not None and ((tok.low in ("a", "an", "the") and nxt.low in _AFTER_ARTICLE)
                                or (tok.low == nxt.low and tok.low in _NEVER_DOUBLED)):
            return True
    return False


def to_for_two(ctx: CaptionContext) -> bool:
    """"to" for "two" after a preposition, before adjectives and a plural noun ("with to small boys")."""
    return any(tok.low == "to" and (prev := ctx.prev_word(i)) is not None and prev.low in _BEFORE_TWO
               and _plural_noun(ctx, _after_adjectives(ctx, i + 1)) is not None
               for i, tok in enumerate(ctx.tokens))


def posture_of(ctx: CaptionContext) -> bool:
    """"of" for "off"/"on" after a posture or a motion ("sitting of a TV", "getting of a plane"), not a noun's
    ("the running of the bulls")."""
    return any(tok.low in _POSTURES and (nxt := ctx.next_word(i)) is not None and nxt.low == "of"
               and ((prev := ctx.prev_word(i)) is None or prev.low not in _DETERMINERS)
               for i, tok in enumerate(ctx.tokens))


RULES: dict[str, Callable[[CaptionContext], bool]] = {
    "article": article, "plural_count": plural_count, "spelling": spelling, "agreement": agreement,
    "singular_before_plural": singular_before_plural, "function_words": function_words, "to_for_two": to_for_two,
    "posture_of": posture_of}


def broken(ctx: CaptionContext) -> bool:
    """True when any rule finds the caption broken English."""
    return any(rule(ctx) for rule in RULES.values())
