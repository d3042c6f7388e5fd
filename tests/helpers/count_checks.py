"""Three error classes of a count flip, found from the texts alone (the flip generator's rules are not asked):
a determiner or demonstrative before the new count ("The a bear is"), a noun the subject holds left in the
subject's old number ("A pizza on tin plates", "two kids riding on a skateboard", "Two men in a green shirt")
and "a group of" before a thing ("A group of red laptops")."""
from __future__ import annotations

import difflib
import re

from lgip_dataset.perturb.agreement import noun_for_number
from lgip_dataset.perturb.lexicon import load_lexicon
from lgip_dataset.perturb.places import load_places

LEX = load_lexicon()
DETERMINER_CLASH = re.compile(r"\b(?:the|this|that|these|those|his|her|their|its|my|your|our)\s+(?:a|an)\b", re.I)
RELATIVE_BE = ("that", "who", "which", "is", "are", "was", "were")
HOLDING = ("riding", "rides", "ride", "wearing", "wears", "wear", "holding", "carrying", "with")
PREPOSITIONS = ("on", "in", "onto")
PLACES = {" ".join(words) for words in load_places().group_of}
DETERMINERS = ("a", "an", "the", "his", "her", "their", "its", "some", "two", "three")


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z][a-z'-]*|[^\sa-z]", text.lower())


def _number(word: str) -> str | None:
    """"singular" or "plural" for a noun that has both forms ("sheep" has neither), else None (the lexicon's
    form first: "people" is the plural of "person")."""
    form = LEX.noun_forms.get((word,))
    if form is not None:
        return form.number if form.number in ("singular", "plural") else None
    singular, plural = noun_for_number(word, True), noun_for_number(word, False)
    if singular is None or plural is None or singular == plural:
        return None
    return "singular" if word == singular else "plural" if word == plural else None


def _phrase_noun(words: list[str], i: int) -> str | None:
    """The last word of the noun phrase opening at ``words[i]`` (determiners skipped, at most three words,
    ended by punctuation, a function word or an -ing form); None for no noun, a colour left without its noun
    ("with white and gray bedding"), a place or the noun of a compound preposition."""
    phrase, window = [], words[i:i + 3]  # at most three words from the preposition's object on
    while window and window[0] in DETERMINERS:
        window = window[1:]
        i += 1
    for word in window:
        if not word[0].isalpha() or word in LEX.function_words or word in HOLDING or word.endswith("ing"):
            break
        phrase.append(word)
    end = i + len(phrase)
    if len(phrase) == len(window) and end < len(words) and words[end][0].isalpha() and words[end] not in LEX.function_words:
        return None  # the noun is farther than three words: not judged
    if not phrase or phrase[-1] in LEX.color_group or (end < len(words) and words[end] == "of") or " ".join(phrase[-1:]) in PLACES or (
            " ".join(phrase[-1:] + words[end:end + 1]) in PLACES):
        return None  # a place ("on the beach") or a compound preposition's noun ("in front of") is held by nothing
    return phrase[-1]


def _counted_noun(words: list[str], start: int) -> int | None:
    """The index of the first lexicon noun with a number among ``words[start:start + 5]`` (the counted noun:
    a hard count flip counts a COCO object noun), else None."""
    return next((i for i in range(start, min(start + 5, len(words))) if (words[i],) in LEX.noun_forms
                 and _number(words[i]) is not None), None)


def held_nouns(words: list[str], head: int) -> list[str]:
    """The nouns the subject ending at ``words[head]`` holds: directly after "riding"/"wearing"/..., through a
    preposition after such a word ("riding on a skateboard"), through "on" right after it or after "that is"
    ("Two pizzas on tin plates"), or through "in" before a garment anywhere ("in a green shirt")."""
    held, i = [], head + 1
    while i < len(words) and words[i] in RELATIVE_BE:
        i += 1
    holding = i < len(words) and words[i] in HOLDING
    if holding:
        noun = _phrase_noun(words, i + 1)
        held += [noun] if noun else []
        i += 1
    if i < len(words) and words[i] in PREPOSITIONS and (holding or words[i] != "in"):  # "in" holds garments only
        noun = _phrase_noun(words, i + 1)
        held += [noun] if noun else []
    for k in range(head + 1, len(words) - 1):
        noun = _phrase_noun(words, k + 1) if words[k] == "in" else None
        if noun in LEX.garments:
            held.append(noun)
    return held


def count_errors(caption: str, variant: str) -> list[str]:
    """What is wrong with a count flip of ``caption`` (empty when nothing of the three classes)."""
    errors = []
    if len(DETERMINER_CLASH.findall(variant)) > len(DETERMINER_CLASH.findall(caption)):
        errors.append("determiner before the new count")
    if "a group of" in variant.lower() and "a group of" not in caption.lower():
        after = _words(variant.lower().split("a group of", 1)[1])[:4]
        groups = {LEX.noun_forms[(w,)].group for w in after if (w,) in LEX.noun_forms}
        if not any(LEX.groups[g].supercategory in LEX.quantifier_supercategories["a group of"] for g in groups):
            errors.append("'a group of' before a thing")
    before, after = _words(caption), _words(variant)
    changed = [op for op in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes() if op[0] != "equal"]
    if changed and changed[0][1] <= 1 and changed[0][3] <= 1:  # a count of the subject, the caption's first words
        old_head, new_head = _counted_noun(before, changed[0][1]), _counted_noun(after, changed[0][3])
        if old_head is not None and new_head is not None and _number(before[old_head]) != _number(after[new_head]):
            if any(_number(noun) == _number(before[old_head]) for noun in held_nouns(after, new_head)):
                errors.append("a held noun of the old number")
    return errors
