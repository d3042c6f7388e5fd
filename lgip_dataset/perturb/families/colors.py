"""Color flips: a color word used as a color -> a clearly different color that its noun can have.

No color that describes a person is flipped ("a black woman", "a man with black skin", "the woman is
black"): :func:`person_color_words` finds them, for the build to count, and :func:`is_person` is the one
person test of every family that writes colors. Site finding (:func:`color_sites`) and the flip itself
(:func:`color_flip`) are public so that other families can choose the replacement differently and keep
the same sites.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass

from lgip_dataset.perturb.agreement import is_noun_like, noun_for_number, word_lemmas
from lgip_dataset.perturb.context import CaptionContext, possessor
from lgip_dataset.perturb.edits import flip
from lgip_dataset.perturb.registry import register
from lgip_dataset.perturb.seeding import KeyedRandom, shuffled
from lgip_dataset.perturb.senses import COLOR_LINK, is_color_use
from lgip_dataset.perturb.variant import Variant

BE = frozenset(("is", "are", "was", "were"))
MONOCHROME_PAIR = frozenset(("black", "white"))
ACHROMATIC = frozenset(("black", "white", "gray"))
ARTICLES = frozenset(("a", "an", "the"))
SIDE_BY_SIDE = re.compile(f"{COLOR_LINK.pattern}|\\s+")  # a colour link, or colours side by side
SLICED = frozenset(("sliced", "peeled", "halved", "cut", "whole"))  # "a sliced orange sit": the fruit


@dataclass(frozen=True)
class ColorSite:
    """One flippable color word: its token, the noun it describes (singular, when found) and the
    color words it may become, already restricted to clear contradictions its noun can have."""
    index: int
    noun: str | None
    targets: tuple[str, ...]


def coordinated(ctx: CaptionContext, i: int) -> list[int]:
    """Tokens of the colors coordinated with token ``i`` ("red", "white" and "blue"; side by side too: "a brown white
    and black bear"), itself included."""
    chain = [i]
    for step in (-1, 1):
        j = i
        while True:
            k = next((k for k in (j + step, j + 2 * step) if 0 <= k < len(ctx.tokens)
                      and ctx.tokens[k].low in ctx.lex.color_group
                      and SIDE_BY_SIDE.fullmatch(ctx.text[ctx.tokens[min(j, k)].end:ctx.tokens[max(j, k)].start].lower())),
                     None)
            if k is None:
                break
            chain.append(k)
            j = k
    return sorted(chain)


def is_monochrome(ctx: CaptionContext, chain: list[int]) -> bool:
    """True when the colors ``chain`` are "black and white" meaning monochrome: before a picture
    word ("a black and white photo"); or with no noun of their own, with one earlier in the caption or a word of
    depicting (lexicon ``monochrome_verbs``: "a photo in black and white", "portrayed in black and white"), or
    after "in" that follows no person, nor a word of colouring ("zebras eat hay in black and white"; not "a
    woman in black and white", "dressed in black and white")."""
    if {ctx.tokens[k].low for k in chain} != MONOCHROME_PAIR:
        return False
    nouns = ctx.lex.monochrome_nouns
    after = ctx.next_word(chain[-1])
    if after is not None and after.low in nouns:
        return True
    if ctx.is_content(after):
        return False
    if any(t.low in nouns or t.low in ctx.lex.monochrome_verbs for t in ctx.tokens[:chain[0]]):
        return True
    into, owner = ctx.prev_word(chain[0]), ctx.prev_word(chain[0] - 1)
    return (into is not None and into.low == "in" and owner is not None and owner.low not in ctx.lex.color_contexts
            and not is_person(ctx, owner.low))


def described_noun(ctx: CaptionContext, chain: list[int]) -> str | None:
    """The noun (singular, lower-case) that the colors ``chain`` describe: the first noun after
    them across at most two words ("a brown fluffy dog"), or the subject of "<noun> is <color>"."""
    j = chain[-1] + 1
    while j <= chain[-1] + 3 and ctx.joined(j - 1, j):
        unit = ctx.units.get(j)
        if unit is not None and unit.form is not None:
            return unit.form.singular
        low = ctx.tokens[j].low
        if not ctx.is_content(ctx.tokens[j]):
            break
        if is_noun_like(low):
            return noun_for_number(low, singular=True)
        j += 1
    be = ctx.prev_word(chain[0])
    if be is not None and be.low in BE and chain[0] >= 2:
        ends = {u.end: u for u in ctx.units.values() if u.form is not None}
        unit = ends.get(chain[0] - 1)
        if unit is not None and ctx.joined(chain[0] - 2, chain[0] - 1):
            return unit.form.singular
        subject = ctx.prev_word(chain[0] - 1)
        if subject is not None and (is_noun_like(subject.low) or is_person(ctx, subject.low)):
            return noun_for_number(subject.low, singular=True)
    return None


def is_person(ctx: CaptionContext, noun: str | None) -> bool:
    """True when ``noun`` (lower-case, singular or plural) names a person or a body word that carries a skin
    color: a form of a lexicon group of supercategory "person" ("guy", "kids") or one of ``person_nouns``
    ("players", "skin")."""
    if not noun:
        return False
    form = ctx.lex.noun_forms.get(tuple(noun.split()))
    if form is not None and ctx.lex.groups[form.group].supercategory == "person":
        return True
    return noun in ctx.lex.person_nouns or noun_for_number(noun, singular=True) in ctx.lex.person_nouns


def _phrase_words(ctx: CaptionContext, chain: list[int]) -> list[str]:
    """The words of the noun phrase after the colors ``chain``: at most three joined content words, a lexicon
    noun as its singular, up to a possessive or the word after its nouns ("a black tennis player": "tennis",
    "player"; "a brown bear's face": "bear"; "a brown horse carrying people": "horse")."""
    words, j, nouns = [], chain[-1] + 1, False
    while j <= chain[-1] + 3 and ctx.joined(j - 1, j):
        unit = ctx.units.get(j)
        if unit is None and not ctx.is_content(ctx.tokens[j]):
            break
        end = j + 1 if unit is None else unit.end
        low = ctx.tokens[end - 1].low
        stem = possessor(low)
        noun = unit is not None or is_noun_like(stem) or is_person(ctx, stem)
        if nouns and not noun:
            break
        nouns = nouns or noun
        if unit is None or unit.form is not None:
            words.append(stem if unit is None else unit.form.singular)
        if stem != low:
            break
        j = end
    return words


def _object_noun(ctx: CaptionContext, noun: str | None) -> bool:
    """True for a lexicon noun that is no person ("cow" of "a brown baby cow": "baby" only modifies it)."""
    form = ctx.lex.noun_forms.get(tuple(noun.split())) if noun else None
    return form is not None and ctx.lex.groups[form.group].supercategory != "person"


def describes_person(ctx: CaptionContext, chain: list[int]) -> bool:
    """True when the colors ``chain`` describe a person (:func:`is_person`): a word of the noun phrase after
    them that modifies no lexicon object ("a black woman", "a black tennis player", "a man with black skin";
    not "a brown baby cow"), or, with none after them, their noun (:func:`described_noun`: "the woman is black")."""
    words = _phrase_words(ctx, chain)
    if not words:
        return is_person(ctx, described_noun(ctx, chain))
    return any(is_person(ctx, w) and not _object_noun(ctx, nxt) for w, nxt in zip(words, [*words[1:], None]))


def _targets(ctx: CaptionContext, i: int, chain: list[int], noun: str | None,
             words: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The colour words that may replace the colour at token ``i`` of ``chain`` describing ``noun``: of
    ``words`` (default: the canonical words of the replacement groups not near it), those that are not
    in the chain, not too close for the noun or a shade modifier, and that a natural kind can have."""
    lex = ctx.lex
    group = lex.color_group[ctx.tokens[i].low]
    words = lex.color_targets[group] if words is None else words
    taken = {lex.color_group[ctx.tokens[k].low] for k in chain}  # never "black and black"
    near = {g for pair in lex.near_by_noun.get(noun, ()) if group in pair for g in pair}
    shade = ctx.prev_word(chain[0])
    if shade is not None and shade.low in lex.shade_modifiers:  # "dark green", never "dark black"
        near |= ACHROMATIC
    natural = lex.natural_colors.get(noun)
    return tuple(c for c in words
                 if lex.color_group[c] not in taken | near and (natural is None or lex.color_group[c] in natural))


def every_word_site(ctx: CaptionContext, site: ColorSite) -> ColorSite:
    """``site`` with every colour word of the lexicon as a target, under the same rules ("silver",
    "grey", "tan" too): a colour named in a caption can also be a replacement."""
    group = ctx.lex.color_group[ctx.tokens[site.index].low]
    words = tuple(w for w, g in ctx.lex.color_group.items() if g not in ctx.lex.color_near[group])
    return dataclasses.replace(site, targets=_targets(ctx, site.index, coordinated(ctx, site.index), site.noun, words))


def names_a_thing(ctx: CaptionContext, chain: list[int]) -> bool:
    """True when the colors ``chain`` stand for a thing left unnamed, after an article (and a word of cutting,
    ``SLICED``): no content word follows ("a brown and black are sitting"), or a verb follows a colour that is a
    noun of the lexicon or was cut ("an orange cut in half", "a sliced orange sit on the counter")."""
    before, after = ctx.prev_word(chain[0]), ctx.next_word(chain[-1])
    sliced = before is not None and before.low in SLICED
    article = ctx.prev_word(chain[0] - 1) if sliced else before
    if article is None or article.low not in ARTICLES:
        return False
    if not ctx.is_content(after):
        return True
    if not (sliced or (len(chain) == 1 and (ctx.tokens[chain[0]].low,) in ctx.lex.noun_forms)):
        return False
    lemmas = word_lemmas(after.low)
    return not is_noun_like(after.low) and "VERB" in lemmas and "ADJ" not in lemmas


def _color_uses(ctx: CaptionContext) -> Iterator[tuple[int, list[int]]]:
    """(token, its coordinated colors) of every color word in color use, left to right, not monochrome
    "black and white" nor a thing left unnamed (:func:`names_a_thing`)."""
    for i, tok in enumerate(ctx.tokens):
        if tok.low in ctx.lex.color_group and is_color_use(ctx, i):
            chain = coordinated(ctx, i)
            if not is_monochrome(ctx, chain) and not names_a_thing(ctx, chain):
                yield i, chain


def person_color_words(ctx: CaptionContext) -> list[int]:
    """Tokens of the color words in color use that describe a person (:func:`describes_person`), which no
    family flips (memoized)."""
    if "person_color_words" not in ctx.memo:
        ctx.memo["person_color_words"] = [i for i, chain in _color_uses(ctx) if describes_person(ctx, chain)]
    return ctx.memo["person_color_words"]


def color_sites(ctx: CaptionContext) -> list[ColorSite]:
    """Every color word in color use that can be flipped, left to right (not monochrome "black and
    white", not of a person, not when its noun can have no clearly different color)."""
    if "color_sites" not in ctx.memo:
        sites = []
        persons = person_color_words(ctx)
        for i, chain in _color_uses(ctx):
            if i in persons:
                continue
            noun = described_noun(ctx, chain)
            targets = _targets(ctx, i, chain, noun)
            if targets:
                sites.append(ColorSite(i, noun, targets))
        ctx.memo["color_sites"] = sites
    return ctx.memo["color_sites"]


def color_flip(ctx: CaptionContext, site: ColorSite, color: str, family: str = "color") -> Variant:
    """The flip of the color at ``site`` to ``color`` (cased like the original, article agreeing)."""
    return flip(ctx, family, site.index, ctx.span(site.index, site.index + 1), color)


def _site(ctx: CaptionContext, site: ColorSite, rng: KeyedRandom) -> Iterator[Variant]:
    for color in shuffled(site.targets, rng):
        yield color_flip(ctx, site, color)


@register("color", "flip", version="1.3.1")
def generate(ctx: CaptionContext, rng: KeyedRandom) -> list[Iterator[Variant]]:
    """One site per color word in color use."""
    return [_site(ctx, site, rng) for site in color_sites(ctx)]
