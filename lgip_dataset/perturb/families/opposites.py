"""One-word spatial and temporal flips (ControlledImCaps, EqBen): a spatial or temporal unit ->
its opposite: left<->right, above<->below, on top of<->under, in front of<->behind,
inside<->outside, inside of<->outside of; before<->after (3.1.0: each pair's words inserted where they are removed,
"on top of" -> "under" and "inside of" -> "outside of", so that a choice balanced on words can keep both
directions; 3.0.0 turned "on top of" into "underneath" while "under" became "on top of", so that a choice balanced
on words kept few of either). Whole words and multiword units only ("in front of" is one
unit). Front and behind are not flipped before things people face ("in front of a laptop"). "left"/"right" are flipped only as directions (after "the", "to", "his", ...: not "a bag
left on a bench", not "right next to"); no unit is flipped before "construction", "way", ...;
"before"/"after" only in a temporal sense that a still image can decide: before a listed event
that leaves a visible state, directly or after a determiner ("after the rain", "before dinner";
not "stretching before running" or "before the race", which look the same either way, nor
"running after a ball", "kneeling before two horses") (``probes.json``). An upper-case word gets an upper-case opposite ("INSIDE").

A spatial opposite is kept wherever a noun or a pronoun follows it; no statistics are asked. This generates
broadly, on purpose: what is absurd ("a pizza underneath a table") is left to blind judges, whose labels keep
only the valid flips (``lgip judge``, the ``validated`` config). Rules drop what they can say: inside and
outside are flipped only before an enclosure one can be in or out of (``probes.json`` ``enclosures``: a
building, a room, a vehicle; not "in a large body of water outside", not "the food inside" a refrigerator),
never before a pronoun; before a noun, in front of and behind never in a caption naming a role the game
places ("a catcher behind the batter", ``role_fixed``), and on top of, under and above never before the
ground, a surface or water (``places.json``: "standing on top of a sandy beach" says only "on"). Before a
pronoun ("a street sign above it") only the enclosure rule is asked. Left and right need no noun, a mirrored
photo being as plausible as the photo, unless the caption names both sides.
"""
from __future__ import annotations

from collections.abc import Iterator

from lgip_dataset.perturb.context import CaptionContext
from lgip_dataset.perturb.edits import flip
from lgip_dataset.perturb.places import load_places
from lgip_dataset.perturb.probe_lexicon import load_probe_lexicon
from lgip_dataset.perturb.registry import register
from lgip_dataset.perturb.relations import NONE, names_role_fixed, object_key, relation_words
from lgip_dataset.perturb.seeding import KeyedRandom, single_sites
from lgip_dataset.perturb.variant import Variant

DIRECTIONS = frozenset(("left", "right"))
FRONT_BEHIND = frozenset((("in", "front", "of"), ("behind",)))
EVENT_DETERMINERS = frozenset(("a", "an", "the", "his", "her", "their", "its", "my", "our"))
DEPTH = frozenset(("behind", "in front of"))  # no flip of these in a caption naming a role the game places
IN_OUT = frozenset(("inside", "outside"))  # flipped only before an enclosure
PRONOUNS = frozenset(("it", "him", "her", "them"))  # an object said before ("with a street sign above it")
VERTICAL = frozenset(("on top of", "under", "above"))  # never before the ground, a surface or water
GROUNDS = frozenset(("ground", "surface", "water"))  # the classes of places.json one stands on
WATER = "water"  # no place of places.json (no hard flip turns it into another place) but one it stands on as well


