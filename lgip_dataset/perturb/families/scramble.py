"""Word-order scrambles (SNARE "semantic structure"), one family each, scored n-way (the caption
against its scrambles): ``scramble_content`` permutes only the content words, ``scramble_function``
only the function words (the closed list of ``function_words.json``), ``scramble_all`` every word.

Punctuation and spacing stay in place; words move, so the bag of words is unchanged. A
capitalised common first word is moved in lower case and the new first word capitalised. No scramble
moves a colour word before a person word ("a standing yellow woman": a skin colour). Every
scramble differs from the caption; the span runs from the first to the last moved word.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator

from lgip_dataset.perturb.context import CaptionContext, possessor
from lgip_dataset.perturb.edits import region_flip
from lgip_dataset.perturb.families.colors import is_person
from lgip_dataset.perturb.registry import register
from lgip_dataset.perturb.seeding import KeyedRandom
from lgip_dataset.perturb.text import capitalized, is_title
from lgip_dataset.perturb.variant import Variant

MAX_DRAWS = 32  # permutations tried per caption; every distinct one is a candidate
PERSON_REACH = 3  # a colour word this many words before a person word would read as the person's colour

Selector = Callable[[CaptionContext, int], bool]
CLASSES: dict[str, Selector] = {
    "scramble_content": lambda ctx, i: ctx.tokens[i].low not in ctx.lex.function_words,
    "scramble_function": lambda ctx, i: ctx.tokens[i].low in ctx.lex.function_words,
    "scramble_all": lambda ctx, i: True,
}


def _coloured_persons(ctx: CaptionContext, words: list[str]) -> set[tuple[str, str]]:
    """Each colour word of ``words`` (or a hyphenated word with one: "blue-and-white") with each person word (a
    possessive read as its possessor) at most ``PERSON_REACH`` words after it: a pair the caption lacks puts a
    colour on a person ("in black body suit" -> "black woman")."""
    low = [w.lower() for w in words]
    return {(w, possessor(v)) for i, w in enumerate(low) if any(part in ctx.lex.color_group for part in w.split("-"))
            for v in low[i + 1:i + 1 + PERSON_REACH] if is_person(ctx, possessor(v))}


def _scrambles(ctx: CaptionContext, family: str, rng: KeyedRandom) -> Iterator[Variant]:
    positions = [i for i in range(len(ctx.tokens)) if CLASSES[family](ctx, i)]
    words = [t.text for t in ctx.tokens]
    lowered = bool(words) and is_title(words[0]) and words[0].lower() in ctx.lex.common_words
    if lowered:
        words[0] = words[0].lower()
    if len({words[i].lower() for i in positions}) < 2:
        return
    for _ in range(MAX_DRAWS):
        order = list(positions)
        for k in range(len(order) - 1, 0, -1):
            j = rng.randrange(0, k + 1)
            order[k], order[j] = order[j], order[k]
        new = list(words)
        for dst, src in zip(positions, order):
            new[dst] = words[src]
        if lowered:
            new[0] = capitalized(new[0])
        changed = [i for i, tok in enumerate(ctx.tokens) if new[i] != tok.text]
        if [w.lower() for w in new] == [w.lower() for w in words]:
            continue
        if _coloured_persons(ctx, new) - _coloured_persons(ctx, words):  # never "a yellow woman"
            continue
        edits = [(ctx.tokens[i].start, ctx.tokens[i].end, new[i]) for i in changed]
        yield region_flip(ctx, family, (ctx.tokens[changed[0]].start, ctx.tokens[changed[-1]].end), edits)


def _generator(family: str):
    def generate(ctx: CaptionContext, rng: KeyedRandom) -> list[Iterator[Variant]]:
        return [_scrambles(ctx, family, rng)]
    generate.__doc__ = f"One site: seeded permutations of the words that {family} moves."
    return generate


for _family in CLASSES:
    register(_family, "flip", version="1.3.0")(_generator(_family))
