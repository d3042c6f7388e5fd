"""Which occurrences of lexicon words are used in the sense a flip needs (the disambiguation rules)."""
from __future__ import annotations

import re

from lgip_dataset.perturb.agreement import word_lemmas, can_be_noun, is_noun_like, present_verb_number
from lgip_dataset.perturb.context import POSSESSIVE, CaptionContext, Unit
from lgip_dataset.perturb.text import Token

SINGULAR_CUES_BEFORE = frozenset({"one", "this", "that", "each", "every", "another"})
SINGULAR_CUES_AFTER = frozenset({"is", "was", "has", "isn't", "wasn't", "doesn't"})
PREPOSITIONS = frozenset(("on", "in", "at", "near", "under", "underneath", "beneath", "below", "above", "over",
                          "behind", "beside", "by", "with", "of", "onto", "into", "across", "along", "against",
                          "toward", "towards", "through", "around", "atop", "between", "among", "from", "for",
                          "inside", "outside", "without", "past", "like"))
NP_DETERMINERS = frozenset(("a", "an", "the", "this", "that", "these", "those", "his", "her", "their", "its", "my",
                            "our", "your", "some", "many", "several", "two", "three", "four", "five"))
COLOR_LINK = re.compile(r"\s*(?:,\s*(?:and|or|&)?|and|or|&)\s*")  # "red and white", "red, white", "red & white"


def is_object_noun(ctx: CaptionContext, unit: Unit) -> bool:
    """A lexicon noun used as the head of its phrase (or as a singular possessor: "dog's bowl").

    Not flipped: blocked compounds ("toilet bowl"); a singular noun that modifies the next word
    ("train station", "baby elephant", "sink faucet": a listed modifier head, an object noun or a
    word that can only be a noun); the head of a noun-noun compound ("city bus", "street lamp",
    "Honda motorcycle"); a plural possessor, which names a kind ("men's room", "ladies' shoes");
    the noun of a partitive frame ("pieces of luggage", "a pair of scissors"); a noun after a
    coreference cue ("another zebra"); a ``head_only`` noun followed by a content word other than a
    participle ("remote area", but "remote lying on a couch"); "orange" used as a color.
    """
    if unit.form is None:
        return False
    last = unit.end - 1
    possessive = unit.span[1] < ctx.tokens[last].end or ctx.text[ctx.tokens[last].end:][:1] in ("'", "’")
    if possessive:
        return unit.form.number != "plural"
    nxt = ctx.next_word(last)
    group = ctx.lex.groups[unit.form.group]
    if nxt is not None and unit.form.number != "plural" and modifies_next(ctx, unit, nxt):
        return False
    if group.head_only and ctx.is_content(nxt) and not nxt.low.endswith("ing"):
        return False
    if compound_modifier(ctx, unit.start) or in_partitive_frame(ctx, unit.start) or after_coreference_cue(ctx, unit.start):
        return False
    first = ctx.tokens[unit.start]
    return not (unit.start == last and first.low in ctx.lex.color_group and is_color_use(ctx, unit.start))


def modifies_next(ctx: CaptionContext, unit: Unit, nxt: Token) -> bool:
    """True when the singular noun ``unit`` modifies ``nxt``, the word after it: a listed modifier
    head, an object noun, a word that can only be a noun ("sink faucet"), or a plural that could
    also be a verb where no verb can stand, in the object of a preposition ("among the fallen tree
    limbs"; but "a dog walks")."""
    if nxt.low in ctx.lex.modifier_heads or (unit.end in ctx.units and ctx.units[unit.end].form is not None):
        return True
    if not ctx.is_content(nxt) or nxt.low in ctx.lex.color_group:
        return False
    if nxt.low in PREPOSITIONS:
        return False
    return is_noun_like(nxt.low, adjective_too=True) or (
        can_be_noun(nxt.low) and present_verb_number(nxt.low) == "singular" and after_preposition(ctx, unit.start))