def attested(ctx: CaptionContext, i: int, j: int, opposite: tuple[str, ...]) -> bool:
    """True when the relation at tokens ``i..j-1`` may turn into ``opposite`` (the rules of the module
    docstring); left and right always, unless the caption says both ("his right hand ... his left hand")."""
    if opposite[0] in DIRECTIONS:
        return not DIRECTIONS <= {t.low for t in ctx.tokens}
    words, probes = relation_words(), load_probe_lexicon()
    old, new = words.preposition_sense.get(tuple(t.low for t in ctx.tokens[i:j])), words.preposition_sense.get(opposite)
    obj, after = object_key(ctx, j), ctx.next_word(j - 1)
    if obj is None and after is not None and after.low in PRONOUNS and ctx.joined(j - 1, j):
        return new not in IN_OUT  # "a street sign above it": what it is, is said before
    if old is None or new is None or obj is None or obj == NONE:
        return False
    places = load_places()
    ground = obj == WATER or places.class_of.get(places.group_of.get((obj,), "")) in GROUNDS
    return not ((new in IN_OUT and obj not in probes.enclosures) or (new in DEPTH and names_role_fixed(ctx))
                or (new in VERTICAL and ground))


def _temporal(ctx: CaptionContext, last: int) -> bool:
    """True when the words after token ``last`` make before/after temporal and decidable from a
    still image: a listed event that leaves a visible state, directly or after a determiner."""
    events = load_probe_lexicon().temporal_events
    nxt = ctx.next_word(last)
    if nxt is not None and nxt.low in EVENT_DETERMINERS:
        nxt = ctx.next_word(last + 1)
    return nxt is not None and nxt.low in events


def _faced(ctx: CaptionContext, last: int) -> bool:
    """True when one of the three words after token ``last`` is a thing people face ("in front of
    a laptop"): behind it is where the same person would not be seen working."""
    faced = load_probe_lexicon().faced_objects
    return any(ctx.tokens[k].low in faced for k in range(last + 1, min(last + 4, len(ctx.tokens)))
               if all(ctx.joined(j, j + 1) for j in range(last, k)))


def opposite_units(ctx: CaptionContext, family: str) -> list[tuple[int, int, tuple[str, ...]]]:
    """(first token, end token, opposite unit) of every flippable unit of ``family``, longest first."""
    probes = load_probe_lexicon()
    table, lows = probes.opposites[family], [t.low for t in ctx.tokens]
    found, i = [], 0
    while i < len(lows):
        for n in range(min(probes.max_unit_words, len(lows) - i), 0, -1):
            unit = tuple(lows[i:i + n])
            if unit in table and all(ctx.joined(k, k + 1) for k in range(i, i + n - 1)):
                prev, nxt = ctx.prev_word(i), ctx.next_word(i + n - 1)
                sense_ok = (unit[0] not in DIRECTIONS or (prev is not None and prev.low in probes.left_right_after)) \
                    and (family != "temporal" or _temporal(ctx, i + n - 1)) \
                    and not (unit in FRONT_BEHIND and _faced(ctx, i + n - 1))
                if sense_ok and (nxt is None or nxt.low not in probes.not_before) \
                        and (family != "spatial" or attested(ctx, i, i + n, table[unit])):
                    found.append((i, i + n, table[unit]))
                break
        i += n  # n == 1 when nothing matched
    return found


def _flip(ctx: CaptionContext, family: str, i: int, j: int, opposite: tuple[str, ...]) -> Variant:
    """Tokens ``i..j-1`` replaced by ``opposite``, upper-case for an upper-case word ("INSIDE")."""
    span = ctx.span(i, j)
    original, word = ctx.text[span[0]:span[1]], " ".join(opposite)
    return flip(ctx, family, i, span, word.upper() if len(original) > 1 and original.isupper() else word)


def _generator(family: str):
    def generate(ctx: CaptionContext, rng: KeyedRandom) -> list[Iterator[Variant]]:
        return single_sites([_flip(ctx, family, i, j, opposite) for i, j, opposite in opposite_units(ctx, family)], rng)
    generate.__doc__ = f"One site per {family} unit with a listed opposite."
    return generate


register("spatial", "flip", version="3.1.0")(_generator("spatial"))
register("temporal", "flip", version="1.1.0")(_generator("temporal"))
