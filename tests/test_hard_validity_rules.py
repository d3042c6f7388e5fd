"""The rules hard families 2.5.0 and 2.6.0 took from the blind-judged 2.4.0 and 2.5.0 draws: each named failure
is no longer a candidate, while a caption without the word that makes it fail still takes the same flip (so no test passes
because the flip was never made)."""
from __future__ import annotations

import pytest

from lgip_dataset.perturb.context import CaptionContext
from lgip_dataset.perturb.families import hard, hard_sites
from lgip_dataset.perturb.lexicon import load_lexicon
from lgip_dataset.perturb.seeding import KeyedRandom

LEX = load_lexicon()


def _candidates(family: str, caption: str) -> set[str]:
    """Every candidate text of ``family`` for ``caption`` that its kin rules let through (objects: the
    swap class, the words that keep a noun, ambiguous forms; counts and colours: their sites' rules)."""
    ctx = CaptionContext(caption, LEX)
    if hard_sites.broken_caption(ctx):
        return set()
    texts = set()
    for site in hard.CANDIDATES[family](ctx, KeyedRandom(0)):
        for variant in site:
            first, end = hard._tokens_of(ctx, variant.span)
            if hard.KIN[family](ctx, variant, first, end) is not None:
                texts.add(variant.text)
    return texts


