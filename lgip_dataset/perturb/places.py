"""Scene and place nouns (lexicon ``places.json``): where a caption is set ("in a kitchen", "on
the beach", "in the snow"), found as sites of the hard object flips and as their statistics' targets."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from lgip_dataset.perturb.agreement import is_noun_like
from lgip_dataset.perturb.context import CaptionContext
from lgip_dataset.perturb.lexicon import _read
from lgip_dataset.perturb.senses import PREPOSITIONS

PLACE_DETERMINERS = frozenset(("a", "an", "the", "some"))
NOT_BEFORE_PLACE = frozenset(("of", "like", "for"))  # "a glass of water", "looks like snow": no place
INTENSIFIERS = frozenset(("very", "quite", "rather", "really"))  # "a very large kitchen"
MAX_PLACE_ADJECTIVES = 2  # "a large grassy field": this many adjectives between the article and the place


@dataclass(frozen=True)
class Places:
    """The place lexicon: each written form's group, each group's class, replacement and near groups."""
    group_of: dict[tuple[str, ...], str]  # ("living", "room") -> "living room"
    class_of: dict[str, str]  # group -> class
    near: dict[str, frozenset[str]]  # group -> groups one picture may show with it
    max_words: int
    fixed_by: dict[str, frozenset[str]]  # "water" -> "boat", "paddles": caption words that keep the place
    apart: dict[str, frozenset[str]]  # "water" -> "field": no flip into water in a caption naming a field
    kept_out: dict[str, frozenset[str]]  # "water" -> "cat": no flip into water in a caption naming a cat
    compound_participles: frozenset[str]  # "covered": "snow covered branches" is a modifier, no place
    not_after: dict[str, frozenset[str]]  # "park" -> "down": no "down a park"


@lru_cache(maxsize=1)
def load_places() -> Places:
    """The packaged ``places.json``."""
    data = _read("places")
    group_of, class_of = {}, {}
    for name, groups in data["classes"].items():
        for forms in groups:
            class_of[forms[0]] = name
            group_of.update({tuple(form.split()): forms[0] for form in forms})
    near: dict[str, set[str]] = {g: set() for g in class_of}
    for one, other in data["near"]:
        near[one].add(other)
        near[other].add(one)
    apart: dict[str, set[str]] = {g: set() for g in class_of}
    for into, other in data["apart"]:  # one way: no flip into the first where the caption names the second
        apart[into].add(other)
    return Places(group_of, class_of, {g: frozenset(n) for g, n in near.items()}, max(map(len, group_of)),
                  {g: frozenset(w) for g, w in data["fixed_by"].items()}, {g: frozenset(a) for g, a in apart.items()},
                  {g: frozenset(w) for g, w in data["kept_out"].items()}, frozenset(data["compound_participles"]),
                  {g: frozenset(w) for g, w in data["not_after"].items()})


@dataclass(frozen=True)
class PlaceSite:
    """A place noun at tokens ``first..end-1`` of ``group`` and the groups it may become."""
    first: int
    end: int
    group: str
    targets: tuple[str, ...]


def _place_at(ctx: CaptionContext, i: int, places: Places) -> tuple[int, str] | None:
    """(end token, group) of the longest place form starting at token ``i``."""
    for n in range(places.max_words, 0, -1):
        words = tuple(t.low for t in ctx.tokens[i:i + n])
        if len(words) == n and words in places.group_of and all(ctx.joined(k, k + 1) for k in range(i, i + n - 1)):
            return i + n, places.group_of[words]
    return None


def _determined(ctx: CaptionContext, i: int) -> bool:
    """True when an article or a preposition stands before token ``i`` ("in grass"), across at
    most MAX_PLACE_ADJECTIVES words that are not nouns ("a lush green field", "a very large
    kitchen"; not "a city street", "a snow covered field")."""
    j = i - 1
    while j >= i - 1 - MAX_PLACE_ADJECTIVES and ctx.joined(j, j + 1):
        tok = ctx.tokens[j]
        if tok.low in PLACE_DETERMINERS or (j == i - 1 and tok.low in PREPOSITIONS and tok.low not in NOT_BEFORE_PLACE):
            return True
        if tok.low not in INTENSIFIERS and (not ctx.is_content(tok) or is_noun_like(tok.low)):
            return False
        j -= 1
    return False


def preposition_before(ctx: CaptionContext, i: int) -> str | None:
    """The preposition before the noun or place at token ``i``, across its article and adjectives
    ("on" of "on the sandy beach"), else None."""
    j = i - 1
    while j >= max(i - 2 - MAX_PLACE_ADJECTIVES, 0) and ctx.joined(j, j + 1):
        tok = ctx.tokens[j]
        if tok.low in PREPOSITIONS:
            return tok.low
        if tok.low not in PLACE_DETERMINERS and tok.low not in INTENSIFIERS and not ctx.is_content(tok):
            return None
        j -= 1
    return None


def _stands_alone(ctx: CaptionContext, end: int, places: Places) -> bool:
    """True when the place is no modifier of the next word ("kitchen counter", "beach umbrella",
    "water bottle", "snow covered branches": a compound participle before a content word) nor a part named
    by "of": the next word is none, a function word other than "of", or an -ing/-ed form."""
    nxt = ctx.next_word(end - 1)
    if nxt is None or not ctx.is_content(nxt):
        return nxt is None or nxt.low != "of"  # "the grass of a field" names part of a place
    if nxt.low in places.compound_participles and ctx.is_content(ctx.next_word(end)):
        return False
    return nxt.low.endswith(("ing", "ed")) and not is_noun_like(nxt.low)


def place_sites(ctx: CaptionContext) -> list[PlaceSite]:
    """Every place noun with an article that stands alone and is its group's only mention, with the
    groups of its class that neither it nor any other place of the caption excludes (computed once
    per caption: the plausibility targets and the place flips both ask)."""
    if "place_sites" in ctx.memo:
        return ctx.memo["place_sites"]
    places = load_places()
    found, i = [], 0
    while i < len(ctx.tokens):
        hit = _place_at(ctx, i, places)
        if hit is None:
            i += 1
            continue
        found.append((i, *hit))
        i = hit[0]
    groups = [g for _, _, g in found]
    sites = []
    for first, end, group in found:
        if groups.count(group) > 1 or not _determined(ctx, first) or not _stands_alone(ctx, end, places) \
                or ctx.text[ctx.tokens[end - 1].end:][:1] in ("'", "’"):
            continue
        targets = tuple(g for g, c in places.class_of.items()
                        if c == places.class_of[group] and g != group and g not in groups
                        and g not in places.near[group] and not places.near[g] & set(groups))
        if targets:
            sites.append(PlaceSite(first, end, group, targets))
    ctx.memo["place_sites"] = sites
    return sites
