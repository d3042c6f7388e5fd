"""Sites of the hard families beyond the paper families' own: a scene or place noun ("in a kitchen"
-> "in a bathroom", lexicon ``places.json``), an indefinite article counting the subject ("A dog
is sleeping" -> "Two dogs are sleeping", "Several dogs are sleeping") and its reverse, a noun counted by
a number, a quantity phrase or a plural quantifier made singular ("Two dogs are sleeping" -> "A dog is
sleeping", "holding two umbrellas" -> "holding an umbrella", "Several dogs" / "A couple of dogs" -> "A
dog"), so that counts go both ways; and the captions whose count is said twice, which no hard count flip
may touch."""
from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator

from lgip_dataset.perturb import grammaticality
from lgip_dataset.perturb.agreement import (can_be_noun, indefinite_article, is_noun_like, noun_for_number,
                                           present_verb_number, word_lemmas)
from lgip_dataset.perturb.context import CaptionContext, Unit
from lgip_dataset.perturb.edits import Edit, apply_edits, flip
from lgip_dataset.perturb.families.counts import (CountSite, count_flip, count_sites, counted_head, has_phrase,
                                                  is_subject, phrase_at,
                                                  noun_edit, number_fix, pronoun_follows, verb_fix)
from lgip_dataset.perturb.lexicon import NounForm
from lgip_dataset.perturb.families.objects import object_sites
from lgip_dataset.perturb.places import load_places, place_sites
from lgip_dataset.perturb.probe_lexicon import load_probe_lexicon
from lgip_dataset.perturb.text import tokenize
from lgip_dataset.perturb.variant import Variant

ARTICLE_COUNTS = ("two", "three")  # the numbers "a"/"an" of a subject may become (so may a plural quantifier)
_VERB_PLACE = frozenset(("and", "or", "that", "who", "which", "also", "then"))  # function words a verb may follow
HELD_WORDS = 4  # "with a big colorful beak": an object noun this many words after its verb at most
_PARTS = frozenset(("back", "backs", "top", "tops", "side", "sides"))  # "on the backs of elephants": held through them
NOT_AFTER_REACH = 3  # "down a street", "the median of a street": a place's ``not_after`` words this far before it
MAX_BARE_MODIFIERS = 2  # "brown and white horses": the words a bare plural subject may have before its noun
_RELATIVE_BE = frozenset(("that", "who", "which", "is", "are", "was", "were"))  # "a person that is on a motorcycle"
_PARTICLES = frozenset(("up", "out", "down", "off"))  # "holding up a hair dryer": held through them
_QUANTIFIERS = frozenset(("some", "several", "many", "few"))  # "riding some motorbikes": a plural held through them
_DETERMINERS = frozenset(("a", "an", "the", "this", "that", "these", "those", "his", "her", "their", "its", "my",
                          "your", "our"))


def place_flips(ctx: CaptionContext) -> list[Iterator[Variant]]:
    """The flips of every place site (the article before it agreeing) that no word of the caption fixes (lexicon
    ``places.fixed_by``: a boat, a paddle or a lake keeps "water": no boat "on the sand"), to a place that no
    other place of the caption keeps apart (lexicon ``places.apart``: no flip into "water" in a caption naming a
    field), nor that a word of the caption keeps out (lexicon ``places.kept_out``: no cat "in the water"), nor
    after one of its ``places.not_after`` words (among the ``NOT_AFTER_REACH`` words before the site: no elephant led
    "down a park")."""
    words = {t.low for t in ctx.tokens}
    places = load_places()
    named = {places.group_of[(w,)] for w in words if (w,) in places.group_of}

    def targets(site) -> Iterator[str]:  # the words before the site read once per site
        before = {t.low for t in ctx.tokens[max(site.first - NOT_AFTER_REACH, 0):site.first]}
        return (target for target in site.targets
                if not (places.apart.get(target, frozenset()) & (named - {site.group})
                        or places.kept_out.get(target, frozenset()) & words
                        or places.not_after.get(target, frozenset()) & before))
    return [iter([flip(ctx, "hard_object", site.first, ctx.span(site.first, site.end), target)
                  for target in targets(site)])
            for site in place_sites(ctx) if not places.fixed_by.get(site.group, frozenset()) & words]


