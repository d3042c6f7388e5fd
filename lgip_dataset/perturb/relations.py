"""Relation sites: a subject noun, the verb and/or preposition that relates it, and what follows.

"A man is sitting on a wooden bench": subject "man", verb "sitting", preposition "on" (sense "on"),
object "bench". The subject is the noun right before the relation (an "is"/"are" and a listed adverb
may stand between), a lexicon noun by its group or another noun word as it is; a verb after a
prepositional phrase is the caption's opening person's or animal's ("A man in a red shirt riding a
bike"); the verb an -ing word or a listed finite verb ("sits" counts as "sitting"); the preposition
a phrase of ``probes.json`` ``relation_senses`` ("on top of" says "on"); the object the head of the
noun phrase after it (past a determiner, a number and attributes): a lexicon noun's group, or the
word itself, or "-" where the caption or its clause ends there ("A man is standing."). A site whose
words after the relation are anything else ("above it") has no object and is never attested.

These sites feed the relation statistics (:mod:`lgip_dataset.perturb.plausibility`: how often a
subject is seen in a relation with an object, cross-fitted by image) and the families that ask them:
``hard_relation`` (replaces the verb or the preposition), ``relation`` (swaps subject and object) and
``spatial`` (keeps an opposite only where it is attested).
"""
from __future__ import annotations

from dataclasses import dataclass

from lgip_dataset.perturb.context import CaptionContext, Unit
from lgip_dataset.perturb.phrases import COORDINATORS, attribute_category, is_attribute, is_ing_verb
from lgip_dataset.perturb.probe_lexicon import RelationWords, load_probe_lexicon
from lgip_dataset.perturb.senses import is_object_noun

BE = frozenset(("is", "are", "was", "were"))
NONE = "-"  # the object key of a relation that ends its clause


def relation_words() -> RelationWords:
    """The relation words of the probe lexicon (``probes.json``)."""
    return load_probe_lexicon().relations


def verb_form(sense: str, like: str) -> str | None:
    """``sense`` ("standing") in the form of the verb ``like`` ("sits" -> "stands", "sit" -> "stand",
    "sitting" -> "standing"); None where ``sense`` has no such form."""
    words = relation_words()
    if like.endswith("ing"):
        return sense
    kind = words.finite[words.verb_forms[like]].index(like) % 2 if like in words.verb_forms else None
    forms = words.finite.get(sense, ())
    return forms[kind] if kind is not None and len(forms) > kind else None


def contradicting(sense: str) -> tuple[str, ...]:
    """The senses that share a clique with ``sense`` (sorted): what a photo of one rules out."""
    return tuple(sorted({other for clique in relation_words().cliques if sense in clique for other in clique} - {sense}))


@dataclass(frozen=True)
class RelationSite:
    """One relation: ``verb`` and ``preposition`` are token ranges (or None), with their senses; the
    subject and the object by their keys (:func:`noun_key`, or the word), and by group for a person."""
    subject: str
    subject_fine: str
    subject_unit: Unit | None  # the subject's lexicon noun, None for another word ("wave")
    verb: tuple[int, int] | None
    verb_sense: str | None
    preposition: tuple[int, int] | None
    preposition_sense: str | None
    object_key: str | None  # None: something other than a noun phrase follows
    object_fine: str | None

    @property
    def end(self) -> int:
        return (self.preposition or self.verb)[1]

    @property
    def relation(self) -> str:
        """"sitting on", "riding", "under": the senses of the verb and the preposition."""
        return " ".join(s for s in (self.verb_sense, self.preposition_sense) if s)


def noun_key(ctx: CaptionContext, unit: Unit, fine: bool = False) -> str:
    """``s:person`` for any person (what one person does, another may), else ``n:<group>``; with ``fine``,
    ``n:<group>`` for a person too ("n:baby": who holds whom)."""
    group = ctx.lex.groups[unit.form.group]
    return "s:person" if group.supercategory == "person" and not fine else f"n:{group.id}"


