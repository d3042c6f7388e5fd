"""Attribute-binding flips (SNARE "attribute ownership"): two attribute-noun pairs exchange their
attributes, same bag of words: "a red car and a white truck" -> "a white car and a red truck", "a
wooden table with a metal chair" -> "a metal table with a wooden chair".

Attributes are colors in color use and the listed attribute adjectives (``probes.json``), each bound to
the noun it modifies, directly or past an attribute of another category ("a large green bowl"), whether
the noun is a lexicon noun or another noun word ("a red shirt")
(:func:`lgip_dataset.perturb.relations.bound_attributes`). Two attributes swap when both are of the
``CONCRETE`` categories a photo shows outright (color, material, texture, state: "a wooden table with a
red chair" -> "a red table with a wooden chair"), never onto a noun that keeps another attribute of that
category ("a large brown dog" -> "a large white brown dog"), or both of one ``RELATIVE`` category (size,
extent, age, light, ground: "an old man and a young woman" -> "a young man and an old woman", "a grassy
field with a sandy path" -> "a sandy field with a grassy path"; never "a young girl with a
large umbrella" -> "a large girl with a young umbrella"); weather and crowd describe a scene and do not
swap. This generates broadly, on purpose: no statistics are asked whether the new pairs are seen ("a green stop sign"), and what
is absurd or no contradiction is left to blind judges, whose labels keep only the valid flips (``lgip
judge``, the ``validated`` config). Not swapped: equal attributes or two colors of one color group, a color
of a person or onto one (the color family's test, :func:`lgip_dataset.perturb.families.colors.is_person`: "a
yellow woman", "a white player"), and two nouns of one group or word ("a red car and a white car" means the
same after the swap). Articles before both attributes agree with the attribute now after them ("an orange
cat and a red bus" -> "a red cat and an orange bus"). The span runs from the first attribute to the second.

Counts swap too (SugarCrepe's count swaps): two counts of different value and different nouns, of one list
or one of them counting persons or animals, exchange their counts, each noun and its verb in the new number
("Two dogs and a cat are sleeping" -> "A dog and two cats are sleeping"), where a noun that becomes plural was seen counted by two
or more; never where the caption says a count again ("both", "one of whom", "each other") or where a
count is part of a name ("a four wheeler").
"""
from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations

from lgip_dataset.perturb.agreement import indefinite_article
from lgip_dataset.perturb.context import CaptionContext
from lgip_dataset.perturb.edits import article_edit, region_flip
from lgip_dataset.perturb.families.colors import is_person, person_color_words
from lgip_dataset.perturb.families.counts import CountSite, count_agreement, count_sites, counted_head, one_blocked
from lgip_dataset.perturb.families.hard_sites import count_said_twice
from lgip_dataset.perturb.phrases import attribute_category, noun_phrases
from lgip_dataset.perturb.plausibility import attached, context_words
from lgip_dataset.perturb.registry import register
from lgip_dataset.perturb.probe_lexicon import load_probe_lexicon
from lgip_dataset.perturb.relations import attribute_sense, bound_attributes
from lgip_dataset.perturb.seeding import KeyedRandom, single_sites
from lgip_dataset.perturb.variant import Variant


MIN_ATTESTED = 1  # captions of the other folds in which a noun that becomes plural was seen counted by two or more
# categories a photo shows outright, which swap with each other ("a wooden table with a red chair" -> "a red
# table with a wooden chair")
CONCRETE = frozenset(("color", "material", "texture", "state"))
# relative categories, which swap within their category only ("an old man and a young woman" -> "a young man
# and an old woman"; never "a young girl with a large umbrella" -> "a large girl with a young umbrella")
RELATIVE = frozenset(("size", "extent", "age", "light", "ground"))


def _categories_swap(one: str | None, other: str | None) -> bool:
    return (one in CONCRETE and other in CONCRETE) or (one == other and one in RELATIVE)