# (family, failing caption, its judged flip, the same caption without the cause, the flip then made)
CASES = [
    ("hard_count", "this is a woman pushing some luggage at the airport",
     "this is a woman pushing a luggage at the airport",
     "this is a woman pushing some suitcases at the airport", "this is a woman pushing a suitcase at the airport"),
    ("hard_count", "Three men each holding something and posing for a picture.",
     "A man each holding something and posing for a picture.",
     "Three men holding something and posing for a picture.", "A man holding something and posing for a picture."),
    ("hard_count", "Many parking meters line the street near a building under construction.",
     "A parking meter lines the street near a building under construction.",
     "Many parking meters stand near a building under construction.",
     "A parking meter stands near a building under construction."),
    ("hard_count", "A group of people gather around a glass drinking wine.",
     "A person gathers around a glass drinking wine.",
     "A group of people stand near a glass drinking wine.", "A person stands near a glass drinking wine."),
    ("hard_count", "Two parking meters with the light of the sunset reflecting off one.",
     "A parking meter with the light of the sunset reflecting off one.",
     "Two parking meters with the light of the sunset reflecting off a car.",
     "A parking meter with the light of the sunset reflecting off a car."),
    ("hard_count", "Four people mounted on horses riding on the beach.",
     "A person mounted on horses riding on the beach.",
     "Four people standing near horses on the beach.", "A person standing near horses on the beach."),
    ("hard_object", "A green and yellow train is driving on the track.",
     "A green and yellow bus is driving on the track.",
     "A green and yellow train is driving past a house.", "A green and yellow bus is driving past a house."),
    ("hard_object", "A group of horses are crossing a finish line",
     "A group of sheep are crossing a finish line",
     "A group of horses are crossing a field", "A group of sheep are crossing a field"),
    ("hard_object", "a big airplane that is on a runway", "a big airplane that is on a street",
     "a big truck that is on a runway", "a big truck that is on a street"),
    ("hard_object", "A windsurfer watches people kite surfing at the beach",
     "A windsurfer watches people kite surfing at the park",
     "A man watches people flying kites at the beach", "A man watches people flying kites at the park"),
    ("hard_object", "The bikes are all parked beside the sign.", "The motorcycles are all parked beside the sign.",
     "The bicycles are all parked beside the sign.", "The motorcycles are all parked beside the sign."),
    ("hard_object", "signs hanging from a metal pole bordering a street.",
     "traffic lights hanging from a metal pole bordering a street.",
     "signs hanging from a metal pole bordering a street.", "parking meters hanging from a metal pole bordering a street."),
    ("hard_object", "A sandwich with meat sitting next to grapes and an apple.",
     "A carrot with meat sitting next to grapes and an apple.",
     "A sandwich with meat sitting next to grapes and an apple.", "A pizza with meat sitting next to grapes and an apple."),
    ("hard_object", "Cat sitting up with a fake tie around its neck.", "Cat sitting up with a fake hat around its neck.",
     "Cat sitting up with a fake tie on the table.", "Cat sitting up with a fake hat on the table."),
    # 2.6.0, from the 2.5.0 draw
    ("hard_count", "A person sitting on a stool on the street.", "A group of people sitting on a stool on the street.",
     "A person sitting on a bench on the street.", "A group of people sitting on a bench on the street."),
    ("hard_count", "People at a public event using cell phones.", "A person at a public event using cell phones.",
     "People at a public event near cell phones.", "A person at a public event near cell phones."),
    ("hard_count", "three people riding on the backs of elephants", "a person riding on the backs of elephants",
     "three people standing by the backs of elephants", "a person standing by the backs of elephants"),
    ("hard_count", "a little black bird with a big colorful beak sitting on a branch",
     "two little black birds with a big colorful beak sitting on a branch",
     "a little black bird near a big colorful flower sitting on a branch",
     "two little black birds near a big colorful flower sitting on a branch"),
    ("hard_count", "Crisp, delicious apples hang on the branches of the tree.",
     "Crisp, a delicious apple hangs on the branches of the tree.",
     "Delicious apples hang on the branches of the tree.", "A delicious apple hangs on the branches of the tree."),
    ("hard_object", "A cat is observing the dishwasher in the kitchen.",
     "A cat is observing the dishwasher in the bathroom.",
     "A cat is observing the sink in the kitchen.", "A cat is observing the sink in the bathroom."),
    ("hard_object", "A black cat with yellow eyes sitting in the grass.",
     "A black cat with yellow eyes sitting in the water.",
     "A black dog with yellow eyes sitting in the grass.", "A black dog with yellow eyes sitting in the water."),
    ("hard_object", "A vase with purple irises sitting next to a ceramic pitcher.",
     "A lamp with purple irises sitting next to a ceramic pitcher.",
     "A vase sitting next to a ceramic pitcher.", "A lamp sitting next to a ceramic pitcher."),
    ("hard_object", "Four computers and keyboards arranged on a desk.", "Four computers and mice arranged on a desk.",
     "Four keyboards arranged on a desk.", "Four mice arranged on a desk."),
    ("hard_object", "Bananas and apples are being sold at the market.",
     "Bananas and oranges are being sold at the market.",
     "A man and apples are seen at the market.", "A man and oranges are seen at the market."),
    ("hard_color", "A white bowl of green granny smith apples.", "A white bowl of purple granny smith apples.",
     "A white bowl of green apples.", "A white bowl of red apples."),
    ("hard_color", "A table that has plates of food, cups, and silver ware on it.",
     "A table that has plates of food, cups, and green ware on it.",
     "A table that has plates of food, cups, and silver forks on it.",
     "A table that has plates of food, cups, and green forks on it."),
    ("hard_color", "Three different vases containing several red tulip blooms.",
     "Three different vases containing several gray tulip blooms.",
     "Three different vases containing several red tulip blooms.",
     "Three different vases containing several yellow tulip blooms."),
    ("hard_color", "A blue moon beer is sitting on a desk.", "A red moon beer is sitting on a desk.",
     "A blue beer can is sitting on a desk.", "A red beer can is sitting on a desk."),
]


@pytest.mark.parametrize("family,caption,flip,control,control_flip", CASES, ids=[c[2][:40] for c in CASES])
def test_a_judged_failure_is_no_candidate_but_its_sound_twin_is(family, caption, flip, control, control_flip):
    assert flip not in _candidates(family, caption)
    assert control_flip in _candidates(family, control)


def test_a_human_caption_with_a_before_a_vowel_u_gets_no_hard_flip():
    """"A person with a umbrella" is broken English already; "a unicorn" and "a used car" are not."""
    for caption, broken in (("A person with a umbrella and a glass at a table.", True),
                            ("A person with an umbrella and a glass at a table.", False),
                            ("A child riding a unicorn toy near a used car.", False)):
        assert hard_sites.broken_caption(CaptionContext(caption, LEX)) is broken