def after_preposition(ctx: CaptionContext, i: int) -> bool:
    """True when the noun phrase ending in the noun at token ``i`` follows a preposition ("among
    the fallen tree"), across its determiner and adjectives."""
    j = i - 1
    while j >= 0 and ctx.joined(j, j + 1) and ctx.tokens[j].low not in PREPOSITIONS \
            and (ctx.tokens[j].low in NP_DETERMINERS or (ctx.is_content(ctx.tokens[j]) and not is_noun_like(ctx.tokens[j].low))):
        j -= 1
    return j >= 0 and ctx.joined(j, j + 1) and ctx.tokens[j].low in PREPOSITIONS


def compound_modifier(ctx: CaptionContext, i: int) -> bool:
    """True when the word before token ``i`` is a noun that modifies it: "city" of "city bus",
    "street" of "street lamp", "Honda" of "Honda motorcycle", any capitalised word inside a
    sentence ("Nokia Windows phone"), a hyphenated compound ending in a noun ("semi-trailer
    truck"), a listed gerund ("warning sign") (not an adjective, participle, verb form, color,
    number, possessive or function word)."""
    prev = ctx.prev_word(i)
    if prev is None or not ctx.is_content(prev) or prev.low in ctx.lex.color_group or prev.low.endswith(POSSESSIVE):
        return False
    proper = prev.text[:1].isupper() and not ctx.shouting and not ctx.sentence_start(i - 1)
    last = prev.low.rsplit("-", 1)[-1]  # "semi-trailer truck", "double-decker bus"
    hyphenated = "-" in prev.low and bool(word_lemmas(last)) and is_noun_like(last)
    return (proper or hyphenated or prev.low in ctx.lex.gerund_modifiers or is_noun_like(prev.low)
            and not any(prev.low == phrase[-1] for phrase in ctx.lex.quantity_phrases))  # "a dozen donuts"


MAX_MODIFIERS = 3  # words between a noun and its article or "of" that the rules below look across


def in_partitive_frame(ctx: CaptionContext, i: int) -> bool:
    """True when token ``i`` follows "<partitive head> of" (optionally with a determiner and up to
    MAX_MODIFIERS content words between): "pieces of luggage", "a slice of the pizza", "a pair of
    scissors", "a pair of gold scissors"."""
    j = i - 1
    while j >= i - MAX_MODIFIERS and j >= 1 and ctx.joined(j, j + 1) and ctx.is_content(ctx.tokens[j]):
        j -= 1
    if j >= 1 and ctx.joined(j, j + 1) and ctx.tokens[j].low in ("the", "a", "an", "his", "her", "their", "some"):
        j -= 1
    return (j >= 1 and ctx.joined(j, j + 1) and ctx.tokens[j].low == "of" and ctx.joined(j - 1, j)
            and ctx.tokens[j - 1].low in ctx.lex.partitive_heads)


def after_coreference_cue(ctx: CaptionContext, i: int) -> bool:
    """True when "another", "other" or "both" comes right before token ``i``, or one adjective
    before it ("another large zebra")."""
    cues = ctx.lex.coreference_cues
    prev = ctx.prev_word(i)
    if prev is None:
        return False
    if prev.low in cues:
        return True
    before = ctx.prev_word(i - 1)
    return before is not None and before.low in cues and ctx.is_content(prev) and not is_noun_like(prev.low)


def _determiner_before(ctx: CaptionContext, i: int) -> Token | None:
    """The first word before the noun at token ``i`` that is none of its modifiers (up to
    MAX_MODIFIERS adjectives, participles, adverbs and colours, "and" between them): "a" of "a small
    white sheep", "a black and a white sheep", "a freshly shorn sheep"; "of" of "a herd of white
    sheep"; None at the caption's start or at punctuation ("a small, white sheep")."""
    j, modifiers = i - 1, 0
    while j >= 0 and ctx.joined(j, j + 1):
        tok = ctx.tokens[j]
        if tok.low == "and":
            j -= 1
            continue
        if modifiers == MAX_MODIFIERS or not (tok.low in ctx.lex.color_group
                                              or (ctx.is_content(tok) and not is_noun_like(tok.low))):
            return tok
        modifiers += 1
        j -= 1
    return None


