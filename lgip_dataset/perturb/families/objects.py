"""Object flips: a lexicon noun (or multiword noun) -> a noun of an unrelated object group.

Site finding (:func:`object_sites`) and the flip itself (:func:`object_flip`) are public so that
other families can choose the replacement differently and keep the same sites and agreement.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from lgip_dataset.perturb.agreement import can_be_noun, present_verb_number
from lgip_dataset.perturb.context import CaptionContext, Unit
from lgip_dataset.perturb.edits import flip
from lgip_dataset.perturb.lexicon import ObjectGroup
from lgip_dataset.perturb.registry import register
from lgip_dataset.perturb.seeding import KeyedRandom, shuffled
from lgip_dataset.perturb.senses import PREPOSITIONS, is_object_noun, noun_number
from lgip_dataset.perturb.variant import Variant

ANIMATE = frozenset(("person", "animal"))


@dataclass(frozen=True)
class ObjectSite:
    """One flippable object noun: the unit, the number its replacement takes and the groups it may
    become (lexicon order), already restricted so that every one keeps the caption grammatical."""
    unit: Unit
    number: str  # "singular" | "plural"
    targets: tuple[ObjectGroup, ...]


def _mentions(ctx: CaptionContext) -> Counter:
    """How often each object group is mentioned, counting a broader or narrower group as a mention
    too ("a stop sign ... the sign"), modifiers and possessors included."""
    groups = [u.form.group for u in ctx.units.values() if u.form is not None]
    related = ctx.lex.object_related
    return Counter({g: sum(other in related[g] for other in groups) for g in groups})


def _pronoun_genders(ctx: CaptionContext) -> dict[int, str]:
    """Start token of a person or animal noun -> the gender of a later he/she pronoun that refers
    back to it (the nearest such noun before the pronoun)."""
    genders: dict[int, str] = {}
    animate = [u for u in ctx.units.values()
               if u.form is not None and ctx.lex.groups[u.form.group].supercategory in ANIMATE]
    for i, tok in enumerate(ctx.tokens):
        gender = ctx.lex.pronoun_gender.get(tok.low)
        before = [u for u in animate if u.end <= i]
        if gender and before:
            genders.setdefault(before[-1].start, gender)
    return genders


def _bare_object(ctx: CaptionContext, unit: Unit) -> bool:
    """True for a singular noun right after a verb, a preposition or "to" with no determiner ("eating
    pizza", "playing frisbee", "laying in bed", "up to bat"): a mass, activity, idiom or verb use that a
    countable replacement would break ("eating bench", "laying in remote", "up to baby")."""
    prev = ctx.prev_word(unit.start)
    if noun_number(ctx, unit) != "singular" or prev is None:
        return False
    if prev.low in PREPOSITIONS or prev.low == "to":
        return True
    return (ctx.is_content(prev) and (prev.low.endswith("ing") or present_verb_number(prev.low) is not None)
            and not can_be_noun(prev.low))


COLOUR_REACH = 3  # a colour this many words before a noun, joined to it, describes it ("a white and black cat")


def coloured(ctx: CaptionContext, unit: Unit) -> bool:
    """True when a colour word stands before ``unit`` in its phrase ("a brown teddy bear", "a white and black cat",
    "green trees", "an orange tree"), in colour use or not: a person put there would read as given a skin colour
    ("a brown girl", "green women")."""
    return bool(colours_before(ctx, unit))


def colours_before(ctx: CaptionContext, unit: Unit) -> set[str]:
    """The colour groups of the colour words before ``unit`` in its phrase (:func:`coloured`)."""
    colours, j = set(), unit.start - 1
    while j >= max(unit.start - 1 - COLOUR_REACH, 0) and ctx.joined(j, j + 1):
        tok = ctx.tokens[j]
        if tok.low in ctx.lex.color_group:
            colours.add(ctx.lex.color_group[tok.low])
        elif not (ctx.is_content(tok) or tok.low == "and"):
            break
        j -= 1
    return colours


def _targets(ctx: CaptionContext, unit: Unit, present: set[str], gender: str | None) -> tuple[ObjectGroup, ...]:
    """The groups ``unit`` may flip to: not a group the caption already mentions; only containers
    in "<container> of"; only persons before "who"; only the gender a later pronoun needs."""
    nxt = ctx.next_word(unit.end - 1)
    nxt = nxt.low if nxt is not None else ""
    lex = ctx.lex
    out = []
    for g in lex.object_targets[unit.form.group]:
        if g.id in present or (nxt == "of" and lex.groups[unit.form.group].container and not g.container):
            continue
        if (nxt in lex.relative_animate and g.supercategory != "person") or (gender and g.gender != gender):
            continue
        out.append(g)
    return tuple(out)


def object_sites(ctx: CaptionContext) -> list[ObjectSite]:
    """Every object noun of the caption that can be flipped, left to right. A group the caption
    mentions twice ("a giraffe and a baby giraffe") has no site: every mention or none."""
    if "object_sites" not in ctx.memo:
        mentions = _mentions(ctx)
        genders = _pronoun_genders(ctx)
        sites = []
        for unit in ctx.units.values():
            if not is_object_noun(ctx, unit) or mentions[unit.form.group] > 1 or _bare_object(ctx, unit):
                continue
            targets = _targets(ctx, unit, set(mentions), genders.get(unit.start))  # never a group already there
            if targets:
                sites.append(ObjectSite(unit, noun_number(ctx, unit), targets))
        ctx.memo["object_sites"] = sites
    return ctx.memo["object_sites"]


def object_flip(ctx: CaptionContext, site: ObjectSite, group: ObjectGroup, family: str = "object") -> Variant:
    """The flip of ``site`` to ``group`` (in the site's number, the article before it agreeing)."""
    word = group.singular if site.number == "singular" else group.plural
    return flip(ctx, family, site.unit.start, site.unit.span, word)


def gives_a_colour(ctx: CaptionContext, site: ObjectSite, group: ObjectGroup) -> bool:
    """True when flipping ``site`` to ``group`` would put a person where a colour describes a thing or an animal
    (:func:`coloured`: never "a brown bear" -> "a brown girl", a skin colour); a person for a person keeps theirs."""
    return (group.supercategory == "person" and ctx.lex.groups[site.unit.form.group].supercategory != "person"
            and coloured(ctx, site.unit))


def _site(ctx: CaptionContext, site: ObjectSite, rng: KeyedRandom) -> Iterator[Variant]:
    for group in shuffled(site.targets, rng):  # the paper's order; only a flip that gives a person a colour is left out
        if not gives_a_colour(ctx, site, group):
            yield object_flip(ctx, site, group)


@register("object", "flip", version="1.3.1")
def generate(ctx: CaptionContext, rng: KeyedRandom) -> list[Iterator[Variant]]:
    """One site per object noun used as a noun; replacements keep its grammatical number."""
    return [_site(ctx, site, rng) for site in object_sites(ctx)]
