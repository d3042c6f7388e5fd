"""Shallow phrase finding for the probe families, with closed word lists only (no tagger).

An *attribute* is a color word in color use (category "color") or a listed attribute adjective
(its category from ``probes.json``: size, age, material, ...). A *noun phrase* is a determiner or number word, up to two attribute words (colors in color use or
``attribute_adjectives``) and an object noun of the lexicon, all joined by whitespace ("a big red
bus", "two dogs"). An *attribute pair* is an attribute word directly before an object noun that is
not coordinated with another attribute ("red car"; not the "white" of "black and white dog").
"""
from __future__ import annotations

from dataclasses import dataclass

from lgip_dataset.perturb.context import CaptionContext, Unit
from lgip_dataset.perturb.probe_lexicon import ProbeLexicon, load_probe_lexicon
from lgip_dataset.perturb.senses import is_color_use, is_object_noun

COORDINATORS = frozenset(("and", "or", "n", "&"))


@dataclass(frozen=True)
class NounPhrase:
    start: int  # first token (the determiner)
    end: int  # one past the last token
    unit: Unit  # its head noun


def phrase_text(ctx: CaptionContext, np: NounPhrase) -> str:
    """The caption's text of the noun phrase ``np``."""
    return ctx.text[ctx.tokens[np.start].start:ctx.tokens[np.end - 1].end]


def probes() -> ProbeLexicon:
    return load_probe_lexicon()


def is_attribute(ctx: CaptionContext, i: int) -> bool:
    """A color word in color use or a listed attribute adjective."""
    return attribute_category(ctx, i) is not None


def attribute_category(ctx: CaptionContext, i: int) -> str | None:
    """"color" for a color word in color use, the category of a listed attribute adjective, else None."""
    low = ctx.tokens[i].low
    if low in ctx.lex.color_group and is_color_use(ctx, i):
        return "color"
    return probes().attribute_category.get(low)


def head_noun(ctx: CaptionContext, i: int) -> Unit | None:
    """The object noun starting at token ``i`` and joined to ``i - 1``, used as a noun and not a
    possessor; else None."""
    unit = ctx.units.get(i)
    if unit is None or not ctx.joined(i - 1, i) or not is_object_noun(ctx, unit):
        return None
    return unit if unit.span[1] == ctx.tokens[unit.end - 1].end else None


def attribute_pairs(ctx: CaptionContext) -> list[tuple[int, Unit]]:
    """(attribute token, noun) for every uncoordinated attribute directly before an object noun."""
    if "attribute_pairs" not in ctx.memo:
        pairs = []
        for i, tok in enumerate(ctx.tokens):
            unit = head_noun(ctx, i + 1) if i + 1 < len(ctx.tokens) else None
            if unit is None or not is_attribute(ctx, i):
                continue
            if i and (not ctx.joined(i - 1, i) or ctx.tokens[i - 1].low in COORDINATORS):
                continue  # "black and white dog", "black & white dog", "red, white dog"
            pairs.append((i, unit))
        ctx.memo["attribute_pairs"] = pairs
    return ctx.memo["attribute_pairs"]


def noun_phrases(ctx: CaptionContext) -> list[NounPhrase]:
    """Every noun phrase of the caption, left to right."""
    if "noun_phrases" not in ctx.memo:
        found = []
        dets = probes().determiners
        for i, tok in enumerate(ctx.tokens):
            if tok.low not in dets and tok.low not in ctx.lex.numbers:
                continue
            j = i + 1
            while j < len(ctx.tokens) and j <= i + 3:
                unit = head_noun(ctx, j)
                if unit is not None:
                    found.append(NounPhrase(i, unit.end, unit))
                    break
                if not (ctx.joined(j - 1, j) and is_attribute(ctx, j)):
                    break
                j += 1
        ctx.memo["noun_phrases"] = found
    return ctx.memo["noun_phrases"]


def is_ing_verb(ctx: CaptionContext, i: int) -> bool:
    """An -ing word that is not a listed -ing noun ("riding", not "building")."""
    low = ctx.tokens[i].low
    return low.endswith("ing") and len(low) > 4 and low.isalpha() and low not in probes().ing_nouns \
        and ctx.is_content(ctx.tokens[i])


def relation_between(ctx: CaptionContext, a: NounPhrase, b: NounPhrase) -> bool:
    """True when the words between ``a`` and ``b`` form a relation: an optional is/are, an optional
    -ing verb and up to three relation words, at least one word, not "of" alone, no punctuation."""
    words = list(range(a.end, b.start))
    if not words or len(words) > 5 or not all(ctx.joined(k - 1, k) for k in range(a.end, b.start + 1)):
        return False
    k = 0
    if ctx.tokens[words[0]].low in ("is", "are"):
        k = 1
    if k < len(words) and is_ing_verb(ctx, words[k]):
        k += 1
    rest = [ctx.tokens[w].low for w in words[k:]]
    if len(rest) > 3 or any(w not in probes().relation_words for w in rest):
        return False
    return k > (ctx.tokens[words[0]].low in ("is", "are")) or (bool(rest) and rest != ["of"])