def uncounted(ctx: CaptionContext, unit: Unit) -> bool:
    """True for an object noun no hard count site counts: of an uncountable group ("broccoli") or a mass form of
    a group that counts (lexicon ``frames.mass_forms``: "luggage", never "a luggage" nor "luggage are")."""
    form = " ".join(t.low for t in ctx.tokens[unit.start:unit.end])
    return ctx.lex.groups[unit.form.group].uncountable or form in ctx.lex.mass_forms


def article_count_sites(ctx: CaptionContext) -> list[CountSite]:
    """"a"/"an" before a countable object noun that opens a subject and is its only mention (an
    object-flip site, so no coreference, partitive or compound use): a count of one."""
    if "article_count_sites" not in ctx.memo:
        ctx.memo["article_count_sites"] = _article_sites(ctx, lambda i: is_subject(ctx, i),
                                                         ctx.lex.plural_quantifiers)
    return ctx.memo["article_count_sites"]


def held_article_sites(ctx: CaptionContext) -> list[CountSite]:
    """"a"/"an" before a countable object noun, its only mention and no garment, right after a phrase of the
    lexicon's ``counted_objects_after``: "with" right after the subject's noun ("A bathroom with a toilet", "A
    man with a dog"; not "cutting a cake with a knife", where it may be the tool), a holding verb ("A man
    holding a bat") or a preposition of nearness ("A dog sitting next to a bench"): a count of one that is no
    subject's ("A man holding two bats" asks no verb to change), to a number or a quantifier of the lexicon's
    ``held_quantifiers`` ("several bats"; never "many bats" for one player)."""
    lex = ctx.lex

    def held(i: int) -> bool:
        after = next((p for p in lex.counted_objects_after if i >= len(p) and phrase_at(ctx, i - len(p), p)
                      and ctx.joined(i - 1, i)), None)
        return after is not None and (after != ("with",) or _subject_noun_before(ctx, i - 1))
    return [site for site in _article_sites(ctx, held, lex.held_quantifiers)
            if ctx.tokens[counted_head(ctx, site.end)[0]].low not in lex.garments]


def _subject_noun_before(ctx: CaptionContext, i: int) -> bool:
    """True when the words right before token ``i`` are the subject's noun phrase: a noun (an object noun, a
    place or a word that can only be a noun) after content words only, back to the subject's start or its
    determiner there ("A large bathroom", "Two men"; not "cutting a cake")."""
    noun = i - 1
    if noun < 0 or not ctx.joined(noun, i) or not ctx.is_content(ctx.tokens[noun]):
        return False
    low = ctx.tokens[noun].low
    if not (any(u.end - 1 == noun for u in ctx.units.values() if u.form is not None)
            or (low,) in load_places().group_of or is_noun_like(low)):
        return False
    start = noun
    while start > 0 and ctx.joined(start - 1, start) and ctx.is_content(ctx.tokens[start - 1]) \
            and not ctx.tokens[start - 1].low.endswith("ing"):
        start -= 1
    if start > 0 and ctx.joined(start - 1, start) and ctx.tokens[start - 1].low in _DETERMINERS | ctx.lex.numbers.keys():
        start -= 1
    return is_subject(ctx, start)


def _article_sites(ctx: CaptionContext, where, quantifiers: tuple[str, ...]) -> list[CountSite]:
    """"a"/"an" at a token ``where`` accepts, before a countable object noun that is its only mention (an
    object-flip site), with no possessor ("a man's hat"): a count of one, which may become a number or one of
    ``quantifiers`` that counts its supercategory."""
    lex, sites = ctx.lex, []
    heads = {site.unit.end - 1: site for site in object_sites(ctx) if site.number == "singular"}
    for i, tok in enumerate(ctx.tokens):
        if tok.low not in ("a", "an") or not where(i):
            continue
        head = counted_head(ctx, i + 1)
        site = heads.get(head[0]) if head is not None else None
        if site is None or uncounted(ctx, site.unit):
            continue
        if site.unit.span[1] < ctx.tokens[site.unit.end - 1].end:  # a possessor ("a man's hat")
            continue
        supercategory = lex.groups[site.unit.form.group].supercategory
        fitting = tuple(q for q in quantifiers if supercategory in lex.quantifier_supercategories.get(q, (supercategory,)))
        sites.append(CountSite(i, i + 1, 1, ARTICLE_COUNTS + fitting))
    return sites


