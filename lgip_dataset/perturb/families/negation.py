"""Negation flips (SNARE "negation logic"): one true attribute or relation of the caption negated.

Four grammatical constructions, one negation per variant:
- a be-verb after its subject gets "not": "a dog is sleeping" -> "a dog is not sleeping" (not after
  an article or determiner: "a is a" has no subject);
- an existential takes "no" for its determiner or number: "there are two dogs" -> "there are no
  dogs", "there is a cat" -> "there is no cat", "there are people" -> "there are no people";
- an -ing relation right after its noun gets "not": "a man riding a horse" -> "a man not riding a horse";
- an attribute moves into a negated relative clause: "a brown dog on a couch" -> "a dog that is not
  brown on a couch" ("are" for a plural noun), with the article fixed ("an orange cat" -> "a cat ...").
Questions and already negated verbs are left alone. In an all-caps caption the inserted words are
all-caps too ("THERE ARE NO PEOPLE").
"""
from __future__ import annotations

from collections.abc import Iterator

from lgip_dataset.perturb.context import CaptionContext, Unit
from lgip_dataset.perturb.edits import article_edit, region_flip
from lgip_dataset.perturb.phrases import attribute_pairs, is_ing_verb
from lgip_dataset.perturb.registry import register
from lgip_dataset.perturb.seeding import KeyedRandom, single_sites
from lgip_dataset.perturb.senses import noun_number
from lgip_dataset.perturb.text import capitalized, is_title
from lgip_dataset.perturb.variant import Variant

BE_VERBS = frozenset(("is", "are", "was", "were"))
NEGATORS = frozenset(("not", "n't", "never", "no"))
EXISTENTIAL_QUANTIFIERS = frozenset(("some", "many", "several", "lots", "few", "various", "multiple"))
DETERMINERS = frozenset(("a", "an", "the", "this", "that", "these", "those", "some", "every", "each", "no"))


def _insert_not(ctx: CaptionContext, i: int, after: bool) -> Variant:
    """"not" inserted after (be-verb) or before (-ing verb, never sentence-initial) token ``i``;
    the span is that token."""
    tok = ctx.tokens[i]
    neg = ctx.inserted("not")
    new = f"{tok.text} {neg}" if after else f"{neg} {tok.text}"
    return region_flip(ctx, "negation", (tok.start, tok.end), [(tok.start, tok.end, new)])


def _existential_no(ctx: CaptionContext, i: int) -> Variant | None:
    """"there is/are" (be-verb at token ``i``) + noun phrase -> "there is/are no ...": "no" replaces
    the article, number or quantifier, or goes before a bare noun phrase; None when no noun phrase
    of a lexicon noun follows."""
    first = ctx.tokens[i + 1]
    quantifier = first.low in ("a", "an") or first.low in ctx.lex.numbers or first.low in EXISTENTIAL_QUANTIFIERS
    head = i + 2 if quantifier else i + 1
    unit = next((ctx.units[j] for j in range(head, min(head + 3, len(ctx.tokens)))
                 if j in ctx.units and all(ctx.joined(k - 1, k) for k in range(i + 1, j + 1))), None)
    if unit is None or unit.form is None:
        return None
    no = ctx.inserted("no")
    new = no if quantifier else f"{no} {first.text}"
    return region_flip(ctx, "negation", (first.start, first.end), [(first.start, first.end, new)])


def _negated_attribute(ctx: CaptionContext, i: int, unit: Unit) -> Variant:
    adj = ctx.tokens[i]
    noun = ctx.text[unit.span[0]:unit.span[1]]
    if ctx.sentence_start(i) and is_title(adj.text):
        noun = capitalized(noun)
    be = "is" if noun_number(ctx, unit) == "singular" else "are"
    attribute = adj.low if is_title(adj.text) else adj.text
    new = f"{noun} {ctx.inserted(f'that {be} not')} {attribute}"
    span = (adj.start, unit.span[1])
    return region_flip(ctx, "negation", span, [(*span, new), *article_edit(ctx, i, new)])


@register("negation", "flip", version="1.2.0")
def generate(ctx: CaptionContext, rng: KeyedRandom) -> list[Iterator[Variant]]:
    """One site per be-verb, per -ing relation after a noun and per attribute of a noun."""
    if ctx.text.rstrip().endswith("?") or any(t.low in NEGATORS for t in ctx.tokens):
        return []
    sites = []
    ends = {u.end - 1 for u in ctx.units.values() if u.form is not None}
    for i, tok in enumerate(ctx.tokens):
        prev = ctx.tokens[i - 1] if i else None
        if prev is not None and tok.low in BE_VERBS and ctx.next_word(i) is not None:
            if prev.low == "there":
                sites += [v for v in (_existential_no(ctx, i),) if v is not None]
            elif prev.low not in DETERMINERS:
                sites.append(_insert_not(ctx, i, after=True))
        elif i - 1 in ends and ctx.joined(i - 1, i) and is_ing_verb(ctx, i):
            sites.append(_insert_not(ctx, i, after=False))
    sites += [_negated_attribute(ctx, i, unit) for i, unit in attribute_pairs(ctx)]
    return single_sites(sites, rng)
