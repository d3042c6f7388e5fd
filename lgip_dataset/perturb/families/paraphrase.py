"""Paraphrase families: ``template`` wraps ("a photo of {c}") and scene ``marker``s ("{c} in the scene")."""
from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator

from lgip_dataset.perturb.context import CaptionContext, Unit
from lgip_dataset.perturb.lexicon import Lexicon
from lgip_dataset.perturb.registry import register
from lgip_dataset.perturb.seeding import KeyedRandom, shuffled
from lgip_dataset.perturb.text import WORD_RE, capitalized, is_title
from lgip_dataset.perturb.variant import Variant

HAS_LETTER = re.compile(r"[^\W\d_]")
TAIL = " .!?,;:…"  # trailing characters removed before wrapping
SUBJECT_PRONOUNS = frozenset({"he", "she", "it", "they", "we", "i", "you", "someone", "somebody", "everyone"})
SUBJECT_OPENERS = frozenset({"a", "an", "the", "this", "that", "and", "his", "her", "their", "its", "my", "our"})


def split_caption(text: str) -> tuple[str, str]:
    """(core, end): whitespace-normalised caption without its trailing punctuation, and the
    sentence mark it had ("." for any run of periods, "!" or "?"; "" when it had none)."""
    norm = " ".join(text.split())
    core = norm.rstrip(TAIL)
    tail = norm[len(core):]
    end = "?" if "?" in tail else "!" if "!" in tail else "." if ("." in tail or "…" in tail) else ""
    return core, end


def caption_kind(ctx: CaptionContext) -> str:
    """"question", "framed" (the caption frames itself: "A picture of ...", "This is ...", "A black
    and white photo of ..."), "sentence" (a finite verb comes before any relative or subordinate
    clause: "A man is riding", "A dog sits") or "noun_phrase" ("A man riding a horse")."""
    lex, toks = ctx.lex, ctx.tokens
    if ctx.text.rstrip().endswith("?"):
        return "question"
    head = toks[:8]
    if (" ".join(t.low for t in head) + " ").startswith(lex.framed_prefixes) or any(
            a.low in lex.frame_nouns and b.low == "of" for a, b in zip(head, head[1:])):
        return "framed"
    cues = lex.kind_cues
    ends = {u.end: u for u in ctx.units.values()}
    for i, tok in enumerate(toks):
        low = tok.low
        if i and low in cues["subordinators"]:
            return "noun_phrase"
        if (low in cues["finite_verbs"] or low in cues["subject_verbs"] or low.endswith("s")) \
                and _finite_verb(ctx, i, ends):
            return "sentence"
    return "noun_phrase"


def _finite_verb(ctx: CaptionContext, i: int, units_by_end: dict[int, Unit]) -> bool:
    """An auxiliary ("is", "has"), a listed verb after its subject ("people walk", "she sits"), or
    an -s word right after a singular lexicon noun that opens the caption ("a person sprays")."""
    cues, tok = ctx.lex.kind_cues, ctx.tokens[i]
    if tok.low in cues["finite_verbs"]:
        return i == 0 or ctx.tokens[i - 1].low != "to"
    listed = tok.low in cues["subject_verbs"]
    if i == 0 or not (listed or tok.low.endswith("s")):
        return False
    prev = ctx.tokens[i - 1]
    if not (prev.low in SUBJECT_PRONOUNS or (ctx.is_content(prev) and not prev.low.endswith("ing"))):
        return False
    if listed:
        return True
    unit = units_by_end.get(i)
    return (unit is not None and unit.form is not None and unit.form.number == "singular"
            and not tok.low.endswith(("ss", "'s")) and ctx.is_content(tok)
            and i not in ctx.units and tok.low not in ctx.lex.modifier_heads
            and all(t.low in SUBJECT_OPENERS or (ctx.is_content(t) and not t.low.endswith("ing"))
                    for t in ctx.tokens[:unit.start]))


def lower_first(core: str, lex: Lexicon) -> str:
    """Lower-case the first word when it is a capitalised common word ("A", "Two"), not a proper
    noun or acronym ("Honda", "TV", "I")."""
    m = WORD_RE.match(core)
    if m and is_title(m.group()) and m.group().lower() in lex.common_words:
        return m.group().lower() + core[m.end():]
    return core


def paraphrases(ctx: CaptionContext) -> dict[str, list[str]]:
    """All paraphrases of the caption by family, in lexicon order (computed once per caption); an
    all-caps caption gets an all-caps frame."""
    if "paraphrases" in ctx.memo:
        return ctx.memo["paraphrases"]
    lex = ctx.lex
    core, end = split_caption(ctx.text)
    out: dict[str, list[str]] = defaultdict(list)
    if len(core) >= lex.min_caption_chars and HAS_LETTER.search(core):
        words = {t.low for t in ctx.tokens}
        lowered = core if ctx.shouting else lower_first(core, lex)  # "A PHOTO OF A RED BUS", never "... OF a RED BUS"
        upper = core[0].isupper()
        for p in lex.patterns[caption_kind(ctx)]:
            if words.isdisjoint(p.frame_nouns):
                text = ctx.inserted(p.before) + (lowered if p.before else core) + ctx.inserted(p.after) + end
                out[p.family].append(capitalized(text) if upper else text)
    ctx.memo["paraphrases"] = out
    return out


def _site(ctx: CaptionContext, family: str, rng: KeyedRandom) -> Iterator[Variant]:
    for text in shuffled(paraphrases(ctx)[family], rng):
        yield Variant(text, "paraphrase", family)


@register("template", "paraphrase", version="1.1.1")
def template(ctx: CaptionContext, rng: KeyedRandom) -> list[Iterator[Variant]]:
    """Framing wraps that keep every word of the caption: "a photo of {c}", "a photo in which {c}"."""
    return [_site(ctx, "template", rng)]


@register("marker", "paraphrase", version="1.1.1")
def marker(ctx: CaptionContext, rng: KeyedRandom) -> list[Iterator[Variant]]:
    """Short scene markers before or after the caption: "{c} in this picture", "in the scene, {c}"."""
    return [_site(ctx, "marker", rng)]