def _agrees(ctx: CaptionContext, site: CountSite, variant: Variant, number: str = "singular") -> bool:
    """True when no present verb of the site's old ``number`` after its counted noun is left as it was ("A boy
    playing tennis runs": the count family fixes only the verb it can tie to the subject). A lexicon
    noun or a word after a determiner is no verb ("on a couch"); a bare plural form counts unless it is a
    function word or follows one ("in water", "to sit"; but "and", "who", ... open a verb's place), even
    where it may be a noun ("People at a station board a train"); and, for a subject or a count a holding -ing word
    follows ("next to two people riding motorcycles"), no noun it holds (:func:`held_numbers`) is of its old
    number, nor, for a subject made many, is one of the lexicon's ``single_seats`` named after it ("A person
    sitting on a stool", "A person in the air on a snowboard")."""
    nouns = {k for u in ctx.units.values() for k in range(u.start, u.end)}

    def verb(i: int, low: str) -> bool:
        prev = ctx.prev_word(i)
        if i in nouns or present_verb_number(low) != number or (prev is not None and prev.low in _DETERMINERS):
            return False
        if number == "singular":
            return True
        # a bare plural form after a preposition or another function word is its noun ("in water"), but one
        # after a content word or a clause word is in a verb's place ("People at a station board a train")
        return low not in ctx.lex.function_words and (prev is None or prev.low in _VERB_PLACE
                                                      or prev.low not in ctx.lex.function_words)
    head = counted_head(ctx, site.end) if site.end > site.first else None
    start = head[0] + 1 if head is not None else next(
        (u.end for u in sorted(ctx.units.values(), key=lambda u: u.start) if u.start >= site.end), site.end)
    after = {t.low for i, t in enumerate(ctx.tokens[start:], start) if verb(i, t.low)}
    # a held noun of the subject's old number would clash with its new one ("Two people riding horses" ->
    # "A person riding horses", "A person holding a tomato" -> "Several people holding a tomato")
    subject = is_subject(ctx, site.first)
    holding = (start < len(ctx.tokens) and ctx.tokens[start].low.endswith("ing")  # "two people riding ..."
               and ctx.tokens[start].low in ctx.lex.holding_words)
    clash = ((holding or subject) and number in held_numbers(ctx, start)) or subject and (
        (number == "singular" and any(t.low in ctx.lex.single_seats for t in ctx.tokens[start:])) or (
            number == "plural" and _on_bare_plural(ctx, start)))
    fixed = _modifies_next(ctx, start - 1, number) or _as_role(ctx, start) or (
        subject and _coordinated_bare(ctx, start - 1)) or (
        number == "plural" and (_held_in_plural(ctx, start - 1) or collective(ctx)
                                or any(t.low in ctx.lex.plural_modifiers for t in ctx.tokens[site.end:start])))
    return not after & {t.low for t in tokenize(variant.text)} and not clash and not fixed


def _plural_form(word: str) -> bool:
    """True for a noun's plural form: its singular is another word ("horses", "shelves"; not "horse" nor "walk")."""
    return noun_for_number(word, True) not in (None, word)


def _singular_form(word: str) -> bool:
    """True for a noun's singular form: its singular is itself ("horse"; not "horses", nor a word with none)."""
    return noun_for_number(word, True) == word


def _as_role(ctx: CaptionContext, start: int) -> bool:
    """True when "as" after the counted noun (from token ``start``) names a role in a number of its own ("a donut as an
    ornament", "Two men dressed as animals"): the role keeps the noun's number."""
    for i, tok in enumerate(ctx.tokens[start:], start):
        nxt = ctx.next_word(i)
        if tok.low == "as" and nxt is not None and (nxt.low in ("a", "an") or (
                ctx.is_content(nxt) and _plural_form(nxt.low))):
            return True
    return False


