"""Loading the versioned lexicon files in ``lgip_dataset/lexicons`` into lookup maps (once)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

LEXICON_VERSION = "1.18.0"
FILES = ("templates", "objects", "colors", "numbers", "function_words", "common_words")  # + probes.json (probe_lexicon.py)


@dataclass(frozen=True)
class NounForm:
    """One written form of an object noun: its group and grammatical number."""
    group: str
    number: str  # "singular", "plural" or "both" (sheep, scissors)
    singular: str
    plural: str


@dataclass(frozen=True)
class ObjectGroup:
    id: str
    supercategory: str
    coco_category: str | None
    singular: str
    plural: str
    uncountable: bool
    head_only: bool
    gender: str | None = None  # "male" / "female": what a he/she pronoun can refer back to
    container: bool = False  # holds what follows "of" ("a bottle of beer")


@dataclass(frozen=True)
class Pattern:
    """A paraphrase pattern such as "a photo of {c}"."""
    family: str
    kinds: frozenset[str]
    frame_nouns: frozenset[str]  # its words that name a picture ("photo", "scene")
    before: str  # the pattern's text before and after {c}
    after: str


@dataclass(frozen=True)
class Lexicon:
    version: str
    patterns: dict[str, tuple[Pattern, ...]]  # by caption kind
    min_caption_chars: int
    framed_prefixes: tuple[str, ...]  # each ends with a space
    frame_nouns: frozenset[str]
    kind_cues: dict[str, frozenset[str]]
    function_words: frozenset[str]
    common_words: frozenset[str]
    # objects
    groups: dict[str, ObjectGroup]
    noun_forms: dict[tuple[str, ...], NounForm | None]  # None: a blocked compound
    unit_starts: frozenset[str]  # first words of multiword forms
    max_unit_words: int
    modifier_heads: frozenset[str]
    object_targets: dict[str, tuple[ObjectGroup, ...]]  # group -> groups it may flip to
    object_related: dict[str, frozenset[str]]  # group -> itself, its ancestors and descendants (never a flip)
    partitive_heads: frozenset[str]  # "pieces" of luggage: the noun after "of" is not flipped
    coreference_cues: frozenset[str]  # "another" zebra: the noun refers to another mention
    gerund_modifiers: frozenset[str]  # "warning" sign: a compound, its head is not flipped
    pronoun_gender: dict[str, str]  # "his" -> "male"
    relative_animate: frozenset[str]  # "who": the noun before it is a person
    plural_in_use: frozenset[str]  # groups whose singular reads odd as a replacement ("riding a ski")
    supercategory_words: dict[str, frozenset[str]]  # "vehicle" -> "vehicle", "vehicles": names of a supercategory
    swap_classes: dict[str, frozenset[str]]  # group -> its swap classes ("dog" -> "pets"), hard object flips only
    overlapping_groups: frozenset[frozenset[str]]  # {"woman", "girl"}: person groups never swapped (hard object)
    gendered_words: dict[str, frozenset[str]]  # "female" -> "lingerie", "skirt": gender said besides the noun
    kept_by: dict[str, frozenset[str]]  # "car" -> "train", "train" -> "tracks": words that keep it (hard object)
    not_into: dict[str, frozenset[str]]  # "boy" -> "beer", "wedding": words that keep a flip out of it (hard object)
    ambiguous_forms: dict[str, frozenset[str]]  # "bikes" -> "motorcycle": groups a form may name too (hard object)
    mass_forms: frozenset[str]  # "luggage": a mass noun although its group counts (hard count flips)
    # colors
    color_group: dict[str, str]
    color_targets: dict[str, tuple[str, ...]]
    color_near: dict[str, frozenset[str]]  # color group -> itself and the groups too close to contradict it
    color_contexts: frozenset[str]
    not_color_before: frozenset[str]
    not_color_after: frozenset[str]  # "off" white: another shade, not a color to flip
    monochrome_nouns: frozenset[str]  # "black and white" before/with these is monochrome, not a color
    monochrome_verbs: frozenset[str]  # "portrayed" in black and white: monochrome too
    natural_colors: dict[str, frozenset[str]]  # natural kind (singular) -> the color groups it can have
    hard_natural_colors: dict[str, frozenset[str]]  # more kinds, and names ("granny" smith: none), hard colour only
    near_by_noun: dict[str, frozenset[frozenset[str]]]  # noun -> color-group pairs too close for it
    shade_modifiers: frozenset[str]  # "dark" green: never to black, white or gray ("dark black")
    person_nouns: frozenset[str]  # "player", "skin": people besides the person groups, whose colour is never flipped
    # numbers
    numbers: dict[str, int]
    number_rules: dict
    quantity_phrases: dict[tuple[str, ...], tuple[int, tuple[str, ...]]]  # "a couple of" -> (2, number words)
    one_blockers: tuple[tuple[str, ...], ...]  # reciprocal/collective frames: no flip to "one"
    pair_nouns: frozenset[str]  # "a pair of scissors" is one object
    count_cues: tuple[tuple[str, ...], ...]  # "two of the men", "the middle person": no hard count flip
    plural_quantifiers: tuple[str, ...]  # "several" dogs: a count of many with no number (hard count flips)
    held_quantifiers: tuple[str, ...]  # of those, the ones a held object may take ("holding several bats")
    quantifier_not_after: frozenset[str]  # "very" many: no quantifier count after these
    holding_words: frozenset[str]  # "riding" horses, "their" phone: a noun after these is held by the subject
    collective_predicates: tuple[tuple[str, ...], ...]  # "lined up", "in rows": no hard count flip to one
    single_seats: frozenset[str]  # "stool", "snowboard": carries one; no hard count flip makes its rider many
    held_prepositions: frozenset[str]  # "Two pizzas on" plates, "riding on" a skateboard: held there too
    counted_objects_after: tuple[tuple[str, ...], ...]  # "holding" a bat, "next to" a bench: an article there counts
    garments: frozenset[str]  # "in a green shirt": held after "in" anywhere after the subject
    quantifier_supercategories: dict[str, frozenset[str]]  # "a group of" counts only people and animals
    number_pronouns: dict[str, frozenset[str]]  # "singular"/"plural" -> pronouns that may refer to a count
    subject_after: frozenset[str]  # clause openers: a count after them opens a subject
    subject_determiners: frozenset[str]  # "the" two dogs: still the subject's start
    plural_modifiers: frozenset[str]  # "various", "different": a noun they modify stays plural (hard count flips)


def _read(name: str) -> dict:
    data = json.loads(resources.files("lgip_dataset.lexicons").joinpath(f"{name}.json").read_text("utf-8"))
    if data.get("version") != LEXICON_VERSION:
        raise RuntimeError(f"lexicon {name}.json has version {data.get('version')!r}, expected {LEXICON_VERSION}")
    return data


def _ancestors(gid: str, parents: dict[str, list[str]]) -> set[str]:
    seen: set[str] = set()
    stack = list(parents.get(gid, ()))
    while stack:
        g = stack.pop()
        if g not in seen:
            seen.add(g)
            stack.extend(parents.get(g, ()))
    return seen


def _add_form(forms: dict, text: str, form: NounForm | None) -> None:
    key = tuple(text.split())
    if key in forms and (forms[key] is None or form is None or forms[key].group != form.group):
        raise RuntimeError(f"objects.json: {text!r} is listed in two groups")
    forms.setdefault(key, form)


def _objects(data: dict) -> dict:
    groups: dict[str, ObjectGroup] = {}
    forms: dict[tuple[str, ...], NounForm | None] = {}
    parents = {g["id"]: g.get("is_a", []) for g in data["groups"]}
    for g in data["groups"]:
        sing, plur = g["forms"][0]
        groups[g["id"]] = ObjectGroup(g["id"], g["supercategory"], g.get("coco_category"), sing, plur,
                                      g.get("uncountable", False), g.get("head_only", False),
                                      g.get("gender"), g.get("container", False))
        for s, p in g["forms"]:  # a word in two pairs of a group keeps its first pair ("person", "people")
            _add_form(forms, s, NounForm(g["id"], "both" if s == p else "singular", s, p))
            _add_form(forms, p, NounForm(g["id"], "both" if s == p else "plural", s, p))
    for unit in data["blocked_units"]:
        _add_form(forms, unit, None)
    ancestors = {gid: _ancestors(gid, parents) for gid in groups}
    frames = data["frames"]
    related = {gid: frozenset({gid} | ancestors[gid] | {o for o in groups if gid in ancestors[o]}) for gid in groups}
    # never to itself, an ancestor or a descendant; never to an uncountable noun
    targets = {gid: tuple(g for g in groups.values() if g.id not in related[gid] and not g.uncountable)
               for gid in groups}
    return dict(groups=groups, noun_forms=forms, max_unit_words=max(len(k) for k in forms), object_related=related,
                unit_starts=frozenset(k[0] for k in forms if len(k) > 1),
                modifier_heads=frozenset(data["modifier_heads"]), object_targets=targets,
                partitive_heads=frozenset(frames["partitive_heads"]),
                coreference_cues=frozenset(frames["coreference_cues"]),
                gerund_modifiers=frozenset(frames["gerund_modifiers"]),
                pronoun_gender=dict(frames["pronoun_gender"]), relative_animate=frozenset(frames["relative_animate"]),
                plural_in_use=frozenset(frames["plural_in_use"]),
                supercategory_words={k: frozenset(v) for k, v in frames["supercategory_words"].items()},
                swap_classes=_swap_classes(groups, frames["swap_classes"]),
                overlapping_groups=frozenset(frozenset(pair) for pair in frames["overlapping_groups"]),
                gendered_words={k: frozenset(v) for k, v in frames["gendered_words"].items()},
                kept_by={k: frozenset(v) for k, v in frames["kept_by"].items()},
                not_into={gid: frozenset(w for g, words in frames["not_into"].items() if g == gid or g in ancestors[gid]
                                         for w in words) for gid in groups},
                ambiguous_forms={k: frozenset(v) for k, v in frames["ambiguous_forms"].items()},
                mass_forms=frozenset(frames["mass_forms"]))


def _swap_classes(groups: dict[str, ObjectGroup],
                  classes: dict[str, dict[str, list[str]]]) -> dict[str, frozenset[str]]:
    """Per group, the swap classes it is in: those of ``frames.swap_classes`` that list it, or its
    supercategory where that is not split into classes (none for a group its supercategory's classes
    leave out)."""
    member: dict[str, set[str]] = {gid: set() for gid in groups}
    for supercategory, named in classes.items():
        for name, ids in named.items():
            for gid in ids:
                if gid not in groups or groups[gid].supercategory != supercategory:
                    raise RuntimeError(f"objects.json: swap class {name!r} lists {gid!r}, no {supercategory} group")
                member[gid].add(name)
    return {gid: frozenset(member[gid] or ({g.supercategory} if g.supercategory not in classes else ()))
            for gid, g in groups.items()}


def _colors(data: dict) -> dict:
    color_group = {w: g["id"] for g in data["groups"] for w in g["words"]}
    canonical = [(g["id"], g["words"][0]) for g in data["groups"] if g.get("replacement")]
    listed = {g["id"]: set(g.get("near", ())) for g in data["groups"]}
    near = {gid: frozenset({gid} | listed[gid] | {o for o in listed if gid in listed[o]}) for gid in listed}
    targets = {gid: tuple(word for tid, word in canonical if tid not in near[gid]) for gid in near}
    by_noun: dict[str, set[frozenset[str]]] = {}
    for entry in data["near_by_noun"]:
        pair = frozenset(color_group[c] for c in entry["colors"])
        for noun in entry["nouns"]:
            by_noun.setdefault(noun, set()).add(pair)
    return dict(color_group=color_group, color_targets=targets, color_near=near,
                color_contexts=frozenset(data["color_contexts"]),
                not_color_before=frozenset(data["not_color_before"]),
                not_color_after=frozenset(data["not_color_after"]),
                monochrome_nouns=frozenset(data["monochrome_nouns"]),
                monochrome_verbs=frozenset(data["monochrome_verbs"]),
                natural_colors={noun: frozenset(color_group[c] for c in colors)
                                for noun, colors in data["natural_colors"].items()},
                hard_natural_colors={noun: frozenset(color_group[c] for c in colors)
                                     for noun, colors in data["hard_natural_colors"].items()},
                near_by_noun={noun: frozenset(pairs) for noun, pairs in by_noun.items()},
                shade_modifiers=frozenset(data["shade_modifiers"]), person_nouns=frozenset(data["person_nouns"]))


def _templates(data: dict) -> dict:
    frame = frozenset(data["frame_nouns"])
    patterns = tuple(
        Pattern(family, frozenset(e["kinds"]),
                frame & frozenset(e["pattern"].replace("{c}", " ").replace(",", " ").split()),
                *e["pattern"].split("{c}"))
        for family, entries in data["families"].items() for e in entries)
    cues = data["kind_cues"]
    kinds = sorted({k for p in patterns for k in p.kinds})
    return dict(patterns={k: tuple(p for p in patterns if k in p.kinds) for k in kinds},
                min_caption_chars=data["min_caption_chars"], frame_nouns=frame,
                framed_prefixes=tuple(p + " " for p in cues["framed_prefixes"]),
                kind_cues={k: frozenset(v) for k, v in cues.items() if k != "framed_prefixes"})


@lru_cache(maxsize=1)
def load_lexicon() -> Lexicon:
    """The packaged lexicons as lookup maps (built once per process)."""
    raw = {name: _read(name) for name in FILES}
    numbers = raw["numbers"]
    return Lexicon(
        version=LEXICON_VERSION,
        **_templates(raw["templates"]),
        function_words=frozenset(raw["function_words"]["words"]),
        common_words=frozenset(raw["common_words"]["words"]),
        numbers=dict(numbers["words"]),
        number_rules={k: frozenset(numbers[k]) for k in ("not_after", "not_before", "pronoun_not_after")}
        | {"pronoun": numbers["pronoun"]},
        quantity_phrases={tuple(k.split()): (v["value"], tuple(v["targets"]))
                          for k, v in numbers["quantity_phrases"].items()},
        one_blockers=tuple(tuple(p.split()) for p in numbers["one_blockers"]["phrases"]),
        pair_nouns=frozenset(numbers["pair_nouns"]),
        count_cues=tuple(tuple(p.split()) for p in numbers["count_cues"]),
        plural_quantifiers=tuple(numbers["plural_quantifiers"]),
        held_quantifiers=tuple(numbers["held_quantifiers"]),
        quantifier_not_after=frozenset(numbers["quantifier_not_after"]),
        holding_words=frozenset(numbers["holding_words"]),
        collective_predicates=tuple(tuple(p.split()) for p in numbers["collective_predicates"]),
        single_seats=frozenset(numbers["single_seats"]),
        held_prepositions=frozenset(numbers["held_prepositions"]),
        counted_objects_after=tuple(tuple(p.split()) for p in numbers["counted_objects_after"]),
        garments=frozenset(numbers["garments"]),
        quantifier_supercategories={k: frozenset(v) for k, v in numbers["quantifier_supercategories"].items()},
        number_pronouns={k: frozenset(v) for k, v in numbers["number_pronouns"].items()},
        subject_after=frozenset(numbers["subject_after"]),
        subject_determiners=frozenset(numbers["subject_determiners"]),
        plural_modifiers=frozenset(numbers["plural_modifiers"]),
        **_objects(raw["objects"]),
        **_colors(raw["colors"]),
    )