def _clash(ctx: CaptionContext, noun: int, incoming: int, leaving: int) -> bool:
    """True when the noun at token ``noun`` keeps another attribute of the incoming one's category
    ("a large brown dog" cannot take "white")."""
    category = attribute_category(ctx, incoming)
    return any(k == noun and i != leaving and attribute_category(ctx, i) == category for i, k, _ in bound_attributes(ctx))


def _names_person(ctx: CaptionContext, key: str) -> bool:
    """True for the key of a noun that is a person: "s:person" or a noun word :func:`is_person` takes for one."""
    return key == "s:person" or is_person(ctx, key)


def _swappable(ctx: CaptionContext, one: tuple[int, int, str], other: tuple[int, int, str]) -> bool:
    (i, k_i, noun_i), (j, k_j, noun_j) = one, other
    category_i, category_j = attribute_category(ctx, i), attribute_category(ctx, j)
    sense_i, sense_j = attribute_sense(ctx, i), attribute_sense(ctx, j)
    if noun_i == noun_j or not _categories_swap(category_i, category_j) or sense_i == sense_j:
        return False
    if "color" in (category_i, category_j) and (_names_person(ctx, noun_i) or _names_person(ctx, noun_j)
                                                or {i, j} & set(person_color_words(ctx))):  # never "a yellow woman"
        return False
    return category_i == category_j or not (_clash(ctx, k_i, j, i) or _clash(ctx, k_j, i, j))


def _swap(ctx: CaptionContext, i: int, j: int) -> Variant:
    a, b = ctx.tokens[i], ctx.tokens[j]
    new_a, new_b = ctx.cased(i, a.text, b.low), ctx.cased(j, b.text, a.low)
    edits = [(a.start, a.end, new_a), (b.start, b.end, new_b),
             *article_edit(ctx, i, new_a), *article_edit(ctx, j, new_b)]
    return region_flip(ctx, "binding", (a.start, b.end), edits)


# words that refer back to a count ("two people, one of whom", "both", "each"): no count swap beside them
REFERRING = frozenset(("both", "each", "whom", "either", "neither", "another", "other", "others", "one"))


def _after_article(ctx: CaptionContext, site: CountSite) -> bool:
    """True for a count after "a"/"an" ("a two wheeled bike", "a four wheeler"): part of a name, no count."""
    prev = ctx.prev_word(site.first)
    return prev is not None and prev.low in ("a", "an")


def _article_sites(ctx: CaptionContext) -> list[CountSite]:
    """"a"/"an" opening a noun phrase of a countable lexicon noun in the singular: a count of one."""
    return [CountSite(np.start, np.start + 1, 1, ()) for np in noun_phrases(ctx)
            if ctx.tokens[np.start].low in ("a", "an") and np.unit.form.number == "singular"
            and not ctx.lex.groups[np.unit.form.group].uncountable]


def _counted(ctx: CaptionContext, site: CountSite) -> tuple[str, str] | None:
    """(noun key, the count's context word) of the noun a count site counts, or None."""
    head = counted_head(ctx, site.end)
    context = context_words(ctx, site.first, site.end, "k")
    if head is None or not context:
        return None
    last, form = head
    return (form.group if form is not None else ctx.tokens[last].low), context[0]


def _count_word(ctx: CaptionContext, site: CountSite, value: int, word: str, after: CountSite) -> str:
    """The count ``word`` of the other site as written before ``after``'s noun ("a" or "an" for one)."""
    if value != 1 or word.lower() not in ("a", "an"):
        return word.lower()
    return indefinite_article(ctx.text[ctx.tokens[after.end].start:])


def _counted_plural(ctx: CaptionContext, noun: str) -> bool:
    """True when the statistics saw the noun (a count's context word) counted by two or more at least
    ``MIN_ATTESTED`` times ("two cats", "three cats"; never "two bathrooms")."""
    pairs = attached(ctx).counts.pairs
    return sum(pairs[(f"k:{word}", noun)] for word, value in ctx.lex.numbers.items() if value > 1) >= MIN_ATTESTED