def _coordinated_bare(ctx: CaptionContext, noun: int) -> bool:
    """True when the counted noun at token ``noun`` is listed, by "and", "or" or a comma, before a singular count
    noun with no determiner of its own ("A street sign and fire hydrant", "A woman and man", "Cars, truck and
    carriages"): the article is said of both, and the count changed alone leaves the other noun without one (asked
    of a subject only, whose verb then agrees with neither; an inventory after "with" reads as a list: "A bathroom
    with two toilets and bathtub")."""
    k = noun + 1
    if k < len(ctx.tokens) and ctx.joined(noun, k) and ctx.tokens[k].low in ("and", "or"):
        k += 1
    elif not (k < len(ctx.tokens) and ctx.text[ctx.tokens[noun].end:ctx.tokens[k].start].strip() == ","):
        return False
    if k >= len(ctx.tokens) or not ctx.joined(k - 1, k) and ctx.tokens[k - 1].low in ("and", "or"):
        return False
    nxt, unit = ctx.tokens[k], ctx.units.get(k)
    if unit is not None and unit.form is not None:
        return unit.form.number == "singular" and not uncounted(ctx, unit)
    return ctx.is_content(nxt) and is_noun_like(nxt.low) and _singular_form(nxt.low)


def _on_bare_plural(ctx: CaptionContext, start: int) -> bool:
    """True when a held preposition after the subject's noun (from token ``start``) is followed by a bare plural
    (:func:`_bare_plural_after`: "Two men ... on horses", "in boats"): one each, so a subject made one would ride many."""
    return any(_bare_plural_after(ctx, i) for i in range(start, len(ctx.tokens)))


def _held_in_plural(ctx: CaptionContext, noun: int) -> bool:
    """True when the counted noun at token ``noun`` is directly followed by a held preposition and a bare plural
    (:func:`_bare_plural_after`: "two hot dogs in buns", "two dogs on leashes"): one each, so the counted noun
    stays plural ("a hot dog in buns")."""
    return ctx.joined(noun, noun + 1) and _bare_plural_after(ctx, noun + 1)


def _bare_plural_after(ctx: CaptionContext, prep: int) -> bool:
    """True when token ``prep`` is a held preposition directly followed by a plural noun with no determiner ("on
    horses", "in buns"), not a noun used in the plural for one thing ("on skis")."""
    if not (ctx.joined(prep, prep + 1) and ctx.tokens[prep].low in ctx.lex.held_prepositions):
        return False
    unit, nxt = ctx.units.get(prep + 1), ctx.tokens[prep + 1]
    if unit is not None and unit.form is not None:
        return unit.form.number == "plural" and unit.form.group not in ctx.lex.plural_in_use
    return ctx.is_content(nxt) and can_be_noun(nxt.low) and not nxt.low.endswith("ing") and _plural_form(nxt.low)


def _modifies_next(ctx: CaptionContext, noun: int, number: str) -> bool:
    """True when the counted noun at token ``noun``, of ``number``, modifies the noun right after it ("an apple
    building", "a bus stop", "some books shelves"): "some apples building" and "a book shelves" are garbled. The next
    word is an object noun, a word that can only be a noun, or a noun in -ing (lexicon ``ing_nouns``: "building");
    after a plural, never a verb form that agrees with it ("Cows walk", "giraffes stand")."""
    nxt = ctx.next_word(noun)
    if nxt is None or not ctx.joined(noun, noun + 1) or not ctx.is_content(nxt):
        return False
    if number == "plural":  # "books shelves": a plural noun before another; "people crossing" and "Cows walk" are verbs
        if present_verb_number(nxt.low) == "plural" or nxt.low.endswith("ing"):
            return False
        if can_be_noun(nxt.low) and _plural_form(nxt.low):
            return True
    return (noun + 1 in ctx.units or is_noun_like(nxt.low)
            or (nxt.low in load_probe_lexicon().ing_nouns and "NOUN" in word_lemmas(nxt.low)))