def preposition_at(ctx: CaptionContext, i: int) -> tuple[int, str] | None:
    """(end token, sense) of the longest relation preposition starting at token ``i``."""
    words = relation_words()
    lows = [t.low for t in ctx.tokens[i:i + words.max_words]]
    for n in range(len(lows), 0, -1):
        sense = words.preposition_sense.get(tuple(lows[:n]))
        if sense is not None and all(ctx.joined(k, k + 1) for k in range(i, i + n - 1)):
            return i + n, sense
    return None


def _verb_sense(ctx: CaptionContext, i: int) -> str | None:
    low = ctx.tokens[i].low
    finite = relation_words().verb_forms.get(low)
    return finite or (low if is_ing_verb(ctx, i) else None)


def other_actions(ctx: CaptionContext, verb: tuple[int, int] | None) -> set[str]:
    """The senses of the caption's verbs outside the token range ``verb`` that are no posture ("carrying" in
    "walks on the beach, carrying a surf board"): what the subject does besides."""
    postures = load_probe_lexicon().postures
    skip = range(*verb) if verb else range(0)
    return {sense for k in range(len(ctx.tokens)) if k not in skip
            and (sense := _verb_sense(ctx, k)) is not None and sense not in postures}


def is_animal(ctx: CaptionContext, key: str | None) -> bool:
    """True for the key of a lexicon animal ("n:horse")."""
    group = ctx.lex.groups.get(key[2:]) if key and key.startswith("n:") else None
    return group is not None and group.supercategory == "animal"


def names_role_fixed(ctx: CaptionContext) -> bool:
    """True when the caption names a role whose place the game fixes ("catcher", "umpire", "batter")."""
    return any(t.low in load_probe_lexicon().role_fixed for t in ctx.tokens)


def _subject(ctx: CaptionContext, start: int, ends: dict[int, Unit]) -> int | Unit | None:
    """What ends right before token ``start``, past an "is"/"are" and an adverb: a lexicon noun, or the
    token index of another noun word ("A wave on"), else None."""
    k, words = start, relation_words()
    while k and ctx.joined(k - 1, k) and k > start - 2 and (ctx.tokens[k - 1].low in BE or ctx.tokens[k - 1].low in words.adverbs):
        k -= 1
    if not k or not ctx.joined(k - 1, k):
        return None
    unit = ends.get(k)
    if unit is not None:
        return unit if is_object_noun(ctx, unit) else None
    return k - 1 if _noun_word(ctx, k - 1) and not is_attribute(ctx, k - 1) else None


def object_key(ctx: CaptionContext, end: int, fine: bool = False) -> str | None:
    """The key of what follows a relation ending before token ``end`` (see the module docstring): the
    last of up to three content words after a determiner or number, before any other word ("a stone
    wall", "mopeds"; a lexicon noun by its group)."""
    if end >= len(ctx.tokens) or not ctx.joined(end - 1, end) or ctx.tokens[end].low in COORDINATORS:
        return NONE
    determiners, k = load_probe_lexicon().determiners, end
    while k < len(ctx.tokens) and k < end + 2 and (ctx.tokens[k].low in determiners or ctx.tokens[k].low in ctx.lex.numbers):
        if not ctx.joined(k, k + 1):
            return None
        k += 1
    head, start = None, k
    while k < len(ctx.tokens) and k < start + 4 and _noun_word(ctx, k) and (k == start or ctx.joined(k - 1, k)):
        unit = ctx.units.get(k)
        head, k = (unit, unit.end) if unit is not None and unit.form is not None else (k, k + 1)
    if head is None or (not isinstance(head, Unit) and is_attribute(ctx, head)):
        return None  # "a red and white umbrella": its head is further on
    if isinstance(head, Unit):
        return noun_key(ctx, head, fine) if is_object_noun(ctx, head) else None
    return ctx.tokens[head].low


