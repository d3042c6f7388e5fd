"""The closed word lists of the extended probe families (``lexicons/probes.json``), loaded once."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from lgip_dataset.perturb.lexicon import _read

Unit = tuple[str, ...]  # a one-word or multiword unit, lower-cased words


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


def _opposites(pairs: list) -> dict[Unit, Unit]:
    """Each unit of one side -> the first unit of the other side ("under" -> "on top of")."""
    out: dict[Unit, Unit] = {}
    for one, other in pairs:
        for side, target in ((one, other[0]), (other, one[0])):
            for unit in side:
                out[tuple(unit.split())] = tuple(target.split())
    return out


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
    )
