"""Count flips: a number word used as a count -> another number word, with the counted noun's number fixed."""
from __future__ import annotations

from collections.abc import Iterator

from lgip_dataset.perturb.agreement import singular_of
from lgip_dataset.perturb.context import CaptionContext
from lgip_dataset.perturb.edits import Edit, flip
from lgip_dataset.perturb.registry import register
from lgip_dataset.perturb.seeding import KeyedRandom, shuffled
from lgip_dataset.perturb.senses import counted_noun, is_count_use
from lgip_dataset.perturb.text import same_case
from lgip_dataset.perturb.variant import Variant


_VERB_NUMBER = {"is": "are", "are": "is", "was": "were", "were": "was", "has": "have", "have": "has"}
_SINGULAR_VERBS = frozenset(("is", "was", "has"))
_PARTITIVE_DETERMINERS = frozenset(("the", "these", "those", "my", "his", "her", "their", "our", "its"))


def number_fix(ctx: CaptionContext, i: int, singular: bool) -> list[Edit] | None:
    """The edits that make the noun counted by token ``i`` singular/plural and the be/have verbs
    around it agree ("two dogs are" -> "one dog is", "two of the dogs are" -> "one of the dogs is",
    "there are two dogs" -> "there is one dog"); [] when none is needed ("sheep"), None when the
    noun cannot be found."""
    edits = _counted_fix(ctx, i, singular)
    return None if edits is None else edits + _existential_fix(ctx, i, singular)


def _counted_fix(ctx: CaptionContext, i: int, singular: bool) -> list[Edit] | None:
    nxt = ctx.next_word(i)
    if nxt is not None and nxt.low == "of":
        return _verb_fix(ctx, _partitive_noun_end(ctx, i + 1), singular)
    unit = counted_noun(ctx, i)
    if unit is not None:
        form = unit.form
        verb = _verb_fix(ctx, unit.end - 1, singular)
        if form.number == "both" or (form.number == "singular") == singular:
            return verb
        start, end = ctx.tokens[unit.end - 1].start, unit.span[1]  # "hot dog(s)": the last word inflects
        word = (form.singular if singular else form.plural).split()[-1]
        return [(start, end, same_case(ctx.text[start:end], word)), *verb]
    after = ctx.next_word(i + 1) if nxt is not None else None
    word = singular_of(nxt.text) if singular and ctx.is_content(nxt) and not ctx.is_content(after) else None
    if word is None:
        return None
    return [(nxt.start, nxt.end, same_case(nxt.text, word)), *_verb_fix(ctx, i + 1, singular)]


def _partitive_noun_end(ctx: CaptionContext, of: int) -> int | None:
    """Last token of the noun in "<number> of [the] <noun>" (token ``of`` is "of"), else None."""
    j = of + 1
    if ctx.joined(of, j) and ctx.tokens[j].low in _PARTITIVE_DETERMINERS:
        j += 1
    unit = ctx.units.get(j) if ctx.joined(j - 1, j) else None
    return unit.end - 1 if unit is not None else None


def _verb_fix(ctx: CaptionContext, last: int | None, singular: bool) -> list[Edit]:
    """Make a be/have verb directly after token ``last`` singular or plural ([] when none is there)."""
    return _agree(ctx.next_word(last) if last is not None else None, singular)


def _existential_fix(ctx: CaptionContext, i: int, singular: bool) -> list[Edit]:
    """Make the verb of "there is/are <number>" before token ``i`` agree ([] when there is none)."""
    verb = ctx.prev_word(i)
    there = ctx.prev_word(i - 1) if verb is not None else None
    return _agree(verb, singular) if there is not None and there.low == "there" else []


def _agree(verb, singular: bool) -> list[Edit]:
    """The edit that makes the be/have token ``verb`` singular or plural ([] when it is not one or agrees)."""
    if verb is None or verb.low not in _VERB_NUMBER or (verb.low in _SINGULAR_VERBS) == singular:
        return []
    return [(verb.start, verb.end, same_case(verb.text, _VERB_NUMBER[verb.low]))]


def _site(ctx: CaptionContext, i: int, rng: KeyedRandom) -> Iterator[Variant]:
    numbers = ctx.lex.numbers
    low = ctx.tokens[i].low
    for word in shuffled([w for w in numbers if w != low], rng):
        agreement: list[Edit] = []
        if (numbers[word] == 1) != (numbers[low] == 1):
            agreement = number_fix(ctx, i, singular=numbers[word] == 1)
            if agreement is None:
                continue
        yield flip(ctx, "count", i, ctx.span(i, i + 1), word, agreement)


@register("count", "flip")
def generate(ctx: CaptionContext, rng: KeyedRandom) -> list[Iterator[Variant]]:
    """One site per number word used as a count."""
    return [_site(ctx, i, rng) for i, tok in enumerate(ctx.tokens)
            if tok.low in ctx.lex.numbers and is_count_use(ctx, i)]
