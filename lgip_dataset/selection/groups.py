"""2x2 group mining (EqBen / Winoground): pairs of images whose human captions differ by exactly one
flipped word, e.g. image A "a red bus parked on the street" and image B "a blue bus parked on the
street". The evaluation side scores each group's 2x2 (text, image and group scores).

Captions are compared as sequences of *slots*: lower-cased words with punctuation ignored, each
object noun unit ("hot dog") and each spatial/temporal unit ("in front of") one slot, and "a"/"an"
one slot (so "a red bus" / "an orange bus" differ in one word). Two captions of different images
form a group of type t when their slots are equal except one, and that slot holds, in both, a word
of type t in the sense the flip families use, flippable into each other: colors of different
groups (color use), object nouns of unrelated groups (noun use), number words of different value
(count use, so the counted noun keeps its number), or opposite spatial/temporal units.

Index: every caption is filed once per typed slot under its slot sequence with that slot masked,
so only captions that can pair meet (linear in the number of captions, plus the pairs found).
At most one group per (image pair, type): among its candidate caption pairs the one with the
smallest sha256(seed, caption ids) is kept. Output order: type, image_a, image_b (image_a < image_b).
"""
from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from lgip_dataset.perturb.context import CaptionContext
from lgip_dataset.perturb.families.opposites import opposite_units
from lgip_dataset.perturb.lexicon import Lexicon, load_lexicon
from lgip_dataset.perturb.probe_lexicon import load_probe_lexicon
from lgip_dataset.perturb.senses import is_color_use, is_count_use, is_object_noun

GROUP_TYPES = ("color", "object", "count", "spatial", "temporal")
ARTICLE = "a|an"


@dataclass(frozen=True)
class Slot:
    word: str  # lower-cased text of the slot ("hot dog", "in front of", "a|an")
    text: str  # as written in the caption
    start: int  # character offset in the caption
    type: str | None  # the flip type this slot can take part in
    sense: object  # what must differ for a flip (color group, object group, value, side)


def caption_slots(text: str, lex: Lexicon | None = None) -> list[Slot]:
    """The slots of one caption (see the module docstring)."""
    lex = lex or load_lexicon()
    ctx = CaptionContext(text, lex)
    opposites = load_probe_lexicon().opposites
    units = {i: (j, family, opp) for family in ("spatial", "temporal") for i, j, opp in opposite_units(ctx, family)}
    slots, i = [], 0
    while i < len(ctx.tokens):
        tok = ctx.tokens[i]
        end, typ, sense = i + 1, None, None
        if i in units:
            end, family, opposite = units[i]
            typ, sense = family, opposites[family][opposite]  # the canonical unit of its own side
        elif tok.low in lex.color_group and is_color_use(ctx, i):  # before units: "orange" is a noun too
            typ, sense = "color", lex.color_group[tok.low]
        elif i in ctx.units and ctx.units[i].form is not None:
            unit = ctx.units[i]
            end = unit.end
            if is_object_noun(ctx, unit):
                typ, sense = "object", unit.form.group
        elif tok.low in lex.numbers and is_count_use(ctx, i):
            typ, sense = "count", lex.numbers[tok.low]
        s, e = tok.start, ctx.tokens[end - 1].end
        word = ARTICLE if tok.low in ("a", "an") else " ".join(t.low for t in ctx.tokens[i:end])
        slots.append(Slot(word, text[s:e], s, typ, sense))
        i = end
    return slots


def flippable(a: Slot, b: Slot, lex: Lexicon | None = None) -> bool:
    """True when slots ``a`` and ``b`` hold words of one type that contradict each other, by the
    lexicon's own rules for flips (no related object groups, no near colors)."""
    if a.type is None or a.type != b.type or a.sense == b.sense:
        return False
    lex = lex or load_lexicon()
    if a.type == "object":
        return b.sense not in lex.object_related[a.sense]
    if a.type == "color":
        return b.sense not in lex.color_near[a.sense]
    return True


def _pair_key(seed: int, a: str, b: str) -> bytes:
    return hashlib.sha256(f"{seed}\x1f{a}\x1f{b}".encode()).digest()


def mine_groups(captions: Iterable[tuple[str, int, str]], seed: int = 0) -> list[dict]:
    """Groups (rows of ``schema.GROUP_FEATURES``) from ``(caption_id, image_id, text)`` triples."""
    lex = load_lexicon()
    index: dict[tuple, list[tuple[int, Slot]]] = defaultdict(list)
    rows = []
    for caption_id, image_id, text in captions:
        slots = caption_slots(text, lex)
        n = len(rows)
        rows.append((caption_id, image_id, text))
        words = tuple(s.word for s in slots)
        for k, slot in enumerate(slots):
            if slot.type is not None:
                index[(slot.type, words[:k], words[k + 1:])].append((n, slot))
    best: dict[tuple, tuple[bytes, dict]] = {}
    for bucket in index.values():
        for x in range(len(bucket)):
            for y in range(x + 1, len(bucket)):
                (na, sa), (nb, sb) = bucket[x], bucket[y]
                if rows[na][1] == rows[nb][1] or not flippable(sa, sb, lex):
                    continue
                if rows[na][1] > rows[nb][1]:
                    (na, sa), (nb, sb) = (nb, sb), (na, sa)
                key = (sa.type, rows[na][1], rows[nb][1])
                rank = _pair_key(seed, rows[na][0], rows[nb][0])
                if key not in best or rank < best[key][0]:
                    best[key] = (rank, _group_row(sa.type, rows[na], rows[nb], sa, sb))
    return [best[k][1] for k in sorted(best, key=lambda k: (GROUP_TYPES.index(k[0]), k[1], k[2]))]


def _group_row(typ: str, a: tuple[str, int, str], b: tuple[str, int, str], sa: Slot, sb: Slot) -> dict:
    return {"group_id": f"g-{typ}-{a[1]}-{b[1]}", "type": typ, "image_a": a[1], "image_b": b[1],
            "caption_a_id": a[0], "caption_b_id": b[0], "caption_a": a[2], "caption_b": b[2],
            "word_a": sa.text, "word_b": sb.text, "span_start": sa.start}