def noun_number(ctx: CaptionContext, unit: Unit) -> str:
    """"singular" or "plural". A noun right after "a"/"an" is singular even if written plural ("a
    women"), one right after a number above one plural even if written singular ("two giraffe");
    words like "sheep" are decided from their neighbours ("a white sheep", "this sheep", "the sheep
    is", "sheep are"; across the modifiers of :func:`_determiner_before`), plural by default."""
    prev, nxt = ctx.prev_word(unit.start), ctx.next_word(unit.end - 1)
    if prev is not None and prev.low in ("a", "an"):
        return "singular"
    if prev is not None and ctx.lex.numbers.get(prev.low, 1) > 1:
        return "plural"
    if unit.form.number != "both":
        return unit.form.number
    det = _determiner_before(ctx, unit.start)
    if det is not None and ctx.lex.numbers.get(det.low, 1) > 1:
        return "plural"
    if (det is not None and det.low in SINGULAR_CUES_BEFORE | {"a", "an"}) \
            or (nxt is not None and nxt.low in SINGULAR_CUES_AFTER):
        return "singular"
    return "plural"


def is_color_use(ctx: CaptionContext, i: int) -> bool:
    """A color word used as a color: attributive ("red bus"), coordinated with a color ("red and
    white"), or after a color context ("is red", "dressed in red"). "an orange on a plate",
    "an orange sitting on a table", "orange juice", "the green" (golf) are not colors."""
    lex = ctx.lex
    nxt, prev = ctx.next_word(i), ctx.prev_word(i)
    if prev is not None and prev.low in lex.not_color_after:  # "off white"
        return False
    if prev is not None and prev.low in lex.color_contexts:
        return True
    if nxt is not None and (nxt.low in lex.not_color_before
                            or (nxt.low.endswith("ing") and (ctx.tokens[i].low,) in lex.noun_forms)):
        return False  # a noun homograph before a participle is the noun: "an orange sitting"
    if ctx.is_content(nxt):
        return True
    for j in (i - 2, i - 1, i + 1, i + 2):
        if 0 <= j < len(ctx.tokens) and ctx.tokens[j].low in lex.color_group:
            lo, hi = sorted((i, j))
            if COLOR_LINK.fullmatch(ctx.text[ctx.tokens[lo].end:ctx.tokens[hi].start].lower()):
                return True
    return False


def is_count_use(ctx: CaptionContext, i: int) -> bool:
    """A number word used as a count: not "the number two", "one way", "no one", "one of",
    "one another", "the one on the left", "one holding"."""
    rules = ctx.lex.number_rules
    tok, prev, nxt = ctx.tokens[i], ctx.prev_word(i), ctx.next_word(i)
    if (prev is not None and prev.low in rules["not_after"]) or (nxt is not None and nxt.low in rules["not_before"]):
        return False
    if tok.low != rules["pronoun"]:
        return True
    if prev is not None and prev.low in rules["pronoun_not_after"]:
        return False
    return ctx.is_content(nxt) and not nxt.low.endswith("ing")


def counted_noun(ctx: CaptionContext, i: int, max_gap: int = 3) -> Unit | None:
    """The lexicon noun counted by the number word at ``i``: the first noun after it, across at most
    ``max_gap`` content words ("two young men"), with no function word or punctuation between."""
    j = i + 1
    while j <= i + 1 + max_gap and ctx.joined(j - 1, j):
        unit = ctx.units.get(j)
        if unit is not None:
            return unit if unit.form is not None else None
        if not ctx.is_content(ctx.tokens[j]):
            return None
        j += 1
    return None
