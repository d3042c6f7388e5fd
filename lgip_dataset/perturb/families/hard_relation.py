"""Relation replacements (``hard_relation``, SugarCrepe's replace-rel done with statistics): the verb
or the preposition that relates a subject to an object is replaced by one that contradicts it and that
COCO captions attest (below): "a man riding a horse" -> "a man leading a horse", "a cat sitting
on a laptop" -> "a cat sitting under a laptop", "A woman standing in a kitchen" -> "A woman sitting in
a kitchen".

A site is a relation of :mod:`lgip_dataset.perturb.relations` with a subject and an object (or none,
"A man is standing."). Its verb (an -ing word or a finite form, "sits" -> "stands"; not a participle after
"is", nor a form after a determiner, "makes a jump") may become another verb of a set of
``relation_cliques`` it shares (any two of a set contradict each other in one photo: sitting and standing,
riding and leading, throwing and catching); never a verb the caption says already or one joined to another
by "and"/"or". Its preposition likewise ("on" -> "under", "in" -> "outside", "behind" -> "in front of"),
where a noun follows it and the subject was seen with the verb and the new preposition.

Candidates are generated broadly, on purpose, and blind judges keep the valid ones (``lgip judge``, the
``validated`` config): a new relation must be seen with the subject and the object in the statistics of
the other image folds at least ``MIN_ATTESTED`` times, or, backing off, a new posture with the subject
("a cat standing"), a new preposition with the object ("under a blanket"), at least ``BACKOFF_ATTESTED``
times. What rules can say is said by rules (``probes.json``): a posture does not change where the caption
names another action of its subject ("walks on the beach, carrying a surf board" -> "sits"), where the
subject is a perching bird, or where the object is an animal (sitting on a horse is riding it); no animal is
pushed, pulled or carried, no person ridden, worn, thrown or eaten; in, inside and outside change only
before an enclosure ("outside an outdoor market" is no contradiction); no preposition changes in a caption
naming a role the game places ("a catcher behind the batter"). Candidates are chosen like the hard flips'
(:func:`lgip_dataset.perturb.families.hard.pick`; across a build, balanced by :mod:`lgip_dataset.selection.balance`,
so each relation word is removed as often as it is inserted).
"""
from __future__ import annotations

import math
from collections.abc import Iterator

from lgip_dataset.perturb.context import CaptionContext
from lgip_dataset.perturb.edits import flip
from lgip_dataset.perturb.families import hard
from lgip_dataset.perturb.phrases import COORDINATORS
from lgip_dataset.perturb.plausibility import Plausibility, attached
from lgip_dataset.perturb.registry import register
from lgip_dataset.perturb.probe_lexicon import load_probe_lexicon
from lgip_dataset.perturb.relations import (BE, NONE, RelationSite, contradicting, is_animal, names_role_fixed,
                                            other_actions, relation_sites, relation_words, verb_form)
from lgip_dataset.perturb.seeding import KeyedRandom
from lgip_dataset.perturb.variant import Variant

NAME = "hard_relation"
VERSION = "2.0.0"
MIN_ATTESTED = 1  # captions of the other folds relating the subject and the object by the new relation
BACKOFF_ATTESTED = 10  # ... or, backing off, the subject (a new posture) or the object (a new preposition)
MAX_DROP = 8.0  # a site whose candidates all read this many nats less likely than the caption is skipped
NOT_DONE_TO_ANIMALS = frozenset(("pushing", "pulling", "carrying"))  # "rides a horse" -> "pushes a horse"
NOT_DONE_TO_PERSONS = NOT_DONE_TO_ANIMALS | {"riding", "wearing", "throwing", "catching", "kicking", "eating", "cutting",
                                             "cooking"}  # "holding the child" -> "riding the child"
IN_OUT = frozenset(("in", "inside", "outside"))  # senses that need an enclosure as their object


def _coordinated(ctx: CaptionContext, site: RelationSite) -> bool:
    """True for a verb joined to another by "and"/"or" ("sit and walk", "stand or sit"): the pair says more
    than either verb, and a replacement may repeat the other."""
    first, last = site.verb
    before, after = ctx.prev_word(first), ctx.next_word(last - 1)
    return any(w is not None and w.low in COORDINATORS for w in (before, after))


def _passive(ctx: CaptionContext, site: RelationSite) -> bool:
    """True for a participle after a be-verb ("is parked"), where no other verb's form is known to fit, and for
    a verb form after a determiner, which is a noun ("makes a jump")."""
    before = ctx.prev_word(site.verb[0])
    if before is not None and before.low in load_probe_lexicon().determiners:
        return True
    return not ctx.tokens[site.verb[0]].low.endswith("ing") and before is not None and before.low in BE


def _posture_fixed(ctx: CaptionContext, site: RelationSite) -> bool:
    """True where the site's posture may not change: the caption names another action of its subject ("walks
    on the beach, carrying a surf board" cannot become "sits"), the subject is a perching bird (it sits and
    stands at once) or the object an animal (sitting on a horse is riding it)."""
    probes = load_probe_lexicon()
    return site.verb_sense in probes.postures and (
        bool(other_actions(ctx, site.verb)) or site.subject in probes.perching_subjects
        or is_animal(ctx, site.object_key))