def _count_swap(ctx: CaptionContext, one: CountSite, other: CountSite) -> Variant | None:
    """The two counts exchanged, each noun in its new number ("Two dogs and a cat" -> "A dog and two cats");
    None when a noun cannot agree, or a noun that becomes plural is never seen counted by two or more."""
    words = [ctx.text[slice(*ctx.span(s.first, s.end))] for s in (one, other)]
    edits = []
    for site, (value, word), target in ((one, (other.value, words[1]), other), (other, (one.value, words[0]), one)):
        counted = _counted(ctx, site)
        new = _count_word(ctx, site, value, word, site)
        if counted is None or (value != 1 and not _counted_plural(ctx, counted[1])):
            return None
        agreement = count_agreement(ctx, site, value)
        if agreement is None:
            return None
        start, end = ctx.span(site.first, site.end)
        edits += [(start, end, ctx.cased(site.first, ctx.text[start:end], new)), *agreement]
    edits = sorted(set(edits))
    if any(a[1] > b[0] for a, b in zip(edits, edits[1:])):
        return None
    return region_flip(ctx, "binding", (edits[0][0], edits[-1][1]), edits)


def count_swaps(ctx: CaptionContext) -> list[Variant]:
    """Every swap of two counts of different value and different nouns, of one list or one of them a person or
    an animal ("Four giraffes standing around while three zebras walk by", "A boy holding two remotes";
    SugarCrepe's count swaps)."""
    if one_blocked(ctx) or count_said_twice(ctx) or any(t.low in REFERRING for t in ctx.tokens):
        return []  # "next to each other", "two men ... one man", "one of whom": a count is said again
    sites = sorted([s for s in count_sites(ctx) if not _after_article(ctx, s)] + _article_sites(ctx),
                   key=lambda s: s.first)
    heads = {site.first: head for site in sites if (head := counted_head(ctx, site.end)) is not None}
    if any(_shares_its_article(ctx, last) for last, _ in heads.values()):
        return []  # "two laptops and television": the second noun had the first one's article
    swaps = []
    for one, other in combinations(sites, 2):
        counted = _counted(ctx, one), _counted(ctx, other)
        if one.value != other.value and None not in counted and counted[0][0] != counted[1][0] \
                and one.first in heads and (_coordinated(ctx, heads[one.first][0], other.first)
                                            or any(_being(ctx, c[0]) for c in counted)):
            swaps.append(_count_swap(ctx, one, other))
    return [v for v in swaps if v is not None]


def _being(ctx: CaptionContext, noun: str) -> bool:
    """True for a counted lexicon noun that is a person or an animal ("four giraffes ... three zebras")."""
    group = ctx.lex.groups.get(noun)
    return group is not None and group.supercategory in ("person", "animal")


def _coordinated(ctx: CaptionContext, last: int, start: int) -> bool:
    """True when the noun ending at token ``last`` and the count at ``start`` are items of one list ("two dogs
    and a cat", "a bike, two dogs"): only there does a photo of either caption stay plausible (judged blind,
    one person riding two motorcycles, one vase on two tables or one man at two tables are absurd)."""
    return start > last and all(ctx.tokens[k].low in ("and", "&") for k in range(last + 1, start)) \
        and start - last <= 2


def _shares_its_article(ctx: CaptionContext, last: int) -> bool:
    """True when "and" and a noun without a determiner follow the counted noun ("a laptop and television")."""
    after = ctx.next_word(last)
    nxt = ctx.next_word(last + 1) if after is not None and after.low in ("and", "&") else None
    return nxt is not None and nxt.low not in load_probe_lexicon().determiners and nxt.low not in ctx.lex.numbers


@register("binding", "flip", version="3.1.0")
def generate(ctx: CaptionContext, rng: KeyedRandom) -> list[Iterator[Variant]]:
    """One site per two attribute-noun pairs whose attributes may swap, and per two counts that may."""
    swaps = [_swap(ctx, one[0], other[0]) for one, other in combinations(bound_attributes(ctx), 2)
             if one[1] != other[1] and _swappable(ctx, one, other)]
    return single_sites(swaps + count_swaps(ctx), rng)
