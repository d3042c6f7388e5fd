"""The registry of variant families: each has a name, a kind and a generate function.

A family's ``generate(ctx, rng)`` (``rng``: its own seeded ``KeyedRandom``) returns its *sites*
(one per place it can edit, or one for all paraphrases), each an iterator of candidate
:class:`Variant` in seeded preference order; the selector pulls from them lazily. Adding a family
= a new module that calls :func:`register` (imported from ``families/__init__.py``); the existing
families are untouched, and so are their outputs (each family has its own random stream).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from lgip_dataset.perturb.variant import Variant

KINDS = ("paraphrase", "flip")
Generate = Callable[["CaptionContext", "KeyedRandom"], list[Iterator[Variant]]]  # noqa: F821


@dataclass(frozen=True)
class Family:
    name: str
    kind: str
    generate: Generate


FAMILIES: dict[str, Family] = {}


def register(name: str, kind: str) -> Callable[[Generate], Generate]:
    """Decorator: register ``generate`` as the family ``name`` of ``kind``."""
    if kind not in KINDS:
        raise ValueError(f"family kind must be one of {KINDS}, got {kind!r}")

    def deco(generate: Generate) -> Generate:
        if name in FAMILIES:
            raise ValueError(f"family {name!r} is already registered")
        FAMILIES[name] = Family(name, kind, generate)
        return generate
    return deco
