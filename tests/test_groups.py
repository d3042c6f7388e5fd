"""2x2 group mining: hand cases, and the indexed miner against an independent brute-force loop."""
from __future__ import annotations

import hashlib
import itertools
import random

from lgip_dataset.selection.groups import GROUP_TYPES, caption_slots, flippable, mine_groups

PAIRS = [
    ("a red bus parked on the street", "a blue bus parked on the street", "color"),
    ("A red bus parked on the street.", "an orange bus parked on the street", "color"),  # a/an, case, period
    ("a dog on a couch", "a cat on a couch", "object"),
    ("two dogs on a couch", "three dogs on a couch", "count"),
    ("a cat to the left of a dog", "a cat to the right of a dog", "spatial"),
    ("a cat in front of a car", "a cat behind a car", "spatial"),
    ("a street before the rain", "a street after the rain", "temporal"),
    ("a red car parked on the street", "a gray car parked on the street", "color"),
    ("a plate of broccoli", "a plate of carrots", "object"),  # uncountable: never inserted by a flip, still a contradiction
]
NOT_PAIRS = [
    ("a dog on a couch", "a puppy on a couch"),  # puppy is a dog: no flip
    ("a red bus on the street", "a blue car on the street"),  # two words differ
    ("one dog on a couch", "two dogs on a couch"),  # the noun's number differs too
    ("a hot dog on a plate", "a hot cat on a plate"),  # "hot dog" is one unit
    ("a gray bus", "a grey bus"),  # one color group
    ("a gray car parked on the street", "a silver car parked on the street"),  # near colors: no contradiction
    ("an orange on a plate", "a red on a plate"),  # fruit, not a color
    ("a cat in front of a tv", "a cat behind a tv"),  # a thing people face: front and behind are no flip
    ("a dog before the race", "a dog after the race"),  # a still image cannot tell
]


def _groups(a, b):
    return mine_groups([("c1", 1, a), ("c2", 2, b)])


def test_hand_pairs():
    for a, b, typ in PAIRS:
        (group,) = _groups(a, b)
        assert group["type"] == typ and (group["caption_a"], group["caption_b"]) == (a, b)
        assert a[group["span_start"]:].startswith(group["word_a"]) and group["word_a"] != group["word_b"]
    for a, b in NOT_PAIRS:
        assert _groups(a, b) == []
    assert mine_groups([("c1", 1, "a red bus"), ("c2", 1, "a blue bus")]) == []  # same image


def _brute_force(captions, seed):
    """Every pair of captions of different images, compared slot by slot; best pair per key."""
    slots = [caption_slots(text) for _, _, text in captions]
    best = {}
    for x, y in itertools.combinations(range(len(captions)), 2):
        (ca, ia, _), (cb, ib, _) = captions[x], captions[y]
        sa, sb = slots[x], slots[y]
        if ia == ib or len(sa) != len(sb):
            continue
        diff = [k for k in range(len(sa)) if sa[k].word != sb[k].word]
        if len(diff) != 1 or not flippable(sa[diff[0]], sb[diff[0]]):
            continue
        if ia > ib:
            x, y, ia, ib, ca, cb = y, x, ib, ia, cb, ca
        key = (sa[diff[0]].type, ia, ib)
        rank = hashlib.sha256(f"{seed}\x1f{ca}\x1f{cb}".encode()).digest()
        if key not in best or rank < best[key][0]:
            best[key] = (rank, (ca, cb))
    return {k: v[1] for k, v in best.items()}


def test_index_matches_brute_force():
    rng = random.Random(0)
    templates = ["a {c} {n} {s} the {o}", "{q} {n}s {s} a {o}", "the {n} {s} the {o} {t} the rain"]
    fill = dict(c=["red", "blue", "white", "grey", "gray"], n=["dog", "cat", "bus", "puppy"],
                s=["next to", "in front of", "behind", "to the left of", "to the right of", "on"],
                o=["couch", "table", "car"], q=["two", "three", "several"], t=["before", "after"])
    captions = []
    for i in range(160):
        text = rng.choice(templates).format(**{k: rng.choice(v) for k, v in fill.items()})
        captions.append((f"c{i}", rng.randrange(40), text))
    for seed in (0, 1):
        mined = mine_groups(captions, seed=seed)
        assert {(g["type"], g["image_a"], g["image_b"]): (g["caption_a_id"], g["caption_b_id"]) for g in mined} \
            == _brute_force(captions, seed)
        assert len({g["group_id"] for g in mined}) == len(mined)
        assert [GROUP_TYPES.index(g["type"]) for g in mined] == sorted(GROUP_TYPES.index(g["type"]) for g in mined)
    assert {g["type"] for g in mine_groups(captions)} == set(GROUP_TYPES)
