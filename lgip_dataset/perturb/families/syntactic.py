"""Syntactic paraphrases (kind ``paraphrase``, type ``syntactic``): meaning-preserving rewrites
beyond templates, each applied only where it is exact:

- existential: "A dog sitting on a couch." <-> "There is a dog sitting on a couch." ("There are"
  for a plural or coordinated phrase; only noun-phrase captions opening with a/an/some/a number + noun);
- respectively (SNARE): "A red car and a white truck." -> "The car and the truck are red and
  white respectively." (the caption opens with the coordination; any rest follows after a comma);
- passive: "A man riding a horse on a beach." -> "A horse being ridden by a man on a beach.",
  "A man is riding a horse." -> "A horse is being ridden by a man." (listed participles only; not
  when the object is coordinated or followed by "of"/"with", which would change attachment).
"""
from __future__ import annotations

from collections.abc import Iterator

from lgip_dataset.perturb.context import CaptionContext
from lgip_dataset.perturb.families.paraphrase import caption_kind, lower_first, split_caption
from lgip_dataset.perturb.phrases import NounPhrase, attribute_pairs, noun_phrases, phrase_text, probes
from lgip_dataset.perturb.registry import register
from lgip_dataset.perturb.seeding import KeyedRandom, single_sites
from lgip_dataset.perturb.senses import noun_number
from lgip_dataset.perturb.text import is_title
from lgip_dataset.perturb.variant import Variant

INDEFINITE = frozenset(("a", "an", "some"))
PASSIVE_BLOCKERS = frozenset(("and", "or", "of", "with"))


def _cap(text: str, like: str) -> str:
    """``text`` with its first letter upper-case when ``like`` starts upper-case."""
    return text[:1].upper() + text[1:] if like[:1].isupper() else text


def _rest(ctx: CaptionContext, token: int, core: str) -> str:
    """The caption core from token ``token`` on ('' past the end)."""
    return core[ctx.tokens[token].start:] if token < len(ctx.tokens) else ""


def existential(ctx: CaptionContext, phrases: list[NounPhrase], core: str, end: str) -> list[str]:
    toks = ctx.tokens
    if len(toks) > 3 and toks[0].low == "there" and toks[1].low in ("is", "are") and ctx.joined(1, 2) \
            and phrases and phrases[0].start == 2 and (toks[2].low in INDEFINITE or toks[2].low in ctx.lex.numbers):
        return [_cap(core[toks[2].start:], core) + end]
    if not phrases or phrases[0].start != 0 or caption_kind(ctx) != "noun_phrase":
        return []
    if toks[0].low not in INDEFINITE and toks[0].low not in ctx.lex.numbers:
        return []
    after = ctx.next_word(phrases[0].end - 1)
    plural = noun_number(ctx, phrases[0].unit) == "plural" or (after is not None and after.low == "and")
    be = "are" if plural else "is"
    return [_cap(ctx.inserted(f"there {be} "), core) + lower_first(core, ctx.lex) + end]


def respectively(ctx: CaptionContext, core: str, end: str) -> list[str]:
    pairs = attribute_pairs(ctx)
    toks = ctx.tokens
    if len(pairs) < 2 or pairs[0][0] != 1 or toks[0].low not in ("a", "an", "the"):
        return []
    (i, first), (j, second) = pairs[0], pairs[1]
    if not (first.end + 2 == j and toks[first.end].low == "and" and toks[first.end + 1].low in ("a", "an", "the")
            and all(ctx.joined(k, k + 1) for k in range(0, j))):
        return []
    words = [toks[i].low if is_title(toks[i].text) else toks[i].text, toks[j].text]
    nouns = [ctx.text[u.span[0]:u.span[1]] for u in (first, second)]
    rest = _rest(ctx, second.end, core)
    the, and_, are, respectively = (ctx.inserted(w) for w in ("the", "and", "are", "respectively"))
    text = f"{the} {nouns[0]} {and_} {the} {nouns[1]} {are} {words[0]} {and_} {words[1]} {respectively}"
    return [_cap(text, core) + (", " + rest if rest else "") + end]


def passive(ctx: CaptionContext, phrases: list[NounPhrase], core: str, end: str) -> list[str]:
    if len(phrases) < 2 or phrases[0].start != 0:
        return []
    subj, obj = phrases[0], phrases[1]
    toks = ctx.tokens
    verb = subj.end + (toks[subj.end].low in ("is", "are"))
    participle = probes().participles.get(toks[verb].low) if verb < len(toks) else None
    if participle is None or obj.start != verb + 1 or not all(ctx.joined(k, k + 1) for k in range(subj.end - 1, obj.end - 1)):
        return []
    if obj.end < len(toks) and (toks[obj.end].low in PASSIVE_BLOCKERS or not ctx.joined(obj.end - 1, obj.end)):
        return []
    aux = ""
    if verb > subj.end:
        aux = ctx.inserted("is " if noun_number(ctx, obj.unit) == "singular" else "are ")
    rest = _rest(ctx, obj.end, core)
    subject = lower_first(phrase_text(ctx, subj), ctx.lex)
    text = f"{phrase_text(ctx, obj)} {aux}{ctx.inserted(f'being {participle} by')} {subject}" + (" " + rest if rest else "")
    return [_cap(text, core) + end]


@register("syntactic", "paraphrase", version="1.2.0")
def generate(ctx: CaptionContext, rng: KeyedRandom) -> list[Iterator[Variant]]:
    """One site per applicable rewrite (existential, respectively, passive)."""
    core, end = split_caption(ctx.text)
    if not ctx.tokens or not ctx.text.startswith(core):  # token offsets index the caption as written
        return []
    phrases = noun_phrases(ctx)
    texts = [*existential(ctx, phrases, core, end), *respectively(ctx, core, end), *passive(ctx, phrases, core, end)]
    return single_sites([Variant(t, "paraphrase", "syntactic") for t in texts], rng)
