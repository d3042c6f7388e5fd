"""Caption statistics counted from a few hand-written captions, for tests of the families that ask them
(hard_relation, relation, binding, spatial): each line is one caption of its own image, so a test says
exactly what was seen."""
from __future__ import annotations

from lgip_dataset.perturb.plausibility import FoldedCounts, count_captions

SEEN = """A man leading a horse.
A woman leading a horse.
A man standing on a bench.
A woman standing on a bench.
A boy lying on a bench.
A cat under a laptop.
A kitten under a laptop.
A dog chasing a cat.
A cat chasing a dog.
A puppy chasing a cat.
A kitten chasing a dog.
A man pushing a boy.
A boy pushing a man.
A woman holding a baby.
A girl in a white shirt.
A boy in a white shirt.
A girl with a red frisbee.
A dog with a red frisbee.
A red apple on a table.
A white plate on a table.
A white car.
A red truck.
A red cat.
An orange bus.
A small dog.
A large cat.
Two cats on a bed.
Two cats on a couch.
A cat under a car.
A kitten under a car.
A cat on top of a table.
A lamp below a bed.
A dog outside a car.
A man behind a building.
A man in front of a building.
A man behind a car.
A dog in front of a fence.
A car driving on a street.
A man sitting on a beach.
A woman sitting on a beach.
A bird standing on a bench.
A cat standing on a bench.
A man standing on a horse.
A man riding an elephant.
A man riding a boy.
A man pushing a horse.
A man outside a market.
A dog outside a market.
Two plates and a cup.
Two cups and a plate."""


def seen_statistics(lines: str = SEEN) -> FoldedCounts:
    """Folded counts of ``lines``, one caption per line, each of its own image."""
    return count_captions(enumerate(lines.splitlines()))