def _noun_word(ctx: CaptionContext, k: int) -> bool:
    """A word that may be part of a noun phrase's head: a content word, not a relation word or an -ing verb."""
    tok = ctx.tokens[k]
    return (ctx.is_content(tok) and tok.low.isalpha() and preposition_at(ctx, k) is None
            and (not is_ing_verb(ctx, k) or k in ctx.units) and tok.low not in relation_words().verb_forms) \
        or is_attribute(ctx, k)


def _object_of_preposition(ctx: CaptionContext, start: int) -> bool:
    """True when the noun phrase of a noun follows a preposition other than "of" ("on a purple bed", not "a
    couple of women"): an -ing verb after it is the sentence subject's, not the noun's ("A man standing on a
    bed playing a guitar"); ``start`` is the noun's first token."""
    determiners, k = load_probe_lexicon().determiners, start - 1
    while k >= 0 and ctx.joined(k, k + 1) and (ctx.tokens[k].low in determiners or ctx.tokens[k].low in ctx.lex.numbers
                                               or is_attribute(ctx, k)):
        k -= 1
    return k >= 0 and ctx.joined(k, k + 1) and ctx.tokens[k].low != "of" \
        and (ctx.tokens[k].low in load_probe_lexicon().relation_words or _verb_sense(ctx, k) is not None)


def _sentence_subject(ctx: CaptionContext, verb: int) -> Unit | None:
    """The person or animal that opens the caption ("A man in a red shirt riding a bike"), where only
    noun phrases and prepositions stand between it and the verb at token ``verb`` (no punctuation,
    no other verb, no "and", "while", "who")."""
    first = next((u for u in sorted(ctx.units.values(), key=lambda u: u.start) if u.form is not None), None)
    if first is None or first.start > 3 or first.end >= verb or not is_object_noun(ctx, first) \
            or ctx.lex.groups[first.form.group].supercategory not in ("person", "animal"):
        return None
    between = range(first.end, verb)
    if not all(ctx.joined(k - 1, k) for k in range(first.end, verb + 1)):
        return None
    probes = load_probe_lexicon()
    return first if all(_verb_sense(ctx, k) is None and (ctx.tokens[k].low not in ctx.lex.function_words
                                                         or ctx.tokens[k].low in probes.relation_words
                                                         or ctx.tokens[k].low in probes.determiners)
                        for k in between) else None


def relation_sites(ctx: CaptionContext) -> list[RelationSite]:
    """Every relation site of the caption, left to right (memoized per caption)."""
    if "relation_sites" in ctx.memo:
        return ctx.memo["relation_sites"]
    ends = {u.end: u for u in ctx.units.values() if u.form is not None}
    sites, i = [], 0
    while i < len(ctx.tokens):
        first, verb_sense, verb = i, _verb_sense(ctx, i), None
        if verb_sense is not None:
            verb, i = (i, i + 1), i + 1
            if i + 1 < len(ctx.tokens) and ctx.tokens[i].low in relation_words().particles and ctx.joined(i - 1, i) \
                    and preposition_at(ctx, i + 1) is not None:
                i += 1  # "laying down on"
        prep = preposition_at(ctx, i) if i < len(ctx.tokens) and (verb is None or ctx.joined(i - 1, i)) else None
        preposition = (i, prep[0]) if prep else None
        if verb is None and preposition is None:
            i += 1
            continue
        subject = _subject(ctx, first, ends)
        if verb is not None and (subject is None or _object_of_preposition(
                ctx, subject.start if isinstance(subject, Unit) else subject)):
            subject = _sentence_subject(ctx, first)
        end = (preposition or verb)[1]
        if subject is not None:
            sites.append(_site(ctx, subject, verb, verb_sense, preposition, prep[1] if prep else None, end))
        i = end
    ctx.memo["relation_sites"] = sites
    return sites


