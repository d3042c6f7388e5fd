"""The registry of variant families: each has a name, a kind and a generate function.

A family's ``generate(ctx, rng)`` (``rng``: its own seeded ``KeyedRandom``) returns its *sites*
(one per place it can edit, or one for all paraphrases), each an iterator of candidate
:class:`Variant` in seeded preference order; the selector pulls from them lazily. Adding a family
= a new module that calls :func:`register` (imported from ``families/__init__.py``); the existing
families are untouched, and so are their outputs (each family has its own random stream).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from lgip_dataset.errors import DataError
from lgip_dataset.perturb.variant import Variant

KINDS = ("paraphrase", "flip")
CORE = ("template", "marker", "object", "color", "count")  # the paper's set: the default
HARD = ("hard_object", "hard_color", "hard_count")  # the plausibility-matched flips (families/hard.py)
GROUPS = {"core": CORE, "hard": HARD}  # every other family is "extended"
GROUP_NAMES = ("core", "hard", "all")  # names that stand for several families in a --families list
NWAY_SCORED = ("scramble_content", "scramble_function", "scramble_all")  # also scored n-way (SNARE)
# families that ask the cross-fitted caption statistics (lgip_dataset.perturb.plausibility): a build counts them
STATISTICAL = HARD + ("hard_relation", "relation", "binding", "spatial")
# families built only when named, too few of their flips being sound on COCO to make a probe set: "temporal"
# (2 flips a photo can decide on all 25,014 val2017 captions), "relation" (no role swap attested both ways
# there); "all" leaves them out
OPT_IN = ("relation", "temporal")
Generate = Callable[["CaptionContext", "KeyedRandom"], list[Iterator[Variant]]]  # noqa: F821


@dataclass(frozen=True)
class Family:
    name: str
    kind: str
    generate: Generate
    version: str = "1.0.0"


FAMILIES: dict[str, Family] = {}

# Variant types that ``lgip build --from`` imports from other probe sets instead of generating
# them: name -> kind. The statistics know them like the families' own types.
SUGARCREPE_SUBSETS = ("replace_obj", "replace_att", "replace_rel", "swap_obj", "swap_att", "add_obj", "add_att")


def imported_type(source: str, subset: str) -> str:
    """The type of the variants imported from ``subset`` of probe set ``source``: ``sugarcrepe_replace_obj``."""
    return f"{source}_{subset}"


IMPORTED_TYPES: dict[str, str] = {imported_type("sugarcrepe", subset): "flip" for subset in SUGARCREPE_SUBSETS}
# the nearest peer set of a family: the SugarCrepe subset that makes the same kind of negative
PEER_TYPES = {"hard_relation": imported_type("sugarcrepe", "replace_rel"),
              "binding": imported_type("sugarcrepe", "swap_att"),
              "relation": imported_type("sugarcrepe", "swap_obj"),
              "hard_object": imported_type("sugarcrepe", "replace_obj"),
              "hard_color": imported_type("sugarcrepe", "replace_att")}


def register(name: str, kind: str, version: str = "1.0.0") -> Callable[[Generate], Generate]:
    """Decorator: register ``generate`` as the family ``name`` of ``kind``; bump ``version`` when
    its output changes."""
    if kind not in KINDS:
        raise ValueError(f"family kind must be one of {KINDS}, got {kind!r}")

    def deco(generate: Generate) -> Generate:
        if name in FAMILIES:
            raise ValueError(f"family {name!r} is already registered")
        FAMILIES[name] = Family(name, kind, generate, version)
        return generate
    return deco


def group_of(name: str) -> str:
    """The group a family belongs to: "core" (the paper's Table 1), "hard" or "extended"."""
    return next((group for group, names in GROUPS.items() if name in names), "extended")


def variant_types() -> dict[str, dict[str, str]]:
    """Every registered type with its ``kind``, ``group`` and ``scoring`` ("pairwise" or "nway"), then
    the imported types (group "imported"): the table builders/derive_variant_types.py writes for the
    statistics."""
    generated = {name: {"kind": family.kind, "group": group_of(name),
                        "scoring": "nway" if name in NWAY_SCORED else "pairwise"} for name, family in FAMILIES.items()}
    imported = {name: {"kind": kind, "group": "imported", "scoring": "pairwise"} for name, kind in IMPORTED_TYPES.items()}
    return {**generated, **imported}


def resolve_families(spec: str | Iterable[str] | None, what: str = "families") -> tuple[str, ...]:
    """Family names from a comma-separated list or an iterable of names, where "core" stands for
    the paper's set, "hard" for the hard flips and "all" for every registered family but the ``OPT_IN`` ones (built
    only when named); None -> the core set. Registry order,
    no duplicates. DataError naming ``what`` and listing the valid names for an unknown name."""
    if spec is None:
        return CORE
    names = spec.split(",") if isinstance(spec, str) else [str(n) for n in spec]
    names = [n.strip() for n in names if n.strip()]
    wanted: set[str] = set()
    for name in names:
        if name in GROUPS:
            wanted.update(GROUPS[name])
        elif name == "all":
            wanted.update(n for n in FAMILIES if n not in OPT_IN)
        elif name in FAMILIES:
            wanted.add(name)
        else:
            raise DataError(f"{what}: unknown family {name!r}; valid: {', '.join(GROUP_NAMES + tuple(FAMILIES))}")
    if not wanted:
        raise DataError(f"{what}: no family given; valid: {', '.join(GROUP_NAMES + tuple(FAMILIES))}")
    return tuple(n for n in FAMILIES if n in wanted)
