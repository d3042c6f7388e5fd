"""One-word spatial and temporal flips (ControlledImCaps, EqBen): a spatial or temporal unit ->
its opposite: left<->right, above<->below, on top of<->underneath, in front of<->behind,
inside<->outside; before<->after. Whole words and multiword units only ("in front of" is one
unit). Front and behind are not flipped before things people face ("in front of a laptop"). "left"/"right" are flipped only as directions (after "the", "to", "his", ...: not "a bag
left on a bench", not "right next to"); no unit is flipped before "construction", "way", ...;
"before"/"after" only in a temporal sense that a still image can decide: before a listed event
that leaves a visible state, directly or after a determiner ("after the rain", "before dinner";
not "stretching before running" or "before the race", which look the same either way, nor
"running after a ball", "kneeling before two horses") (``probes.json``). An upper-case word gets an upper-case opposite ("INSIDE").

A spatial opposite is kept only where the statistics of the other image folds attest it: the relation's
subject and object (:mod:`lgip_dataset.perturb.relations`) seen in the opposite relation at least
``MIN_ATTESTED`` times and at least ``MIN_SHARE`` as often as in the caption's ("a cat under a car" is seen
about as often as on top of one; never "a woman sitting underneath a park bench" or "giraffes on top of a
tree"). Their COCO supercategories are not enough: birds sit on top of trees, giraffes do not. In front
of and behind ask only the object, seen with something in the opposite relation, whatever the subject
(``DEPTH``), and a noun after them: what stands in front of a fence is often seen behind one, but what
stands in front of a building is hidden behind it, and COCO captions seldom say "behind a building".
Left and right need no attestation, a mirrored photo being as plausible as the photo, unless the caption
names both sides.
"""
from __future__ import annotations

from collections.abc import Iterator

from lgip_dataset.perturb.context import CaptionContext
from lgip_dataset.perturb.edits import flip
from lgip_dataset.perturb.plausibility import attached
from lgip_dataset.perturb.probe_lexicon import load_probe_lexicon
from lgip_dataset.perturb.registry import register
from lgip_dataset.perturb.relations import NONE, object_key, relation_sites, relation_words
from lgip_dataset.perturb.seeding import KeyedRandom, single_sites
from lgip_dataset.perturb.variant import Variant

DIRECTIONS = frozenset(("left", "right"))
FRONT_BEHIND = frozenset((("in", "front", "of"), ("behind",)))
EVENT_DETERMINERS = frozenset(("a", "an", "the", "his", "her", "their", "its", "my", "our"))
MIN_ATTESTED = 1  # captions of the other folds relating the two nouns by the opposite
MIN_SHARE = 0.1  # ... and at least this share of those relating them as the caption does
DEPTH = frozenset(("behind", "in front of"))  # the object alone decides (see the module docstring)


def attested(ctx: CaptionContext, i: int, j: int, opposite: tuple[str, ...]) -> bool:
    """True when the relation at tokens ``i..j-1`` turned into ``opposite`` is attested (see the module
    docstring); left and right always, unless the caption says both ("his right hand ... his left hand")."""
    if opposite[0] in DIRECTIONS:
        return not DIRECTIONS <= {t.low for t in ctx.tokens}
    words, scorer = relation_words(), attached(ctx)
    old, new = words.preposition_sense.get(tuple(t.low for t in ctx.tokens[i:j])), words.preposition_sense.get(opposite)
    if new in DEPTH:
        subject, obj = "*", object_key(ctx, j)
    else:
        site = next((s for s in relation_sites(ctx) if s.preposition == (i, j)), None)
        subject, obj = (site.subject, site.object_key) if site is not None else (None, None)
    if old is None or new is None or subject is None or obj is None or (new in DEPTH and obj == NONE):
        return False
    seen = scorer.relation_count(subject, new, obj)
    return seen >= MIN_ATTESTED and seen >= MIN_SHARE * scorer.relation_count(subject, old, obj)


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


register("spatial", "flip", version="2.0.0")(_generator("spatial"))
register("temporal", "flip", version="1.1.0")(_generator("temporal"))