def _verbs(ctx: CaptionContext, site: RelationSite) -> list[tuple[str, str]]:
    """(new verb, new relation) for the verb of ``site``: another sense of a clique it shares that the caption
    does not say already; no posture where :func:`_posture_fixed`, no animal pushed, pulled or carried
    ("rides a horse" -> "pushes a horse") and no person ridden, worn, thrown or eaten."""
    if site.verb is None or site.verb_sense is None or _coordinated(ctx, site) or _passive(ctx, site) \
            or _posture_fixed(ctx, site):
        return []
    said = {relation_words().verb_forms.get(t.low, t.low) for t in ctx.tokens}
    prep = f" {site.preposition_sense}" if site.preposition_sense else ""
    prepositions = relation_words().inserted
    barred = NOT_DONE_TO_PERSONS if site.object_key == "s:person" \
        else NOT_DONE_TO_ANIMALS if is_animal(ctx, site.object_key) else frozenset()
    return [(verb, verb + prep) for verb in contradicting(site.verb_sense)
            if verb not in prepositions and verb not in said and verb not in barred]


def _prepositions(ctx: CaptionContext, site: RelationSite) -> list[str]:
    """The preposition senses that may replace the site's, where a noun follows it ("playing outside."
    takes none: "playing in." is broken); in or out only of an enclosure ("outside an outdoor market" is no
    contradiction), and none in a caption naming a role the game places ("a catcher behind the batter")."""
    if site.preposition_sense is None or site.object_key == NONE or names_role_fixed(ctx):
        return []
    enclosed = site.object_key in load_probe_lexicon().enclosures
    return [sense for sense in contradicting(site.preposition_sense) if sense in relation_words().inserted
            and (enclosed or not {sense, site.preposition_sense} & IN_OUT)]


def _typicality(scorer: Plausibility, subject: str, old: str, new: str, obj: str) -> float:
    """log of how much more often the new relation is seen with the two nouns than the old one."""
    return math.log((scorer.relation_count(subject, new, obj) + 0.5) / (scorer.relation_count(subject, old, obj) + 0.5))


def _attested(scorer: Plausibility, exact: tuple[str, str, str], backoff: tuple[str, str, str] | None) -> bool:
    """True when the new relation is seen with both nouns, or (``backoff``) often enough with one of them."""
    return scorer.relation_count(*exact) >= MIN_ATTESTED \
        or (backoff is not None and scorer.relation_count(*backoff) >= BACKOFF_ATTESTED)


def site_candidates(ctx: CaptionContext, site: RelationSite) -> list[tuple]:
    """The attested replacements of one site, as (variant, context fit, lm_delta, typicality, tier)."""
    if site.object_key is None:
        return []
    scorer, subject, obj = attached(ctx), site.subject, site.object_key
    found = []
    for verb, relation in _verbs(ctx, site):
        written = verb_form(verb, ctx.tokens[site.verb[0]].low)
        backoff = (subject, relation, "*") if verb in load_probe_lexicon().postures else None
        if written is not None and _attested(scorer, (subject, relation, obj), backoff):
            variant = flip(ctx, NAME, site.verb[0], ctx.span(*site.verb), written)
            found.append((variant, _typicality(scorer, subject, site.relation, relation, obj)))
    for sense in _prepositions(ctx, site):
        with_verb = f"{site.verb_sense} {sense}" if site.verb_sense else sense
        if _attested(scorer, (subject, sense, obj), ("*", sense, obj)) \
                and scorer.relation_count(subject, with_verb, "*") >= MIN_ATTESTED:
            phrase = relation_words().inserted[sense]
            variant = flip(ctx, NAME, site.preposition[0], ctx.span(*site.preposition), phrase)
            found.append((variant, _typicality(scorer, subject, site.preposition_sense, sense, obj)))
    return [(variant, 1.0, scorer.lm_delta(ctx.text, variant.text), typical, 0) for variant, typical in found]


def _context(ctx: CaptionContext, site: RelationSite) -> tuple[str, ...]:
    return site.subject, site.relation, str(site.object_key)


def _ranked(ctx: CaptionContext) -> list[tuple[list[list[tuple]], tuple[str, ...]]]:
    """Per site with a candidate: its candidates as one tier, and the context they were attested in."""
    return [([found], _context(ctx, site)) for site in relation_sites(ctx) if (found := site_candidates(ctx, site))]


@register(NAME, "flip", VERSION)
def generate(ctx: CaptionContext, rng: KeyedRandom) -> list[Iterator[Variant]]:
    """One relation replacement per site that has an attested one."""
    chosen = [hard.pick(NAME, ranked, context, rng, MAX_DROP) for ranked, context in _ranked(ctx)]
    return [iter((v,)) for v in chosen if v is not None]


def pools(ctx: CaptionContext, rng: KeyedRandom) -> list[list[Variant]]:
    """The :func:`hard.pool` of every site with an attested replacement."""
    return [found for ranked, context in _ranked(ctx) if (found := hard.pool(NAME, ranked, context))]


hard.POOLS[NAME] = pools