def _site(ctx: CaptionContext, subject: int | Unit, verb, verb_sense, preposition, preposition_sense,
          end: int) -> RelationSite:
    if isinstance(subject, Unit):
        keys = noun_key(ctx, subject), noun_key(ctx, subject, fine=True)
    else:
        keys = (ctx.tokens[subject].low,) * 2
    obj = object_key(ctx, end)
    return RelationSite(*keys, subject if isinstance(subject, Unit) else None, verb, verb_sense, preposition,
                        preposition_sense, obj, object_key(ctx, end, fine=True) if obj == "s:person" else obj)


def counted_relations(ctx: CaptionContext) -> list[tuple[str, str, str]]:
    """(subject, relation, object) of every site with an object, for the statistics: the whole relation,
    its preposition alone where it has a verb ("on" of "sitting on"), and each with object ``*`` (any);
    the preposition from any subject (``*``); a relation between two persons also by their groups
    ("n:woman", "holding", "n:baby")."""
    found = []
    for site in relation_sites(ctx):
        if site.object_key is None:
            continue
        relations = {site.relation} | ({site.preposition_sense} if site.verb and site.preposition else set())
        for relation in sorted(relations):
            found += [(site.subject, relation, site.object_key), (site.subject, relation, "*")]
        if site.preposition:  # "a dog under a truck": a truck may have something under it
            found.append(("*", site.preposition_sense, site.object_key))
        if site.subject == site.object_key == "s:person":
            found.append((site.subject_fine, site.relation, site.object_fine))
    return found


def attribute_sense(ctx: CaptionContext, i: int) -> str:
    """An attribute's sense: its colour group for a colour ("grey" and "gray" are one), else its listed
    sense (``probes.json`` ``attribute_senses``: "big" is "large") or the word."""
    low = ctx.tokens[i].low
    return ctx.lex.color_group.get(low) or relation_words().attribute_senses.get(low, low)


def bound_attributes(ctx: CaptionContext) -> list[tuple[int, int, str]]:
    """(attribute token, the noun's first token, the noun's key) of every attribute that modifies a noun:
    directly ("a red car", "a wooden bench": any noun word, a lexicon noun by :func:`noun_key`) or past
    one attribute of another category ("a large green bowl": "large" and "green" both modify "bowl");
    not an attribute coordinated with another ("black and white dog") (memoized per caption)."""
    if "bound_attributes" in ctx.memo:
        return ctx.memo["bound_attributes"]
    found = []
    for i in range(len(ctx.tokens)):
        if not is_attribute(ctx, i) or _coordinated(ctx, i):
            continue
        k = i + 1
        if k < len(ctx.tokens) and ctx.joined(i, k) and is_attribute(ctx, k) \
                and attribute_category(ctx, k) != attribute_category(ctx, i):
            k += 1
        if k >= len(ctx.tokens) or not ctx.joined(k - 1, k) or is_attribute(ctx, k):
            continue
        unit = ctx.units.get(k)
        if unit is not None and unit.form is not None and is_object_noun(ctx, unit):
            found.append((i, k, noun_key(ctx, unit)))
        elif unit is None and _noun_word(ctx, k) and (k + 1 >= len(ctx.tokens) or not ctx.joined(k, k + 1)
                                                      or not _noun_word(ctx, k + 1)):
            found.append((i, k, ctx.tokens[k].low))  # the last word of a noun ("a white tile wall" has none)
    ctx.memo["bound_attributes"] = found
    return found


def _coordinated(ctx: CaptionContext, i: int) -> bool:
    """True for an attribute after a coordinator or after an attribute across punctuation ("black and
    white", "black & white", "black/white", "red, white")."""
    if not i:
        return False
    if ctx.joined(i - 1, i):
        return ctx.tokens[i - 1].low in COORDINATORS
    return is_attribute(ctx, i - 1)


def counted_attributes(ctx: CaptionContext) -> list[tuple[str, str]]:
    """(attribute sense, noun key) of every :func:`bound_attributes` pair, for the statistics."""
    return [(attribute_sense(ctx, i), key) for i, _, key in bound_attributes(ctx)]

