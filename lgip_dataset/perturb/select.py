"""Choosing up to k variants: round-robin over families, and over sites within a family."""
from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from lgip_dataset.perturb.variant import Variant


def text_key(text: str) -> str:
    """What makes two strings the same text: case and whitespace are ignored."""
    return " ".join(text.split()).casefold()


def _next_new(sites: deque[Iterator[Variant]], seen: set[str]) -> Variant | None:
    """The next unseen variant of one family, taking sites in turn; None when all are exhausted."""
    while sites:
        variant = next(sites[0], None)
        if variant is None:
            sites.popleft()
            continue
        sites.rotate(-1)
        key = text_key(variant.text)
        if key not in seen:
            seen.add(key)
            return variant
    return None


def round_robin(families: list[list[Iterator[Variant]]], k: int, caption: str,
                seen: set[str] | None = None) -> list[Variant]:
    """Up to ``k`` variants, one family at a time in the given order, so every family that has a
    candidate is represented when k >= the number of such families. Variants equal to the caption,
    to an earlier variant or to a text key in ``seen`` (updated in place) are skipped."""
    seen = set() if seen is None else seen
    seen.add(text_key(caption))
    out: list[Variant] = []
    active = [deque(sites) for sites in families if sites]
    while active and len(out) < k:
        for sites in active:
            if len(out) < k and (variant := _next_new(sites, seen)) is not None:
                out.append(variant)
        active = [sites for sites in active if sites]
    return out
