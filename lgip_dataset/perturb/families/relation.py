"""Relation role-swap flips (SNARE relationship composition, ControlledImCaps): the subject and the
object noun phrases of a relation exchange places: "a dog chasing a cat" -> "a cat chasing a dog",
"a man pushing a boy" -> "a boy pushing a man", "a pizza on an oven" -> "an oven on a pizza".

Noun phrases move whole (determiner, attributes, noun), so articles and number stay right; with
a be/have verb next to either phrase both must have the same number. A sentence-initial capital moves with the
position, not the phrase. Not when the second phrase is coordinated ("a fork and knife"), not
around a symmetric relation ("a dog next to a cat" means the same swapped), and only between two
persons or two animals ("a horse riding a man" is ruled out by the text alone, "a plate on a pizza"
by any photo), where the statistics of the other image folds attest the relation both ways
(:func:`lgip_dataset.perturb.relations.relation_sites`: "a man pushing a boy", "a dog chasing a cat";
never "a giraffe feeding a man"). The span runs from the first phrase to the end of the second.
"""
from __future__ import annotations

from collections.abc import Iterator

from lgip_dataset.perturb.context import CaptionContext
from lgip_dataset.perturb.edits import region_flip
from lgip_dataset.perturb.families.paraphrase import lower_first
from lgip_dataset.perturb.phrases import COORDINATORS, NounPhrase, noun_phrases, phrase_text, probes, relation_between
from lgip_dataset.perturb.plausibility import attached
from lgip_dataset.perturb.registry import register
from lgip_dataset.perturb.relations import noun_key, relation_sites
from lgip_dataset.perturb.seeding import KeyedRandom, single_sites
from lgip_dataset.perturb.senses import noun_number
from lgip_dataset.perturb.text import capitalized
from lgip_dataset.perturb.variant import Variant

AGREEING_VERBS = frozenset(("is", "are", "was", "were", "has", "have", "isn't", "aren't"))


def moved(ctx: CaptionContext, np: NounPhrase, to: NounPhrase) -> str:
    """The text of ``np`` written where ``to`` stands, with a sentence-initial capital fixed."""
    text = phrase_text(ctx, np)
    if ctx.sentence_start(np.start) and ctx.tokens[np.start].text[:1].isupper():
        text = lower_first(text, ctx.lex)
    if ctx.sentence_start(to.start) and ctx.tokens[to.start].text[:1].isupper():
        text = capitalized(text)
    return text


def _swap(ctx: CaptionContext, a: NounPhrase, b: NounPhrase) -> Variant:
    sa, ea = ctx.tokens[a.start].start, ctx.tokens[a.end - 1].end
    sb, eb = ctx.tokens[b.start].start, ctx.tokens[b.end - 1].end
    return region_flip(ctx, "relation", (sa, eb), [(sa, ea, moved(ctx, b, a)), (sb, eb, moved(ctx, a, b))])


def _symmetric(ctx: CaptionContext, a: NounPhrase, b: NounPhrase) -> bool:
    """True when a symmetric relation ("with", "next to", "near") joins ``a`` and ``b``."""
    words = [ctx.tokens[k].low for k in range(a.end, b.start)]
    return any(tuple(words[k:k + n]) in probes().symmetric_relations for n in (1, 2, 3) for k in range(len(words)))


def _animate(ctx: CaptionContext, np: NounPhrase) -> str | None:
    """"person" or "animal" (a role swap stays within one of them), else None."""
    supercategory = ctx.lex.groups[np.unit.form.group].supercategory
    return supercategory if supercategory in ("person", "animal") else None


def _attested_both_ways(ctx: CaptionContext, a: NounPhrase, b: NounPhrase) -> bool:
    """True when the statistics attest the relation from ``a`` to ``b`` with each noun in either role."""
    site = next((s for s in relation_sites(ctx) if s.subject_unit == a.unit and s.end == b.start), None)
    if site is None:
        return False
    scorer, one, other = attached(ctx), noun_key(ctx, a.unit, fine=True), noun_key(ctx, b.unit, fine=True)
    return min(scorer.relation_count(one, site.relation, other), scorer.relation_count(other, site.relation, one)) >= 1


def _swappable(ctx: CaptionContext, a: NounPhrase, b: NounPhrase) -> bool:
    after = ctx.next_word(b.end - 1)
    if a.unit.form.group == b.unit.form.group or not relation_between(ctx, a, b) \
            or (after is not None and after.low in COORDINATORS):  # "on an oven with a fork and knife"
        return False
    if _symmetric(ctx, a, b) or _animate(ctx, a) is None or _animate(ctx, a) != _animate(ctx, b) \
            or not _attested_both_ways(ctx, a, b):  # "a horse riding a man", "a plate on a pizza"
        return False
    return not _agrees_with_a_verb(ctx, a, b) or noun_number(ctx, a.unit) == noun_number(ctx, b.unit)


def _agrees_with_a_verb(ctx: CaptionContext, a: NounPhrase, b: NounPhrase) -> bool:
    """True when a be/have verb touches either phrase ("a cat is on", "there are two", "a desk
    are"), so swapping phrases of different number would break agreement."""
    neighbours = (ctx.prev_word(a.start), ctx.next_word(a.end - 1), ctx.next_word(b.end - 1))
    return any(w is not None and w.low in AGREEING_VERBS for w in neighbours)


@register("relation", "flip", version="2.0.0")
def generate(ctx: CaptionContext, rng: KeyedRandom) -> list[Iterator[Variant]]:
    """One site per two consecutive noun phrases joined by a relation, with different nouns."""
    phrases = noun_phrases(ctx)
    return single_sites([_swap(ctx, a, b) for a, b in zip(phrases, phrases[1:]) if _swappable(ctx, a, b)], rng)
