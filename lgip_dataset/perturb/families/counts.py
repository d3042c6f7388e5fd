"""Count flips: a count (a number word or a quantity phrase such as "a couple of") -> another
number word, with the counted noun's number and the verb that agrees with it fixed.

Site finding (:func:`count_sites`) and the flip with its agreement (:func:`count_flip`) are public
so that other families can choose the replacement differently and keep the same sites and edits.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from lgip_dataset.perturb.agreement import (AUXILIARY_NUMBER, can_be_noun, is_noun_like, is_verb_only, noun_for_number,
                                            verb_for_number)
from lgip_dataset.perturb.context import CaptionContext
from lgip_dataset.perturb.edits import Edit, flip
from lgip_dataset.perturb.lexicon import NounForm
from lgip_dataset.perturb.registry import register
from lgip_dataset.perturb.seeding import KeyedRandom, shuffled
from lgip_dataset.perturb.senses import is_count_use, modifies_next
from lgip_dataset.perturb.text import Token, same_case
from lgip_dataset.perturb.variant import Variant

_PARTITIVE_DETERMINERS = frozenset(("the", "these", "those", "my", "his", "her", "their", "our", "its"))
RELATIVE = frozenset(("that", "who", "which"))
SUBJECT_END = frozenset(("that", "who", "which", "where", "while", "as", "when", "and", "or", "but", "because",
                         "whereas", "with"))  # a far auxiliary after one of these has another subject
MAX_SUBJECT_WORDS = 8  # "One skier in a red jacket is standing": the auxiliary this far after the noun at most
MAX_HEAD_WORDS = 4  # "two big brown fluffy dogs": the counted noun this far after the count at most


@dataclass(frozen=True)
class CountSite:
    """One flippable count: tokens ``first..end-1`` ("Two", "a couple of"), its value and the
    number words it may become (never "one" in a reciprocal or collective frame)."""
    first: int
    end: int
    value: int
    targets: tuple[str, ...]


def has_phrase(ctx: CaptionContext, key: str, phrases: tuple[tuple[str, ...], ...]) -> bool:
    """True when the caption holds one of ``phrases`` (word tuples) as whole words; memoized under ``key``."""
    if key not in ctx.memo:
        words = " " + " ".join(t.low for t in ctx.tokens) + " "
        ctx.memo[key] = any(f" {' '.join(p)} " in words for p in phrases)
    return ctx.memo[key]


def one_blocked(ctx: CaptionContext) -> bool:
    """True when the caption has a reciprocal or collective frame ("next to each other",
    "together", "a group of"), where a single thing would be nonsense."""
    return has_phrase(ctx, "one_blocked", ctx.lex.one_blockers)


def phrase_at(ctx: CaptionContext, i: int, words: tuple[str, ...]) -> bool:
    """True when the lower-case ``words`` stand at token ``i``, joined (no punctuation between them)."""
    n = len(words)
    return (tuple(t.low for t in ctx.tokens[i:i + n]) == words
            and all(ctx.joined(k, k + 1) for k in range(i, i + n - 1)))


def _phrase_at(ctx: CaptionContext, i: int) -> tuple[int, int, tuple[str, ...]] | None:
    """(length, value, target words) of the quantity phrase starting at token ``i``, else None."""
    for words, (value, targets) in ctx.lex.quantity_phrases.items():
        if phrase_at(ctx, i, words):
            return len(words), value, targets
    return None


def count_sites(ctx: CaptionContext) -> list[CountSite]:
    """Every count of the caption that can be flipped, left to right: number words used as counts
    and quantity phrases with a counted noun ("a couple of dogs"; not "a pair of scissors")."""
    if "count_sites" in ctx.memo:
        return ctx.memo["count_sites"]
    lex, sites, i = ctx.lex, [], 0
    no_one = one_blocked(ctx)
    while i < len(ctx.tokens):
        low, phrase = ctx.tokens[i].low, _phrase_at(ctx, i)
        if phrase is not None:
            n, value, words = phrase
            head = counted_head(ctx, i + n)
            if head is None or ctx.tokens[head[0]].low in lex.pair_nouns:  # "a pair of (black) scissors"
                words = ()
        elif low in lex.numbers and is_count_use(ctx, i):
            n, value, words = 1, lex.numbers[low], tuple(w for w in lex.numbers if w != low)
        else:
            i += 1
            continue
        targets = tuple(w for w in words if not (no_one and lex.numbers[w] == 1))
        if targets:
            sites.append(CountSite(i, i + n, value, targets))
        i += n
    ctx.memo["count_sites"] = sites
    return sites


def counted_head(ctx: CaptionContext, start: int) -> tuple[int, NounForm | None] | None:
    """(last token, lexicon form or None) of the noun counted by a count that ends before token
    ``start``: the head after at most MAX_HEAD_WORDS words, across adjectives, coordinated colors
    and noun modifiers ("two young men", "two brown and white dogs", "two dog toys"); None when no
    noun follows."""
    j = start
    while j < min(len(ctx.tokens), start + MAX_HEAD_WORDS) and ctx.joined(j - 1, j):
        unit = ctx.units.get(j)
        if unit is not None:
            if unit.form is None:
                return None
            nxt = ctx.next_word(unit.end - 1)
            possessive = unit.span[1] < ctx.tokens[unit.end - 1].end  # "one man's hat" counts men
            if nxt is None or possessive or unit.form.number == "plural" or not modifies_next(ctx, unit, nxt):
                return unit.end - 1, unit.form
            j = unit.end  # "two dog toys", "one baby elephant": the noun it modifies is counted
            continue
        tok = ctx.tokens[j]
        if tok.low in ("and", "&") and ctx.tokens[j - 1].low in ctx.lex.color_group:
            j += 1
            continue
        if not ctx.is_content(tok):
            return None
        nxt = ctx.next_word(j)
        if noun_for_number(tok.low, True) is not None and _noun_head(ctx, tok, nxt):
            return j, None
        j += 1
    return None


def _noun_head(ctx: CaptionContext, tok: Token, nxt: Token | None) -> bool:
    """True when ``tok`` is a noun and ``nxt`` is no word that could be a noun it modifies ("one
    floor homes": "homes" may be a verb, but the count is of homes)."""
    return is_noun_like(tok.low) and not (ctx.is_content(nxt) and can_be_noun(nxt.low))


def is_subject(ctx: CaptionContext, i: int) -> bool:
    """True when the count at token ``i`` opens a subject: at a sentence start or after punctuation,
    after a clause opener ("while two dogs"), or after "the"/"only"/... that stands there."""
    lex = ctx.lex
    prev = ctx.prev_word(i)
    if prev is None or ctx.sentence_start(i):
        return True
    if prev.low in lex.subject_after:
        return True
    return prev.low in lex.subject_determiners and is_subject(ctx, i - 1)


def _agree(tok: Token | None, singular: bool) -> list[Edit] | None:
    """The edit that makes the finite verb ``tok`` agree ([] when it does); None when it is none."""
    if tok is None:
        return None
    new = verb_for_number(tok.low, singular)
    if new is None:
        return None
    return [] if new == tok.low else [(tok.start, tok.end, same_case(tok.text, new))]


def verb_fix(ctx: CaptionContext, last: int, singular: bool, subject: bool) -> list[Edit]:
    """Make the verb of the noun ending at token ``last`` agree: the finite verb right after it
    (or after "that"/"who"/"which") when the noun is a subject or has such a relative clause, else
    for a subject the first be/have/do within MAX_SUBJECT_WORDS words before any clause boundary
    ("One skier in a red jacket is standing"). [] when there is none."""
    nxt = ctx.next_word(last)
    relative = nxt is not None and nxt.low in RELATIVE
    if relative:
        nxt = ctx.next_word(last + 1)
    if not (subject or relative):
        return []
    if nxt is not None and (nxt.low in AUXILIARY_NUMBER or ctx.is_content(nxt)):
        edits = _agree(nxt, singular)
        if edits is not None:
            return edits
    if relative:
        return []
    k = last + 1
    while k <= last + MAX_SUBJECT_WORDS and ctx.joined(k - 1, k):
        tok = ctx.tokens[k]
        if tok.low in SUBJECT_END or tok.low in ctx.lex.numbers or (ctx.is_content(tok) and is_verb_only(tok.low)):
            return []
        if tok.low in AUXILIARY_NUMBER:
            return _agree(tok, singular) or []
        k += 1
    return []


def number_fix(ctx: CaptionContext, site: CountSite, singular: bool) -> list[Edit] | None:
    """The edits that make the noun counted by ``site`` singular/plural and the verbs that agree
    with it follow ("two dogs are" -> "one dog is", "two of the dogs are" -> "one of the dogs is",
    "there are two dogs" -> "there is one dog", "two planes fly" -> "one plane flies"); [] when
    none is needed ("sheep"), None when the noun cannot be found or inflected."""
    subject = is_subject(ctx, site.first)
    nxt = ctx.next_word(site.end - 1)
    if nxt is not None and nxt.low == "of" and site.end - site.first == 1:
        last = _partitive_noun_end(ctx, site.end)
        edits = [] if last is None else verb_fix(ctx, last, singular, subject)
    else:
        head = counted_head(ctx, site.end)
        if head is None:
            return None
        last, form = head
        noun = noun_edit(ctx, last, form, singular)
        if noun is None:
            return None
        edits = noun + verb_fix(ctx, last, singular, subject)
    return edits + _existential_fix(ctx, site.first, singular)


def noun_edit(ctx: CaptionContext, last: int, form: NounForm | None, singular: bool) -> list[Edit] | None:
    """The edit that gives the counted noun ending at token ``last`` the wanted number."""
    tok = ctx.tokens[last]
    if form is not None:
        if form.number == "both" or (form.number == "singular") == singular:
            return []
        unit_end = tok.end - (2 if tok.low.endswith(("'s", "’s")) else 0)  # "hot dog(s)": the last word inflects
        word = (form.singular if singular else form.plural).split()[-1]
        return [(tok.start, unit_end, same_case(ctx.text[tok.start:unit_end], word))]
    word = noun_for_number(tok.low, singular)
    if word is None:
        return None
    return [] if word == tok.low else [(tok.start, tok.end, same_case(tok.text, word))]


def _partitive_noun_end(ctx: CaptionContext, of: int) -> int | None:
    """Last token of the noun in "<number> of [the] <noun>" (token ``of`` is "of"), else None."""
    j = of + 1
    if ctx.joined(of, j) and ctx.tokens[j].low in _PARTITIVE_DETERMINERS:
        j += 1
    unit = ctx.units.get(j) if ctx.joined(j - 1, j) else None
    return unit.end - 1 if unit is not None else None


def _existential_fix(ctx: CaptionContext, i: int, singular: bool) -> list[Edit]:
    """Make the verb of "there is/are <number>" before token ``i`` agree ([] when there is none)."""
    verb = ctx.prev_word(i)
    there = ctx.prev_word(i - 1) if verb is not None else None
    if there is None or there.low != "there" or verb.low not in AUXILIARY_NUMBER:
        return []
    return _agree(verb, singular) or []


def pronoun_follows(ctx: CaptionContext, site: CountSite, singular: bool) -> bool:
    """True when a pronoun of that number follows the count ("three girls ... while they talk",
    "one boy has his hand"): it may refer back to the counted noun, so its number stays."""
    pronouns = ctx.lex.number_pronouns["singular" if singular else "plural"]
    return any(t.low in pronouns for t in ctx.tokens[site.end:])


def count_agreement(ctx: CaptionContext, site: CountSite, value: int) -> list[Edit] | None:
    """The agreement edits of ``site`` becoming a count of ``value`` (the counted noun's number and its
    verbs, :func:`number_fix`); None when they cannot be made or a pronoun may refer back to the noun."""
    if (value == 1) == (site.value == 1):
        return []
    if pronoun_follows(ctx, site, singular=site.value == 1):
        return None
    return number_fix(ctx, site, singular=value == 1)


def count_flip(ctx: CaptionContext, site: CountSite, word: str, family: str = "count",
               value: int | None = None) -> Variant | None:
    """The flip of ``site`` to the number word ``word`` (or to a word of count ``value``, "several")
    with its agreement edits; None when the counted noun cannot be made to agree."""
    agreement = count_agreement(ctx, site, ctx.lex.numbers[word] if value is None else value)
    if agreement is None:
        return None
    return flip(ctx, family, site.first, ctx.span(site.first, site.end), word, agreement)


def _site(ctx: CaptionContext, site: CountSite, rng: KeyedRandom) -> Iterator[Variant]:
    for word in shuffled(site.targets, rng):
        variant = count_flip(ctx, site, word)
        if variant is not None:
            yield variant


@register("count", "flip", version="1.1.0")
def generate(ctx: CaptionContext, rng: KeyedRandom) -> list[Iterator[Variant]]:
    """One site per count."""
    return [_site(ctx, site, rng) for site in count_sites(ctx)]
