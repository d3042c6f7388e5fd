"""The closed word lists of the extended probe families (``lexicons/probes.json``), loaded once."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from lgip_dataset.perturb.lexicon import _read

Unit = tuple[str, ...]  # a one-word or multiword unit, lower-cased words


@dataclass(frozen=True)
class RelationWords:
    """The relation senses of ``probes.json``: preposition phrases by sense, finite verb forms, cliques."""
    preposition_sense: dict[tuple[str, ...], str]  # ("on", "top", "of") -> "on"
    inserted: dict[str, str]  # sense -> the phrase a flip inserts ("under")
    verb_forms: dict[str, str]  # "sits" -> "sitting"
    finite: dict[str, tuple[str, ...]]  # "sitting" -> ("sits", "sit")
    cliques: tuple[frozenset[str], ...]
    max_words: int
    adverbs: frozenset[str]  # may stand between a subject and its relation ("parked directly behind")
    particles: frozenset[str]  # may stand between a verb and its preposition ("laying down on")
    attribute_senses: dict[str, str]  # "big" -> "large"


@dataclass(frozen=True)
class ProbeLexicon:
    attribute_category: dict[str, str]  # attribute adjective -> its category ("size", "age", ...)
    determiners: frozenset[str]
    relation_words: frozenset[str]
    ing_nouns: frozenset[str]
    opposites: dict[str, dict[Unit, Unit]]  # family ("spatial", "temporal") -> unit -> inserted opposite
    max_unit_words: int
    left_right_after: frozenset[str]
    not_before: frozenset[str]
    temporal_events: frozenset[str]
    participles: dict[str, str]
    symmetric_relations: frozenset[Unit]  # "next to": a role swap around it is no contradiction
    faced_objects: frozenset[str]  # "laptop": no front <-> behind flip before it
    postures: frozenset[str]  # "sitting": changed only where the caption names no other action of its subject
    perching_subjects: frozenset[str]  # "n:bird": a perched bird sits and stands at once
    enclosures: frozenset[str]  # "n:bus", "building": what one can be inside or outside of
    role_fixed: frozenset[str]  # "catcher": places fixed by the game, no front <-> behind
    relations: RelationWords  # the relation senses and cliques (relations.py, hard_relation, spatial)


def _opposites(pairs: list) -> dict[Unit, Unit]:
    """Each unit of one side -> the first unit of the other side ("under" -> "on top of")."""
    out: dict[Unit, Unit] = {}
    for one, other in pairs:
        for side, target in ((one, other[0]), (other, one[0])):
            for unit in side:
                out[tuple(unit.split())] = tuple(target.split())
    return out


def _relation_words(data: dict) -> RelationWords:
    senses = data["relation_senses"]
    by_phrase = {tuple(p.split()): sense for sense, phrases in senses["prepositions"].items() for p in phrases}
    forms = {form: sense for sense, finite in senses["verb_forms"].items() for form in finite}
    return RelationWords(by_phrase, {s: p[0] for s, p in senses["prepositions"].items()}, forms,
                         {sense: tuple(finite) for sense, finite in senses["verb_forms"].items()},
                         tuple(frozenset(c) for c in data["relation_cliques"]), max(map(len, by_phrase)),
                         frozenset(senses["adverbs"]), frozenset(senses["particles"]), dict(data["attribute_senses"]))


@lru_cache(maxsize=1)
def load_probe_lexicon() -> ProbeLexicon:
    """The packaged probe lexicon (its ``version`` is checked like every lexicon file's)."""
    data = _read("probes")
    opposites = {family: _opposites(data[family]) for family in ("spatial", "temporal")}
    return ProbeLexicon(
        attribute_category={w: cat for cat, words in data["attribute_adjectives"].items() for w in words},
        determiners=frozenset(data["determiners"]),
        relation_words=frozenset(data["relation_words"]),
        ing_nouns=frozenset(data["ing_nouns"]),
        opposites=opposites,
        max_unit_words=max(len(u) for table in opposites.values() for u in table),
        left_right_after=frozenset(data["left_right_after"]),
        not_before=frozenset(data["not_before"]),
        temporal_events=frozenset(data["temporal_events"]),
        participles=dict(data["participles"]),
        symmetric_relations=frozenset(tuple(u.split()) for u in data["symmetric_relations"]),
        faced_objects=frozenset(data["faced_objects"]),
        postures=frozenset(data["postures"]),
        perching_subjects=frozenset(data["perching_subjects"]),
        enclosures=frozenset(data["enclosures"]),
        role_fixed=frozenset(data["role_fixed"]),
        relations=_relation_words(data),
    )