def held_numbers(ctx: CaptionContext, start: int) -> set[str]:
    """The numbers ("singular", "plural") of the nouns from token ``start`` on that the subject holds: at
    most ``HELD_WORDS`` words after a word of the lexicon's ``holding_words`` ("riding horses", "holding a
    red umbrella", "with a big colorful beak"; a part's "of" is passed over: "riding on the backs of elephants")
    or after a held preposition (:func:`_holds_after`: "Two pizzas on
    tin plates", "riding on a skateboard", "in a green shirt"), not after another preposition ("sleeping on
    a couch"). Memoized per caption: every candidate of a site asks it."""
    key = ("held_numbers", start)
    if key not in ctx.memo:
        ctx.memo[key] = _held_numbers(ctx, start)
    return ctx.memo[key]


def _held_numbers(ctx: CaptionContext, start: int) -> set[str]:
    forms = {u.start: u.form.number for u in ctx.units.values() if u.form is not None}
    numbers = set()
    for first, tok in enumerate(ctx.tokens[start:], start):
        number = forms.get(first)
        if number is None and ctx.is_content(tok) and (tok.low in ctx.lex.garments or _ends_noun_phrase(ctx, first) or (
                is_noun_like(tok.low) and not tok.low.endswith("ing"))):
            number = "singular" if _singular_form(tok.low) else "plural"
        if number not in ("singular", "plural"):
            continue
        k, words = first - 1, HELD_WORDS
        passing = _DETERMINERS | _PARTICLES | (_QUANTIFIERS if number == "plural" else frozenset())
        while k >= start and words:
            low = ctx.tokens[k].low
            if low == "of" and k > start and ctx.tokens[k - 1].low in _PARTS:  # "riding on the backs of elephants"
                k -= 2
                continue
            if low in ctx.lex.holding_words or (low in ctx.lex.held_prepositions and _holds_after(ctx, k, start, first)):
                numbers.add(number)
                break
            if low in ctx.lex.function_words and low not in passing:
                break
            k, words = k - 1, words - 1
    return numbers


def _ends_noun_phrase(ctx: CaptionContext, i: int) -> bool:
    """True for a word with a noun's forms that ends a noun phrase: after a determiner or another content word,
    before punctuation, a function word or the end ("on a street corner outside", "on tin plates.")."""
    tok, prev, nxt = ctx.tokens[i], ctx.prev_word(i), ctx.next_word(i)
    if tok.low.endswith("ing") or noun_for_number(tok.low, True) is None or prev is None:
        return False
    return ((prev.low in _DETERMINERS or ctx.is_content(prev))
            and (nxt is None or not ctx.joined(i, i + 1) or nxt.low in ctx.lex.function_words))


def _holds_after(ctx: CaptionContext, k: int, start: int, noun: int) -> bool:
    """True when the preposition at token ``k`` makes the subject (its noun ending before token ``start``)
    hold the noun at token ``noun`` after it: it follows a holding word ("riding on a skateboard"), it is
    "in" before a garment ("A man in a green shirt", "standing in a green shirt"), or it is another held
    preposition ("on") after the subject's noun, directly or after a relative "that is" ("Two pizzas on tin
    plates", "a person that is on a motorcycle"). A place ("Two dogs on the
    beach", "A bed in a bedroom") or a noun of a compound preposition ("in front of") is held by nothing."""
    word, nxt = ctx.tokens[noun].low, ctx.next_word(noun)
    if (nxt is not None and nxt.low == "of") or (word,) in load_places().group_of or (
            nxt is not None and (word, nxt.low) in load_places().group_of):
        return False
    prev = ctx.prev_word(k)
    if prev is not None and prev.low in ctx.lex.holding_words:
        return True
    if ctx.tokens[k].low == "in":  # "Two dogs in a car" holds nothing, "in a green shirt" does
        return word in ctx.lex.garments
    return {t.low for t in ctx.tokens[start:k]} <= _RELATIVE_BE


