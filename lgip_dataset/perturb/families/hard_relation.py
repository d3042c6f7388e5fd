"""Relation replacements (``hard_relation``, SugarCrepe's replace-rel done with statistics): the verb
or the preposition that relates a subject to an object is replaced by one that contradicts it and that
COCO captions attest with both nouns: "a man riding a horse" -> "a man leading a horse", "a cat sitting
on a laptop" -> "a cat sitting under a laptop", "A woman standing in a kitchen" -> "A woman sitting in
a kitchen".

A site is a relation of :mod:`lgip_dataset.perturb.relations` with a subject and an object (or none,
"A man is standing."). Its verb (an -ing word or a finite form, "sits" -> "stands") may become another
verb of a set of ``relation_cliques`` it shares (any two of a set contradict each other in one photo:
sitting and standing, riding and pushing, throwing and catching), where the statistics of the other
image folds attest the new relation with the subject and the object at least ``MIN_ATTESTED`` times
("standing on" a bench for a person); never a verb the caption says already, one joined to another by
"and"/"or", or a participle after "is". Its preposition likewise ("on" -> "under", "in" -> "outside",
"behind" -> "in front of"), attested with the subject and the object, and with the verb for that
subject ("sitting under" for a person), where a noun follows it. Candidates are chosen like the hard
flips' (:func:`lgip_dataset.perturb.families.hard.pick`; across a build, balanced by
:mod:`lgip_dataset.balance`, so each relation word is removed as often as it is inserted).
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
from lgip_dataset.perturb.relations import BE, NONE, RelationSite, contradicting, relation_sites, relation_words, verb_form
from lgip_dataset.perturb.seeding import KeyedRandom
from lgip_dataset.perturb.variant import Variant

NAME = "hard_relation"
VERSION = "1.0.0"
MIN_ATTESTED = 1  # captions of the other folds relating the subject and the object by the new relation
MAX_DROP = 8.0  # a site whose candidates all read this many nats less likely than the caption is skipped


def _coordinated(ctx: CaptionContext, site: RelationSite) -> bool:
    """True for a verb joined to another by "and"/"or" ("sit and walk", "stand or sit"): the pair says more
    than either verb, and a replacement may repeat the other."""
    first, last = site.verb
    before, after = ctx.prev_word(first), ctx.next_word(last - 1)
    return any(w is not None and w.low in COORDINATORS for w in (before, after))


def _passive(ctx: CaptionContext, site: RelationSite) -> bool:
    """True for a participle after a be-verb ("is parked"): no other verb's form is known to fit there."""
    before = ctx.prev_word(site.verb[0])
    return not ctx.tokens[site.verb[0]].low.endswith("ing") and before is not None and before.low in BE


def _verbs(ctx: CaptionContext, site: RelationSite) -> list[tuple[str, str]]:
    """(new verb, new relation) for the verb of ``site``: another sense of a clique it shares that the caption
    does not say already."""
    if site.verb is None or site.verb_sense is None or _coordinated(ctx, site) or _passive(ctx, site):
        return []
    said = {relation_words().verb_forms.get(t.low, t.low) for t in ctx.tokens}
    prep = f" {site.preposition_sense}" if site.preposition_sense else ""
    prepositions = relation_words().inserted
    return [(verb, verb + prep) for verb in contradicting(site.verb_sense) if verb not in prepositions and verb not in said]


def _prepositions(site: RelationSite) -> list[str]:
    """The preposition senses that may replace the site's, where a noun follows it ("playing outside."
    takes none: "playing in." is broken)."""
    if site.preposition_sense is None or site.object_key == NONE:
        return []
    return [sense for sense in contradicting(site.preposition_sense) if sense in relation_words().inserted]


def _typicality(scorer: Plausibility, subject: str, old: str, new: str, obj: str) -> float:
    """log of how much more often the new relation is seen with the two nouns than the old one."""
    return math.log((scorer.relation_count(subject, new, obj) + 0.5) / (scorer.relation_count(subject, old, obj) + 0.5))


def site_candidates(ctx: CaptionContext, site: RelationSite) -> list[tuple]:
    """The attested replacements of one site, as (variant, context fit, lm_delta, typicality, tier)."""
    if site.object_key is None:
        return []
    scorer, subject, obj = attached(ctx), site.subject, site.object_key
    found = []
    for verb, relation in _verbs(ctx, site):
        written = verb_form(verb, ctx.tokens[site.verb[0]].low)
        if written is not None and scorer.relation_count(subject, relation, obj) >= MIN_ATTESTED:
            variant = flip(ctx, NAME, site.verb[0], ctx.span(*site.verb), written)
            found.append((variant, _typicality(scorer, subject, site.relation, relation, obj)))
    for sense in _prepositions(site):
        with_verb = f"{site.verb_sense} {sense}" if site.verb_sense else sense
        if scorer.relation_count(subject, sense, obj) >= MIN_ATTESTED \
                and scorer.relation_count(subject, with_verb, "*") >= 1:
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
