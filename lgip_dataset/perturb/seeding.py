"""Per-caption randomness from a stable hash, so outputs never depend on order, process or platform."""
from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import TypeVar

T = TypeVar("T")
_MASK = (1 << 64) - 1


def _sha_int(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest(), "big")


def caption_key(seed: int, caption: str) -> int:
    """sha256 of (seed, caption) as an integer: the same on every machine and run."""
    return _sha_int(f"{seed}\x1f{caption}")


@lru_cache(maxsize=None)
def _name_key(family: str) -> int:
    return _sha_int(family)


def family_key(caption_key: int, family: str) -> int:
    """A per-family key derived from :func:`caption_key`: seeds the family's RNG and orders the families."""
    return caption_key ^ _name_key(family)


class KeyedRandom:
    """A splitmix64 random stream keyed by an integer. Free to create (seeding a Mersenne Twister
    costs more than most families' whole work on a caption) and identical on every platform and
    Python version."""
    __slots__ = ("_state",)

    def __init__(self, key: int):
        self._state = key & _MASK

    def _next(self) -> int:
        self._state = x = (self._state + 0x9E3779B97F4A7C15) & _MASK
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
        return x ^ (x >> 31)

    def randrange(self, start: int, stop: int) -> int:
        """An integer in [start, stop) (modulo bias below 2**-50 for the small ranges used here)."""
        return start + self._next() % (stop - start)


def shuffled(items: Sequence[T], rng: KeyedRandom) -> Iterator[T]:
    """The items in a seeded random order, drawn lazily (only what is consumed costs anything)."""
    pool, randrange = list(items), rng.randrange
    for i in range(len(pool)):
        j = randrange(i, len(pool))
        pool[i], pool[j] = pool[j], pool[i]
        yield pool[i]


def single_sites(variants: Sequence[T], rng: KeyedRandom) -> list[Iterator[T]]:
    """One site per variant (each site has exactly one candidate), in a seeded random order."""
    return [iter((v,)) for v in shuffled(variants, rng)]