def number_agrees(ctx: CaptionContext, site: CountSite, variant: Variant) -> bool:
    """True for a count family flip of ``site`` that keeps its number, or changes it with no verb of the old
    number left after the counted noun (:func:`_agrees`)."""
    one = ctx.lex.numbers.get(variant.replacement.lower()) == 1
    return one == (site.value == 1) or _agrees(ctx, site, variant, "singular" if site.value == 1 else "plural")


def article_count_flips(ctx: CaptionContext) -> list[Iterator[Variant]]:
    """The count flips of every article count site (the count family's agreement edits, to a number or a
    plural quantifier, "A dog is sleeping" -> "Several dogs are sleeping", or the article dropped for a bare
    plural: "Dogs are sleeping") and of every held article site ("A man holding a bat" -> "A man holding two
    bats"; no bare plural there), where every verb after it agrees."""
    def to_many(site: CountSite, word: str) -> Variant | None:
        return count_flip(ctx, site, word, value=None if word in ctx.lex.numbers else 2)

    def flips(site: CountSite, subject: bool) -> Iterator[Variant]:
        many = (v for word in site.targets if (v := to_many(site, word)) is not None and _agrees(ctx, site, v))
        return itertools.chain(many, filter(None, (bare_plural_flip(ctx, site),)) if subject else ())
    return ([flips(site, True) for site in article_count_sites(ctx)]
            + [flips(site, False) for site in held_article_sites(ctx)])


def broken_caption(ctx: CaptionContext) -> bool:
    """True for a human caption that is broken English already (:mod:`lgip_dataset.perturb.grammaticality`: "a
    elephant", "Two girl", "A man prepare", "a khaki pants", "congaing"). Any flip of it is an invalid pair,
    whatever the flip changes, so the hard families leave it alone."""
    if "broken_caption" not in ctx.memo:
        ctx.memo["broken_caption"] = grammaticality.broken(ctx)
    return ctx.memo["broken_caption"]


def collective(ctx: CaptionContext) -> bool:
    """True when the caption says its things are many in its predicate ("lined up", "in rows", "next to each
    other", "together"): no hard count flip makes them one ("A refrigerator is lined up by a wall")."""
    return has_phrase(ctx, "collective", ctx.lex.collective_predicates)


def _region_count_flip(ctx: CaptionContext, site: CountSite, singular: bool, start: int, edits: list[Edit],
                       capital: bool, head: tuple[int, NounForm] | None = None) -> Variant | None:
    """The count flip that edits the noun phrase from character ``start`` to its counted noun: ``edits``
    plus the noun's and its verbs' agreement (the count family's, or for a bare plural at ``head``, its
    noun and verb made to agree), its first letter a capital where ``capital``. Its ``original`` and
    ``replacement`` are the noun phrase's texts (as :func:`lgip_dataset.perturb.edits.region_flip`'s,
    with an article inserted at ``start`` inside the region)."""
    if pronoun_follows(ctx, site, singular=not singular) or (singular and collective(ctx)):
        return None
    if head is None:
        agreement, head = number_fix(ctx, site, singular=singular), counted_head(ctx, site.end)
    else:
        noun = noun_edit(ctx, head[0], head[1], singular)
        agreement = None if noun is None else noun + verb_fix(ctx, head[0], singular, subject=True)
    if agreement is None or head is None:
        return None
    end, edits = ctx.tokens[head[0]].end, edits + agreement
    text = apply_edits(ctx.text, edits)
    before = sum(len(new) - (b - a) for a, b, new in edits if a < start)
    inside = sum(len(new) - (b - a) for a, b, new in edits if a >= start and b <= end)  # an insertion at start too
    variant = Variant(text, "flip", "hard_count", ctx.text[start:end],
                      text[start + before:end + before + inside], (start, end))
    if capital:
        text, replacement = variant.text, variant.replacement
        variant = dataclasses.replace(variant, text=text[:start] + text[start].upper() + text[start + 1:],
                                      replacement=replacement[:1].upper() + replacement[1:])
    return variant if _agrees(ctx, site, variant, "plural" if singular else "singular") else None


