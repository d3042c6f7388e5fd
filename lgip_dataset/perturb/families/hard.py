"""Hard flips (``hard_object``, ``hard_color``, ``hard_count``): flips plausible in context.

Each hard family takes its candidates, one site at a time, from its paper family (the object, colour
and count families' site detection, replacement lists and agreement edits: one substitution that
contradicts the caption and stays grammatical) and from sites of its own
(:mod:`lgip_dataset.perturb.families.hard_sites`: a scene or place noun, "in a kitchen" -> "in a
bathroom"; an article counting the subject, "A dog is sleeping" -> "Two dogs are sleeping"), and
keeps one candidate per site, chosen with the caption's statistics
(:mod:`lgip_dataset.perturb.plausibility`, cross-fitted by image):

1. *kin, slot and scene fit*: candidates fall in ``TIERS`` by their kin (:func:`_object_kin`: a
   noun of the same swap class of a COCO supercategory (lexicon ``frames.swap_classes``) or a place of
   the same class, or the other gender's counterpart; never a change of class, never a noun the
   caption already names). Every
   context word of the site (the words that govern or modify it: "grazing on", "serving the",
   "metallic", the preposition of a place) must take the replacement in the original's slot, as
   attested in COCO captions relative to the original (:meth:`Plausibility.fits`: "grazing" takes
   animals, "hanging on the" takes trees, not cameras; a colour must be attested for its noun,
   "purple horse" is not); for a noun or a place, only the words that say what its slot takes
   (:meth:`Plausibility.informative`: the preposition, and the words seen with the original
   itself), so a word the statistics barely know ("curled up on a couch") neither blocks a sound
   flip nor lets one through alone; a man may become a woman without a slot ("riding a wave"). A noun or
   place must also be seen with every other noun and place of the caption
   (:meth:`Plausibility.scene_attested`: no horse held in front of a stove, no zebras near a
   harbor) and leave the whole caption about as typical of it as of the original
   (:meth:`Plausibility.typicality` at least the tier's floor, ``PERSON_MIN_TYPICALITY`` for a
   person), so that a word far from the slot still counts ("a baseball catcher ... ready to catch
   a frisbee");
2. *text-only balance*, as SugarCrepe's adversarial refinement: in the first tier that has a
   candidate the bigram LM finds at least as likely as the caption (``lm_delta >= 0``), one of
   those is taken at random (seeded; those past ``MARGIN`` first); when no tier has one, the first
   tier's most likely candidate, unless it is ``MAX_DROP`` nats less likely than the caption.

Each hard flip records ``plausibility``: its ``lm_delta``, ``context_fit``, ``typicality``, its
``tier``, the number of ``candidates`` in the site's tiers and the context words the fit was
measured on.
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Callable, Iterator

from lgip_dataset.perturb import plausibility
from lgip_dataset.perturb.agreement import noun_for_number
from lgip_dataset.perturb.context import CaptionContext
from lgip_dataset.perturb.families import colors, counts, hard_sites, objects
from lgip_dataset.perturb.places import load_places
from lgip_dataset.perturb.plausibility import attached, caption_words, context_words, modifying_colours, scene_nouns
from lgip_dataset.perturb.registry import register
from lgip_dataset.perturb.seeding import KeyedRandom, shuffled
from lgip_dataset.perturb.variant import Variant

# Candidate tiers per family, tried in order: (kin, least context words, least share of them that
# take the replacement, least caption typicality in nats or None). For nouns and places kin 0 is the
# same swap class of a COCO supercategory or place class, kin 1 the other gender's counterpart (colours
# and numbers are all kin 0; an article replacing a count, kin 1, is a count any countable noun takes). A noun with
# nothing around it is too often absurd ("a pizza ... on a yellow traffic light"); a counterpart does what
# the original does; a colour that modifies no noun the statistics know it with ("dressed in purple", "a
# white milk truck") takes any colour of its family.
TIERS = {"hard_object": ((0, 1, 1.0, -3.5), (1, 0, 0.0, -3.5)),
         "hard_color": ((0, 1, 1.0, None), (0, 0, 1.0, None)), "hard_count": ((0, 1, 1.0, None), (1, 0, 0.0, None))}
# families whose replacement must be attested with every other noun and place of the caption
SCENE = {"hard_object": True, "hard_color": False, "hard_count": False}
# a person for a person ("man" -> "woman" riding a wave) reads less typical but is seldom absurd
PERSON_MIN_TYPICALITY = -8.0
MARGIN = 1.0  # candidates this much more likely than the caption (in nats) are preferred
# a site whose fitting candidates all read less likely than the caption by more than this is skipped;
# count words differ little in context, and text alone reads "A dog" as likelier than "Two dogs", so a count
# flip must stay closer to the caption's likelihood
MAX_DROP = {"hard_object": 8.0, "hard_color": 8.0, "hard_count": 1.0}
# a set-level choice balances each word's uses both ways, so text alone gains nothing from a flip reading less likely
# than its caption (its reverse reads more likely): every pooled type's candidates (hard_relation's too) go this far,
# a count's further, its plural being rare in text ("Some tables", "tvs"; val2017's default build: 94.94% of images
# with a hard flip at 8 nats, 95.02% at 10, the images it adds each by a count flip, "A desk" -> "Desks containing")
POOL_MAX_DROP = {"hard_object": 8.0, "hard_color": 8.0, "hard_count": 10.0, "hard_relation": 8.0}
DEFINITE = frozenset(("the", "these", "those", "this", "that"))  # "The two cats" never becomes "The one cat"
VERSION = "2.21.0"


def _object_key(ctx: CaptionContext, replacement: str) -> str:
    words = tuple(replacement.lower().split())
    place = load_places().group_of.get(words)
    return f"p:{place}" if place is not None else f"n:{ctx.lex.noun_forms[words].group}"


def _color_key(ctx: CaptionContext, replacement: str) -> str:
    return f"c:{ctx.lex.color_group[replacement.lower()]}"


def _count_key(ctx: CaptionContext, replacement: str) -> str:
    """"k:<number word or quantity phrase>"; "k:one" for an article counting its noun ("A", "a dog");
    "k:many" for a bare plural ("Dogs") or a plural quantifier ("Several", "A group of")."""
    low = replacement.lower()
    if low in ctx.lex.numbers or tuple(low.split()) in ctx.lex.quantity_phrases:
        return f"k:{low}"
    return "k:one" if low.split()[0] in ("a", "an") and low not in ctx.lex.plural_quantifiers else "k:many"


def _counterparts(ctx: CaptionContext, one: str, other: str) -> bool:
    """True for groups of the other gender at the same level ("man" / "woman", "boy" / "girl"; not
    "man" / "girl"): what one does the other does too, so no slot is needed to make it plausible."""
    a, b, related = ctx.lex.groups[one], ctx.lex.groups[other], ctx.lex.object_related
    return bool(a.gender and b.gender and a.gender != b.gender and related[one] - {one} == related[other] - {other})


def _gender_clash(ctx: CaptionContext, one: str, other: str) -> bool:
    """True when the groups have other genders and the caption has a he/she pronoun, which may refer to either
    ("A man sits with a dog at his feet": "his" is the man's, not the dog's), or says the old one's gender besides
    its noun (lexicon ``frames.gendered_words``: "A woman in lingerie", "in a skirt", "two other mens wine glasses");
    a group of no gender becomes none of a gender other than a he/she pronoun's where no other noun of the caption
    has a gender ("A child ... his hand"; "A lady and her child" may have a man)."""
    a, b = ctx.lex.groups[one].gender, ctx.lex.groups[other].gender
    if b and not a:  # "A child feeding a giraffe from the palm of his hand" is no "A woman ... his hand"
        others = any(u.form is not None and ctx.lex.groups[u.form.group].gender for u in ctx.units.values())
        return not others and any(ctx.lex.pronoun_gender.get(t.low, b) != b for t in ctx.tokens)
    said = ctx.lex.gendered_words.get(a or "", frozenset())
    return bool(a and b and a != b and any(t.low in ctx.lex.pronoun_gender or t.low in said for t in ctx.tokens))


def _overlapping(ctx: CaptionContext, one: str, other: str) -> bool:
    """True for groups whose words overlap in use (lexicon ``frames.overlapping_groups``: "girl" is
    said of young women, so "a woman" -> "a girl" is no contradiction)."""
    return frozenset((one, other)) in ctx.lex.overlapping_groups


def _kept(ctx: CaptionContext, group: str) -> bool:
    """True when a word or a phrase of the caption keeps the noun what it is (lexicon ``frames.kept_by``: "Train
    with cars" are rail cars, no "Train with buses"; a train on the tracks, no bus; horses in a race, no sheep; the
    "side car" of a motorcycle, no bus's; no cell phone for what a cat looks "at the camera")."""
    keepers = ctx.lex.kept_by.get(group, frozenset())
    if "spaced_words" not in ctx.memo:  # the same for every candidate of the caption
        ctx.memo["spaced_words"] = f" {' '.join(t.low for t in ctx.tokens)} "
    return any(f" {keeper} " in ctx.memo["spaced_words"] for keeper in keepers)


def _kept_out(ctx: CaptionContext, new_group: str) -> bool:
    """True when a word of the caption keeps any noun from becoming ``new_group`` (lexicon ``frames.not_into``, which
    holds for the narrower groups too: a man "with a beer in his hand", at a "wedding", "in high heels" never becomes
    a boy, a girl or a child)."""
    return any(t.low in ctx.lex.not_into[new_group] for t in ctx.tokens)


def _ambiguous(ctx: CaptionContext, first: int, new_group: str) -> bool:
    """True when the noun at token ``first`` may also name ``new_group`` (lexicon ``frames.ambiguous_forms``:
    "bikes" may be motorcycles, so "bikes" -> "motorcycles" is no contradiction)."""
    unit = ctx.units[first]
    form = " ".join(t.low for t in ctx.tokens[unit.start:unit.end])
    return new_group in ctx.lex.ambiguous_forms.get(form, frozenset())


def _listed_with_kin(ctx: CaptionContext, first: int) -> bool:
    """True when the thing at token ``first`` (not a person, not an animal) is listed, by "and", "or" or a comma,
    right beside another thing of its supercategory ("Four computers and keyboards", "a stove, and sink",
    "Bananas and apples"): one scene holds the list's kin too (mice, a refrigerator, oranges), so a swap within it is
    seldom a contradiction."""
    unit, groups = ctx.units[first], ctx.lex.groups
    kind = groups[unit.form.group].supercategory
    if kind in ("person", "animal"):
        return False
    by_start = {u.start: u for u in ctx.units.values() if u.form is not None}
    by_end = {u.end: u for u in ctx.units.values() if u.form is not None}

    def link(i: int) -> bool:  # token i is "and" or "or" (a comma is a break between tokens: not joined)
        return 0 <= i < len(ctx.tokens) and ctx.tokens[i].low in ("and", "or")
    before = [by_end.get(unit.start - 1) if link(unit.start - 1) else None,
              by_end.get(unit.start) if unit.start > 0 and not ctx.joined(unit.start - 1, unit.start) else None]
    after = [by_start.get(unit.end + 1) if link(unit.end) else None,
             by_start.get(unit.end) if unit.end < len(ctx.tokens) and not ctx.joined(unit.end - 1, unit.end) else None]
    return any(u is not None and u is not unit and groups[u.form.group].supercategory == kind for u in before + after)


def _object_kin(ctx: CaptionContext, variant: Variant, first: int, end: int) -> int | None:
    """0: same swap class of a COCO supercategory (lexicon ``frames.swap_classes``: "dog" -> "cat", "man"
    -> "boy", "knife" -> "fork", "kitchen" -> "bathroom": a place keeps to its class); 1: the other gender's
    counterpart ("man" -> "woman"); None: a change of class ("table" -> "man", "people" -> "elephants",
    "keyboard" -> "table", "dog" -> "horse", "skateboard" -> "baseball glove": what people do is seldom
    what animals or things do, and a thing of another kind in the same slot is too often absurd: "a
    person on a table talking", "a horse riding in the cab of a pickup truck", "a little kid on a
    baseball glove"), a noun the caption already names, or one it names by a broader or narrower word
    ("a man and woman" -> "a woman and woman", "bicycles and vehicles" -> "cars and vehicles": no
    contradiction), another gender where a he/she pronoun may refer to the noun or the caption says the
    old gender otherwise (:func:`_gender_clash`), a person group whose words overlap the old one's
    (:func:`_overlapping`) or that it may name too (:func:`_ambiguous`), any noun a word of the caption keeps
    (:func:`_kept`: a part of a thing named, a train on the tracks), a group a word keeps out (:func:`_kept_out`: no
    child with a beer), or a thing listed beside its kin
    (:func:`_listed_with_kin`: "computers and keyboards")."""
    groups = ctx.lex.groups
    if ctx.units.get(first) is None:  # a place: its site already keeps to its class
        return 0
    new_group = _object_key(ctx, variant.replacement)[2:]
    related = ctx.lex.object_related[new_group]  # itself, its ancestors and descendants
    if any(u.form is not None and u.form.group in related for u in ctx.units.values() if u.start != first):
        return None
    broader = ctx.lex.supercategory_words.get(groups[new_group].supercategory, frozenset())
    if any(t.low in broader for t in ctx.tokens):
        return None
    old_group = ctx.units[first].form.group
    if (_gender_clash(ctx, old_group, new_group) or _overlapping(ctx, old_group, new_group) or _kept(ctx, old_group)
            or _kept_out(ctx, new_group) or _ambiguous(ctx, first, new_group) or _listed_with_kin(ctx, first)):
        return None
    return _swap_kin(ctx, old_group, new_group)


def _swap_kin(ctx: CaptionContext, old: str, new: str) -> int | None:
    """1 for the other gender's counterpart, 0 for a group of a swap class the old one shares, else None."""
    if _counterparts(ctx, old, new):
        return 1
    return 0 if ctx.lex.swap_classes[old] & ctx.lex.swap_classes[new] else None


def _color_kin(ctx: CaptionContext, variant: Variant, first: int, end: int) -> int | None:
    """0, except a colour the caption already names ("yellow and black" -> "yellow and yellow", "black-and white" ->
    "black-and black", "players in white uniforms, one in orange" -> "in orange uniforms": the picture may show it),
    or one written beside the site with a letter missing ("a brow and white horse" -> "a brow and brown horse")."""
    new = variant.replacement.lower()
    if "colours_named" not in ctx.memo:  # the same for every candidate of the caption
        ctx.memo["colours_named"] = {ctx.lex.color_group.get(part) for t in ctx.tokens for part in t.low.split("-")}
    if ctx.lex.color_group[new] in ctx.memo["colours_named"]:
        return None
    near = {part for t in ctx.tokens[max(first - 3, 0):end + 3] for part in t.low.split("-") if part}
    return None if any(_one_letter_short(w, new) for w in near) else 0


def _one_letter_short(word: str, colour: str) -> bool:
    """True when ``word`` is ``colour`` with one letter left out ("brow" for "brown")."""
    return len(word) >= 3 and len(word) + 1 == len(colour) and any(
        colour[:i] + colour[i + 1:] == word for i in range(len(colour)))


def _count_kin(ctx: CaptionContext, variant: Variant, first: int, end: int) -> int | None:
    """0 for a number word; 1 for an article or a bare plural ("Two dogs" -> "A dog", "A dog" -> "Dogs"),
    which any countable noun takes; None for a number word the caption names elsewhere ("Three people, two wearing
    blue shirts" -> "Two people, two wearing ...")."""
    low = variant.replacement.lower()
    if low in ctx.lex.numbers:
        return None if any(t.low == low for t in ctx.tokens[:first] + ctx.tokens[end:]) else 0
    return 0 if tuple(low.split()) in ctx.lex.quantity_phrases else 1


def _tokens_of(ctx: CaptionContext, span: tuple[int, int]) -> tuple[int, int]:
    """Token indices [first, end) covering the character span."""
    first = next(i for i, t in enumerate(ctx.tokens) if t.end > span[0])
    return first, sum(t.start < span[1] for t in ctx.tokens)


def _persons(ctx: CaptionContext, original: str, target: str) -> bool:
    """True when both keys are object groups of persons."""
    groups = ctx.lex.groups
    return all(k[2:] in groups and groups[k[2:]].supercategory == "person" for k in (original, target))


def _typicality_floor(least_typical: float | None, person: bool) -> float:
    """The least caption typicality a tier asks of a candidate (a person for a person: at most
    PERSON_MIN_TYPICALITY); -inf when the tier asks none."""
    if least_typical is None:
        return -math.inf
    return min(least_typical, PERSON_MIN_TYPICALITY) if person else least_typical


def _after_to(ctx: CaptionContext, first: int) -> bool:
    """True for a word right after "to" ("ready to bat", "next to bench"): a verb, or a noun without
    its article, that a swap would not keep grammatical."""
    prev = ctx.prev_word(first)
    return prev is not None and prev.low == "to"


def _fitting(ctx: CaptionContext, name: str, candidates: list[Variant]) -> tuple[list[list[tuple]], tuple[str, ...]]:
    """The candidates of one site that fit its context, by tier (nearest first), each as (variant,
    context fit, lm_delta, typicality, tier), and the context words the fit was measured on."""
    if not candidates:
        return [], ()
    key, kin_of = KEYS[name], KIN[name]
    scorer = attached(ctx)
    first, end = _tokens_of(ctx, candidates[0].span)
    if name == "hard_object" and _after_to(ctx, first):
        return [], ()
    original = key(ctx, candidates[0].original)
    context, colours = context_words(ctx, first, end, original[0]), ()
    if original[0] != "k":  # a noun, a place or a colour: its informative context words
        context = scorer.informative(original, context)
    if original[0] in "np":  # and the colours modifying a noun or a place
        colours = modifying_colours(ctx, first)
    words = caption_words(ctx, first, end)
    scene = scene_nouns(words) if SCENE[name] else ()
    tiers: dict[int, list] = {}
    for variant in candidates:
        kin = kin_of(ctx, variant, first, end)
        if kin is None:
            continue
        target = key(ctx, variant.replacement)
        if not (scorer.scene_attested(target, scene) and scorer.colours_attested(target, colours)):
            continue
        fit, typical = scorer.context_fit(target, original, context), scorer.typicality(target, original, words)
        person = _persons(ctx, original, target)
        tier = next((t for t, (k, least, least_fit, least_typical) in enumerate(TIERS[name])
                     if k == kin and fit >= least_fit and len(context) >= least
                     and typical >= _typicality_floor(least_typical, person)), None)
        if tier is not None:
            tiers.setdefault(tier, []).append((variant, fit, scorer.lm_delta(ctx.text, variant.text), typical, tier))
    return [tiers[tier] for tier in sorted(tiers)], context


def _with_figures(name: str, candidate: tuple, candidates: int, context: tuple[str, ...]) -> Variant:
    """The candidate's variant as a ``name`` flip that records the figures it was chosen by."""
    variant, fit, delta, typical, tier = candidate
    figures = {"lm_delta": round(delta, 6), "context_fit": round(fit, 6), "typicality": round(typical, 6),
               "candidates": candidates, "tier": tier, "context": list(context)}
    return dataclasses.replace(variant, type=name, plausibility=figures)


def pick(name: str, ranked: list[list[tuple]], context: tuple[str, ...], rng: KeyedRandom,
         max_drop: float) -> Variant | None:
    """The hard flip of one site chosen from its caption alone, from its fitting candidates by tier
    (nearest first, each (variant, context fit, lm_delta, typicality, tier)): at random among the nearest
    tier's candidates reading at least as likely as the caption (those past MARGIN first), else that
    tier's most likely one unless it reads ``max_drop`` nats less likely than the caption (None)."""
    likely = next(([c for c in fitting if c[2] >= 0.0] for fitting in ranked if any(c[2] >= 0.0 for c in fitting)), None)
    if likely:
        margin = [c for c in likely if c[2] >= MARGIN] or likely
        chosen = margin[rng.randrange(0, len(margin))]
    elif ranked:
        chosen = max(ranked[0], key=lambda c: c[2])
        if chosen[2] < -max_drop:
            return None
    else:
        return None
    return _with_figures(name, chosen, sum(map(len, ranked)), context)


def choose(ctx: CaptionContext, name: str, candidates: list[Variant], rng: KeyedRandom) -> Variant | None:
    """The ``name`` flip of one site with ``candidates`` chosen from this caption alone (:func:`pick`)."""
    return pick(name, *_fitting(ctx, name, candidates), rng, MAX_DROP[name])


def pool(name: str, ranked: list[list[tuple]], context: tuple[str, ...]) -> list[Variant]:
    """Every candidate of one site that a set-level choice (:mod:`lgip_dataset.selection.balance`) may take: the
    fitting ones of every tier no more than ``POOL_MAX_DROP[name]`` nats less likely than the caption, nearest
    tier first, each with its figures."""
    total = sum(map(len, ranked))
    return [_with_figures(name, c, total, context) for fitting in ranked for c in fitting if c[2] >= -POOL_MAX_DROP[name]]


def hard_flip_provenance() -> dict:
    """How the hard flips were chosen, for a build's record: the rule's constants and the statistics."""
    tiers = {name: [{"kin": kin, "least_context_words": least, "least_context_fit": fit, "least_typicality": typical}
                    for kin, least, fit, typical in rules] for name, rules in TIERS.items()}
    return {"tiers": tiers, "scene": SCENE, "person_min_typicality": PERSON_MIN_TYPICALITY, "margin": MARGIN,
            "context_words": "a noun's or a place's preposition and the content words seen with the original "
                             "at least min_cooccurrence times; a colour's or a count's noun",
            "max_drop": MAX_DROP, "pool_max_drop": POOL_MAX_DROP,
            **plausibility.provenance()}


def object_candidates(ctx: CaptionContext, rng: KeyedRandom) -> list[Iterator[Variant]]:
    """The object family's sites and candidates (no singular of a noun used in the plural, "a ski"; no noun its
    colour words do not fit, :func:`_colours_fit`), then the place sites' (:mod:`hard_sites`)."""
    plural_only = {ctx.lex.groups[g].singular for g in ctx.lex.plural_in_use}
    sites = []
    for site in objects.object_sites(ctx):  # the object family's order of candidates; only those of a kin built
        old = site.unit.form.group
        safe = [g for g in site.targets if not objects.gives_a_colour(ctx, site, g)  # before the shuffle, as frozen
                and _colours_fit(ctx, site.unit, g)]
        kin = [g for g in shuffled(safe, rng) if _swap_kin(ctx, old, g.id) is not None]
        flips = (objects.object_flip(ctx, site, g) for g in kin)
        sites.append([v for v in flips if v.replacement.lower() not in plural_only])
    return sites + hard_sites.place_flips(ctx)


def _colours_fit(ctx: CaptionContext, unit, group) -> bool:
    """True unless a colour word before ``unit`` is one the ``natural_colors`` of ``group`` leave out ("a brown
    horse" is no "brown zebra")."""
    natural = ctx.lex.natural_colors.get(group.singular)
    return natural is None or objects.colours_before(ctx, unit) <= natural


def color_candidates(ctx: CaptionContext, rng: KeyedRandom) -> list[Iterator[Variant]]:
    """The colour family's sites, each with every colour word of the lexicon the family's rules allow
    there (:func:`colors.every_word_site`: "grey", "silver" and "tan" are replacements too, so that a
    colour word is inserted as often as it is removed) that its noun can have (lexicon
    ``hard_natural_colors``: no gray tulip; none in a name, "green granny smith apples", "silver ware"); none of a
    food's colour it cannot have (:func:`_slip`)."""
    sites = []
    for wide in map(functools.partial(colors.every_word_site, ctx), colors.color_sites(ctx)):
        bound = _natural_bound(ctx, _natural_kind(ctx, wide))
        slip = _slip(ctx, wide)
        sites.append(iter([colors.color_flip(ctx, wide, c, "hard_color") for c in wide.targets if not slip
                           and (bound is None or ctx.lex.color_group[c] in bound)]))
    return sites


def _natural_bound(ctx: CaptionContext, noun: str | None) -> frozenset[str] | None:
    """The colour groups ``noun`` can have: its ``hard_natural_colors``, else its ``natural_colors`` (None: any)."""
    lex = ctx.lex
    return lex.hard_natural_colors.get(noun, lex.natural_colors.get(noun)) if noun is not None else None


def _slip(ctx: CaptionContext, site: colors.ColorSite) -> bool:
    """True when ``site`` gives a food a colour its ``natural_colors`` leave out ("some purple bananas"): the
    caption's slip, of which no flip is a fair contradiction. Animals keep their sites: their colour words are
    loose ("a yellow dog", "a tan horse")."""
    form = ctx.lex.noun_forms.get(tuple(site.noun.split())) if site.noun else None
    bound = ctx.lex.natural_colors.get(site.noun)
    return bool(form and bound and ctx.lex.groups[form.group].supercategory == "food"
                and ctx.lex.color_group[ctx.tokens[site.index].low] not in bound)


def _natural_kind(ctx: CaptionContext, site: colors.ColorSite) -> str | None:
    """The noun whose natural colours bound those of ``site``: the noun it describes, or else the first word within
    three joined content words after it whose singular is a natural kind of the lexicon (a form the colour family
    takes for a verb, "yellow eyes", "white clouds"; one after an adjective, "white fluffy clouds")."""
    if site.noun is not None:
        return site.noun
    for j in range(site.index + 1, min(site.index + 4, len(ctx.tokens))):
        if not ctx.joined(j - 1, j) or not ctx.is_content(ctx.tokens[j]):
            return None
        singular = noun_for_number(ctx.tokens[j].low, singular=True)
        if singular in ctx.lex.hard_natural_colors or singular in ctx.lex.natural_colors:
            return singular
    return None


def count_candidates(ctx: CaptionContext, rng: KeyedRandom) -> list[Iterator[Variant]]:
    """The count family's sites and candidates (where every verb agrees: "Two boys playing tennis run"
    never becomes "One boy ... run"), each count of two or more also to "a"/"an", then the plural
    quantifiers' ("Several dogs" -> "A dog"), the article count sites' and the bare plural subjects'
    (:mod:`hard_sites`); none in a caption that says its count twice, none after "a" or "an" but before a
    content word ("a bed in a ten with" is a slip; "a three story building" is a count), and no "one" after a
    word of ``DEFINITE`` ("The two cats" is no "The one cat")."""
    if hard_sites.count_said_twice(ctx):
        return []
    sites = []
    for site, candidates in zip(counts.count_sites(ctx), counts.generate(ctx, rng)):
        before = ctx.prev_word(site.first)
        if before is not None and before.low in ("a", "an") and not ctx.is_content(ctx.next_word(site.end - 1)):
            # "a bed in a ten with": a slip, no count ("a three story building" is one)
            sites.append(iter(()))
            continue
        article = hard_sites.singular_article_flip(ctx, site, "hard_count")
        agreeing = [v for v in candidates if hard_sites.number_agrees(ctx, site, v)  # now, while ``site`` is this one
                    and not (before is not None and before.low in DEFINITE and v.replacement.lower() == "one")]
        sites.append(itertools.chain(agreeing, () if article is None else (article,)))
    quantifiers = [iter(filter(None, (hard_sites.singular_article_flip(ctx, site, "hard_count"),)))
                   for site in hard_sites.quantifier_sites(ctx)]
    return sites + quantifiers + hard_sites.article_count_flips(ctx) + hard_sites.bare_plural_flips(ctx)


def _with_trigram(ctx: CaptionContext, variants: list[Variant]) -> list[Variant]:
    """The pooled ``variants`` with their ``trigram_delta`` (:meth:`Plausibility.trigram_delta`, of the same
    statistics as ``lm_delta``), whose sign the set-level choice balances
    (:mod:`lgip_dataset.selection.balance_program`)."""
    readings = attached(ctx).trigram_readings(ctx.text, [v.text for v in variants])
    return [dataclasses.replace(v, plausibility={**v.plausibility, "trigram_delta": delta, "trigram_halves": halves})
            for v, (delta, halves) in zip(variants, readings)]


def _hard(name: str, base: Callable) -> None:
    """Register the hard family ``name`` over the sites and candidates of ``base``."""

    @register(name, "flip", VERSION)
    def generate(ctx: CaptionContext, rng: KeyedRandom) -> list[Iterator[Variant]]:
        if hard_sites.broken_caption(ctx):
            return []
        sites = [choose(ctx, name, list(site), rng) for site in base(ctx, rng)]
        return [iter((v,)) for v in sites if v is not None]

    def pools(ctx: CaptionContext, rng: KeyedRandom) -> list[list[Variant]]:
        if hard_sites.broken_caption(ctx):
            return []
        return [_with_trigram(ctx, found) for site in base(ctx, rng)
                if (found := pool(name, *_fitting(ctx, name, list(site))))]

    generate.__doc__ = f"One {name} flip per site of {base.__name__} that has a fitting candidate."
    pools.__doc__ = f"The :func:`pool` of every site of {base.__name__} that has one."
    POOLS[name] = pools


# per hard family: its sites' pools of fitting candidates, for a choice across a whole set of captions
POOLS: dict[str, Callable[[CaptionContext, KeyedRandom], list[list[Variant]]]] = {}


KEYS = {"hard_object": _object_key, "hard_color": _color_key, "hard_count": _count_key}
KIN = {"hard_object": _object_kin, "hard_color": _color_kin, "hard_count": _count_kin}
CANDIDATES = {"hard_object": object_candidates, "hard_color": color_candidates, "hard_count": count_candidates}
for _name, _base in CANDIDATES.items():
    _hard(_name, _base)