def bare_plural_flip(ctx: CaptionContext, site: CountSite) -> Variant | None:
    """"A dog is sleeping" -> "Dogs are sleeping": the article of an article count site dropped and its
    noun and verbs made plural (None where a pronoun or verb after it would disagree)."""
    article, after = ctx.tokens[site.first], ctx.tokens[site.end]
    capital = article.text[:1].isupper() and not ctx.shouting
    return _region_count_flip(ctx, site, False, article.start, [(article.start, after.start, "")], capital)


def bare_plural_sites(ctx: CaptionContext) -> list[tuple[CountSite, tuple[int, NounForm]]]:
    """Plural subjects with no determiner ("Dogs are sleeping", "Brown horses grazing"): a countable
    object noun, its only mention, at most ``MAX_BARE_MODIFIERS`` words after the subject's start (a caption's or
    a sentence's start or a clause opener of ``subject_after``; not a comma: "Crisp, delicious apples"), none
    of them a noun or a function word; each with its noun (last token, form). The site is empty
    (``first == end``): the count it says is "many"."""
    lex, sites = ctx.lex, []
    for site in object_sites(ctx):
        unit = site.unit
        if site.number != "plural" or uncounted(ctx, unit) or unit.span[1] < ctx.tokens[unit.end - 1].end:
            continue
        start = next((i for i in range(unit.start, max(unit.start - MAX_BARE_MODIFIERS, 0) - 1, -1)
                      if i == 0 or ctx.sentence_start(i) or ctx.tokens[i - 1].low in lex.subject_after), None)
        if start is None or not is_subject(ctx, start):
            continue
        if any(not ctx.is_content(t) or t.low in lex.numbers or k in ctx.units or not ctx.joined(k, k + 1)
               for k, t in enumerate(ctx.tokens[start:unit.start], start)):
            continue  # a modifier is a content word joined to the next: "Lemons, apples, and a cup" is a list
        if start > 0 and not ctx.sentence_start(start) and any(t.low.endswith("ing") for t in ctx.tokens[start:unit.start]):
            continue  # "while carrying bananas": after a clause opener, a word in -ing is the verb, not a modifier
        sites.append((CountSite(start, start, 2, ()), (unit.end - 1, unit.form)))
    return sites


def singular_bare_flip(ctx: CaptionContext, site: CountSite, head: tuple[int, NounForm]) -> Variant | None:
    """"Dogs are sleeping" -> "A dog is sleeping" at a :func:`bare_plural_sites` site with its noun ``head``."""
    first = ctx.tokens[site.first]
    capital = ctx.sentence_start(site.first) and first.text[:1].isupper() and not ctx.shouting
    article = ctx.inserted(indefinite_article(first.low))
    variant = _region_count_flip(ctx, site, True, first.start, [(first.start, first.start, f"{article} ")], capital,
                                 head)
    if variant is None or not capital:
        return variant
    at = first.start + len(article) + 1  # the subject's first word, now after the article
    return dataclasses.replace(variant, text=variant.text[:at] + variant.text[at].lower() + variant.text[at + 1:],
                               replacement=variant.replacement[:at - first.start]
                               + variant.replacement[at - first.start].lower() + variant.replacement[at - first.start + 1:])


def bare_plural_flips(ctx: CaptionContext) -> list[Iterator[Variant]]:
    """The flips of every bare plural subject to "a"/"an" ("Dogs are sleeping" -> "A dog is sleeping")."""
    return [iter(filter(None, (singular_bare_flip(ctx, site, head),))) for site, head in bare_plural_sites(ctx)]


def quantifier_sites(ctx: CaptionContext) -> list[CountSite]:
    """Every plural quantifier ("several", "some", "many", "a group of") not after a degree word ("very
    many"), as a count of many with no number words to become: a :func:`plural_article_site` where it counts
    a countable object noun."""
    if "quantifier_sites" not in ctx.memo:
        lex, sites = ctx.lex, []
        for words in (tuple(q.split()) for q in lex.plural_quantifiers):
            sites += [CountSite(i, i + len(words), 2, ()) for i in range(len(ctx.tokens)) if phrase_at(ctx, i, words)
                      and ((prev := ctx.prev_word(i)) is None or prev.low not in lex.quantifier_not_after)]
        ctx.memo["quantifier_sites"] = sorted(sites, key=lambda site: site.first)
    return ctx.memo["quantifier_sites"]


def plural_article_site(ctx: CaptionContext, site: CountSite) -> bool:
    """True for a count of two or more (a number, a quantity phrase, a plural quantifier) counting a
    countable object noun, its only mention, with no possessor and no partitive "of" ("Two dogs are
    sleeping", "A man holding two umbrellas", "Several dogs", "a couple of dogs"): one of them is "a"/"an"."""
    nxt = ctx.next_word(site.end - 1)
    if site.value < 2 or (site.end - site.first == 1 and nxt is not None and nxt.low == "of"):
        return False
    heads = {s.unit.end - 1: s for s in object_sites(ctx) if s.number == "plural"}
    head = counted_head(ctx, site.end)
    found = heads.get(head[0]) if head is not None else None
    return (found is not None and not uncounted(ctx, found.unit)
            and found.unit.span[1] == ctx.tokens[found.unit.end - 1].end)


def singular_article_flip(ctx: CaptionContext, site: CountSite, family: str) -> Variant | None:
    """"Two dogs are sleeping" -> "A dog is sleeping" (the count family's agreement edits, "an" before
    a vowel sound) at a :func:`plural_article_site`; None where a plural pronoun or verb after it
    would be left disagreeing, in a collective frame ("a group of five men" is no "a group of a man"), where
    the predicate says many (:func:`collective`) or after a determiner or demonstrative ("The two bears are" is
    no "The a bear is")."""
    prev = ctx.prev_word(site.first)
    if not plural_article_site(ctx, site) or pronoun_follows(ctx, site, singular=False) or collective(ctx) or (
            prev is not None and (prev.low == "of" or prev.low in _DETERMINERS)):
        return None
    agreement = number_fix(ctx, site, singular=True)
    if agreement is None:
        return None
    span = ctx.span(site.first, site.end)
    variant = flip(ctx, family, site.first, span, "a", agreement)
    after = variant.text[span[0] + len(variant.replacement):].split()
    if after and indefinite_article(after[0]) == "an":
        variant = flip(ctx, family, site.first, span, "an", agreement)
    return variant if _agrees(ctx, site, variant, "plural") else None


def count_said_twice(ctx: CaptionContext) -> bool:
    """True when the caption says how many things there are in a second way: a partitive count ("three
    men ... two of the men"), two counts of the same noun ("two dogs ... three dogs"), or a cue of
    ``count_cues`` ("both", "the middle person", "the other") outside the words of a quantity phrase or a
    plural quantifier that counts ("a couple of dogs", "several dogs": the count itself), or a pronoun "one" that
    counts no noun of its own ("Two parking meters with the sunset reflecting off one")."""
    if "count_said_twice" not in ctx.memo:
        sites = count_sites(ctx) + article_count_sites(ctx) + quantifier_sites(ctx)
        phrases = [site for site in count_sites(ctx) if site.end - site.first > 1] + quantifier_sites(ctx)
        own = {k for site in phrases if plural_article_site(ctx, site) for k in range(site.first, site.end)}
        words = " " + " ".join(t.low for k, t in enumerate(ctx.tokens) if k not in own) + " "
        partitive = any((nxt := ctx.next_word(site.end - 1)) is not None and nxt.low == "of" for site in sites)
        counting = {site.first for site in sites}
        pronoun = any(t.low in ("one", "ones") and k not in counting for k, t in enumerate(ctx.tokens))
        heads = [head[1].group if head[1] is not None else ctx.tokens[head[0]].low
                 for site in sites if (head := counted_head(ctx, site.end)) is not None]
        ctx.memo["count_said_twice"] = (partitive or pronoun or len(heads) != len(set(heads))
                                        or any(f" {' '.join(p)} " in words for p in ctx.lex.count_cues))
    return ctx.memo["count_said_twice"]
