"""The rules hard families 2.5.0, 2.6.0, 2.10.0, 2.12.0 and 2.13.0 took from blind-judged draws (2.4.0, 2.5.0; 2.8.0 and
2.9.0; every development round; the 2.12.0 draws): each named failure is no longer a candidate, while a caption without the word that makes it
fail still takes the same flip (so no test passes because the flip was never made), unless 2.12.0 left the swap out
everywhere."""
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
    # 2.10.0, from the sealed draws of 2.8.0 and 2.9.0 (rounds 10 and 11)
    ("hard_count", "A street sign and fire hydrant sit next to a sidewalk",
     "Several street signs and fire hydrant sit next to a sidewalk",
     "A street sign and a fire hydrant sit next to a sidewalk", "Several street signs and a fire hydrant sit next to a sidewalk"),
    ("hard_count", "A woman and man talking underneath an umbrella", "Two women and man talking underneath an umbrella",
     "A woman and men talking underneath an umbrella", "Two women and men talking underneath an umbrella"),
    ("hard_count", "A tree with a donut as an ornament", "A tree with two donuts as an ornament",
     "A tree with a donut on a branch", "A tree with two donuts on a branch"),
    ("hard_count", "Two men dressed as animals entertaining a group of children.",
     "A man dressed as animals entertaining a group of children.",
     "Two men dressed up entertaining a group of children.", "A man dressed up entertaining a group of children."),
    ("hard_count", "A woman walking while carrying bananas on her hat.", "A woman walking while a carrying banana on her hat.",
     "A woman walking while ripe bananas sit on her hat.", "A woman walking while a ripe banana sits on her hat."),
    ("hard_count", "Various plates of food that include hashbrowns, waffles and grits.",
     "A various plate of food that include hashbrowns, waffles and grits.",
     "Small plates of food that include hashbrowns, waffles and grits.", "A small plate of food that include hashbrowns, waffles and grits."),
    ("hard_count", "Two men walking opposite directions on a staircase.", "A man walking opposite directions on a staircase.",
     "Two men walking down a staircase.", "A man walking down a staircase."),
    ("hard_count", "Two men guiding cows while behind on horses.", "A man guiding cows while behind on horses.",
     "Two men guiding cows while behind on a horse.", "A man guiding cows while behind on a horse."),
    ("hard_count", "some books shelves a television and a table", "a book shelves a television and a table",
     "some books a television and a table", "a book a television and a table"),
    ("hard_count", "A person is holding up a hair dryer in the bathroom.", "Two people are holding up a hair dryer in the bathroom.",
     "A person is standing by a hair dryer in the bathroom.", "Two people are standing by a hair dryer in the bathroom."),
    ("hard_color", "A black-and white picture of a rack full of doughnuts.", "A black-and black picture of a rack full of doughnuts.",
     "A black-and white picture of a rack full of doughnuts.", "A black-and gray picture of a rack full of doughnuts."),
    ("hard_color", "A woman with green hair standing beside a brow and white horse",
     "A woman with green hair standing beside a brow and brown horse",
     "A woman with green hair standing beside a black and white horse", "A woman with green hair standing beside a brown and white horse"),
    ("hard_object", "A small boy in batting stance on a sandlot.", "A small baby in batting stance on a sandlot.",
     "A small boy in batting stance on a sandlot.", "A small girl in batting stance on a sandlot."),
    ("hard_object", "Several rows of cooking hot dogs on a grill.", "Several rows of cooking cakes on a grill.",
     "Several rows of hot dogs on a table.", "Several rows of cakes on a table."),
    ("hard_object", "Two cooked hot dogs on a plate with parsley.", "Two cooked donuts on a plate with parsley.",
     "Two hot dogs on a plate with parsley.", "Two donuts on a plate with parsley."),
    ("hard_object", "a conveyor belt with a lot of donuts getting fried up", "a conveyor belt with a lot of bananas getting fried up",
     "a conveyor belt with a lot of donuts on it", "a conveyor belt with a lot of bananas on it"),
    ("hard_object", "A cat drinking out of the faucet of a sink.", "A cat drinking out of the faucet of a refrigerator.",
     "A cat sitting next to a sink.", "A cat sitting next to a refrigerator."),
    ("hard_object", "A five car blue and white train with passengers", "A five car blue and white bus with passengers",
     "A long blue and white train with passengers", "A long blue and white bus with passengers"),
    ("hard_object", "A brown colored cat is on top of a tall gray cabinet.", "A brown colored dog is on top of a tall gray cabinet.",
     "A brown colored cat is on top of a tall gray table.", "A brown colored dog is on top of a tall gray table."),
    ("hard_object", "Couple of young bears playing together on tree limbs", "Couple of young zebras playing together on tree limbs",
     "Couple of young bears playing together on the grass", "Couple of young zebras playing together on the grass"),
    ("hard_object", "Several sheep with their front hooves on a fence.", "Several cows with their front hooves on a fence.",
     "Several sheep standing by a fence.", "Several cows standing by a fence."),
    ("hard_object", "Two elephants are in the middle of a circus ring.", "Two giraffes are in the middle of a circus ring.",
     "Two elephants are in the middle of a field.", "Two giraffes are in the middle of a field."),
    ("hard_object", "Two skiers heading up the side of a mountain", "Two skiers heading up the side of a street",
     "Two people heading up the side of a mountain", "Two people heading up the side of a street"),
    ("hard_object", "Young person on the street skateboarding wearing a helmet.", "Young person on the beach skateboarding wearing a helmet.",
     "Young person on the street running wearing a helmet.", "Young person on the beach running wearing a helmet."),
    ("hard_object", "a small child standing on a rock outdoors in a forest wearing a raincoat, rain boots and an umbrella.",
     "a small child standing on a rock outdoors in a desert wearing a raincoat, rain boots and an umbrella.",
     "a small child standing on a rock outdoors in a forest wearing a hat.", "a small child standing on a rock outdoors in a desert wearing a hat."),
    ("hard_object", "a woman on some grass is throwing a green frisbee", "a woman on some water is throwing a green frisbee",
     "a woman on some grass is holding a green umbrella", "a woman on some water is holding a green umbrella"),
    ("hard_object", "A lifeguard helps a boarder that overturned in the water.", "A lifeguard helps a boarder that overturned in the grass.",
     "A man helps a boarder that fell in the water.", "A man helps a boarder that fell in the grass."),
    # 2.13.0, from the 2.12.0 draws (development and sealed)
    ("hard_object", "A woman in high heeled shoes on a yellow skateboard.", "A man in high heeled shoes on a yellow skateboard.",
     "A woman in white shoes on a yellow skateboard.", "A man in white shoes on a yellow skateboard."),
    ("hard_object", "A young man in a suit and tie with a beer in his hand.", "A young boy in a suit and tie with a beer in his hand.",
     "A young man in a suit and tie with a phone.", "A young boy in a suit and tie with a phone."),
    ("hard_object", "man crosses skis while jumping in the air", "man crosses skateboards while jumping in the air",
     "man holds skis while jumping in the air", "man holds skateboards while jumping in the air"),
    ("hard_object", "A woman that is standing in the water next to a surfboard.",
     "A woman that is standing in the water next to a skateboard.",
     "A woman that is standing in the yard next to a surfboard.", "A woman that is standing in the yard next to a skateboard."),
    ("hard_object", "a brown breakfast bar in a large kitchen", "a brown breakfast bar in a large bathroom",
     "a brown cat in a large kitchen", "a brown cat in a large bathroom"),
    ("hard_object", "A bathroom with blue walls, a white commode and a contemporary white sink without faucets.",
     "A kitchen with blue walls, a white commode and a contemporary white sink without faucets.",
     "A bathroom with blue walls, a white cabinet and a contemporary white sink without faucets.",
     "A kitchen with blue walls, a white cabinet and a contemporary white sink without faucets."),
    ("hard_object", "Two birds sit on snow covered branches next to small, green fruits.",
     "Two birds sit on grass covered branches next to small, green fruits.",
     "Two birds sit on branches above the snow next to small, green fruits.",
     "Two birds sit on branches above the grass next to small, green fruits."),
    ("hard_object", "A photo of a stove with omelet in one pan and ham in another.",
     "A photo of a microwave with omelet in one pan and ham in another.",
     "A photo of a stove with a clock above it.", "A photo of a microwave with a clock above it."),
    ("hard_object", "All of the umbrellas are folded up.", "All of the suitcases are folded up.",
     "All of the umbrellas are on the ground.", "All of the suitcases are on the ground."),
    ("hard_object", "A man is plowing the field in preparation.", "A man is plowing the beach in preparation.",
     "A man is walking in the field in the morning.", "A man is walking in the beach in the morning."),
    ("hard_color", "A horse with a white spot on it's forehead is visible through the leaves.",
     "A horse with a red spot on it's forehead is visible through the leaves.",
     "A horse with a white bridle on it's head is visible through the leaves.",
     "A horse with a red bridle on it's head is visible through the leaves."),
    ("hard_color", "Person in a green park fling a kite.", "Person in a pink park fling a kite.",
     "Person in a green shirt fling a kite.", "Person in a pink shirt fling a kite."),
    ("hard_color", "A motorcycle parked on a sidewalk portrayed in black and white.",
     "A motorcycle parked on a sidewalk portrayed in black and yellow.",
     "A motorcycle parked on a sidewalk painted in black and white.",
     "A motorcycle parked on a sidewalk painted in black and yellow."),
    ("hard_color", "A black and white scene with two couples under umbrellas and rain jackets sitting at a stadium.",
     "A black and pink scene with two couples under umbrellas and rain jackets sitting at a stadium.",
     "A black and white bus with two couples under umbrellas and rain jackets sitting at a stadium.",
     "A black and pink bus with two couples under umbrellas and rain jackets sitting at a stadium."),
    ("hard_color", "a brown and black are sitting on the floor.", "a brown and pink are sitting on the floor.",
     "a brown and black bag is sitting on the floor.", "a brown and pink bag is sitting on the floor."),
    ("hard_color", "an orange cut in half sitting beside a knife", "a white cut in half sitting beside a knife",
     "an orange cup sitting beside a knife", "a white cup sitting beside a knife"),
    ("hard_color", "four soccer players in white uniforms one in orange", "four soccer players in orange uniforms one in orange",
     "four soccer players in white uniforms one in blue", "four soccer players in orange uniforms one in blue"),
    ("hard_color", "A street clock that has been weathered to a mint green color",
     "A street clock that has been weathered to a mint red color",
     "A street clock that has been painted a dark green color", "A street clock that has been painted a dark red color"),
    ("hard_count", "A seagull standing on a wooden beam with something red in it's beak.",
     "Two seagulls standing on a wooden beam with something red in it's beak.",
     "A seagull standing on a wooden beam with something red nearby.",
     "Two seagulls standing on a wooden beam with something red nearby."),
    # 2.13.0, from its development draw (val2017, 300 flips)
    ("hard_object", "Horse with blinders on walking through wooded area", "Cow with blinders on walking through wooded area",
     "Horse with a rider on walking through wooded area", "Cow with a rider on walking through wooded area"),
    ("hard_object", "a traffic light above a city street", "a fire hydrant above a city street",
     "a traffic light on a city street", "a fire hydrant on a city street"),
    ("hard_object", "Several rows of Crush soda in bottles in a refrigerator", "Several rows of Crush soda in cups in a refrigerator",
     "Several rows of Crush juice in bottles on a table", "Several rows of Crush juice in cups on a table"),
    ("hard_object", "Vegetables spill out of a sandwich sitting in a box.", "Vegetables spill out of a pizza sitting in a box.",
     "Vegetables next to a sandwich sitting in a box.", "Vegetables next to a pizza sitting in a box."),
    ("hard_object", "A polar bear standing on a large rock with its mouth wide open.",
     "A giraffe standing on a large rock with its mouth wide open.",
     "A polar bear standing in a large pen with its mouth wide open.", "A giraffe standing in a large pen with its mouth wide open."),
    ("hard_object", "A bowl full of broth and pieces of broccoli with a spoon and fork.",
     "A plate full of broth and pieces of broccoli with a spoon and fork.",
     "A bowl full of rice and pieces of broccoli with a spoon and fork.",
     "A plate full of rice and pieces of broccoli with a spoon and fork."),
    ("hard_object", "A dish with meat and vegetables set on a bed of rice.", "A dish with meat and vegetables set on a couch of rice.",
     "A cat with a toy set on a bed in the room.", "A cat with a toy set on a couch in the room."),
    ("hard_object", "A lush green forest filled with lots of trees.", "A lush green field filled with lots of trees.",
     "A lush green forest filled with lots of deer.", "A lush green field filled with lots of deer."),
    ("hard_color", "A black cat with white stomach takes a pose.", "A black cat with yellow stomach takes a pose.",
     "A black cat with white collar takes a pose.", "A black cat with yellow collar takes a pose."),
    ("hard_color", "Three zebras eat hay in black and white.", "Three zebras eat hay in black and green.",
     "Three zebras eat hay by a black and white fence.", "Three zebras eat hay by a black and green fence."),
    ("hard_color", "A black and white perspective on of a street sign and a traffic light.",
     "A red and white perspective on of a street sign and a traffic light.",
     "A black and white view on of a red street sign and a traffic light.",
     "A black and white view on of a blue street sign and a traffic light."),
    ("hard_count", "Three people, two wearing blue shirts, are on the tennis court.",
     "Two people, two wearing blue shirts, are on the tennis court.",
     "Three people, wearing blue shirts, are on the tennis court.",
     "Two people, wearing blue shirts, are on the tennis court."),
    # 2.13.0, from its second development draw (val2017, 300 flips)
    ("hard_object", "A double parking meter stands on the street.", "A double sign stands on the street.",
     "A tall parking meter stands on the street.", "A tall sign stands on the street."),
    ("hard_object", "A Chinese sign with an image of a parent and child and a bicycle.",
     "A Chinese sign with an image of a parent and woman and a bicycle.",
     "A Chinese sign with an image of a dog and child and a bicycle.", "A Chinese sign with an image of a dog and woman and a bicycle."),
    ("hard_object", "A corner of a living room with a TV in it.", "A corner of a bathroom with a TV in it.",
     "A corner of a living room with a plant in it.", "A corner of a bathroom with a plant in it."),
    ("hard_object", "A man on ice skates sliding across a ramp in the snow.", "A man on ice skates sliding across a ramp in the dirt.",
     "A man on a bike sliding across a ramp in the snow.", "A man on a bike sliding across a ramp in the dirt."),
    ("hard_object", "Three wild turkeys on top of the dried pasture.", "Three wild turkeys on top of the dried beach.",
     "Three wild turkeys on top of the big pasture.", "Three wild turkeys on top of the big beach."),
    ("hard_color", "A man takes a black and white selfie with a phone.", "A man takes a pink and white selfie with a phone.",
     "A man takes a black and white bag with a phone.", "A man takes a pink and white bag with a phone."),
    ("hard_color", "A lush green banana tree with a big bunch of bananas.", "A lush yellow banana tree with a big bunch of bananas.",
     "A dark green banana tree with a big bunch of bananas.", "A dark yellow banana tree with a big bunch of bananas."),
    ("hard_color", "a brown white and black bear and some trees", "a red white and black bear and some trees",
     "a brown white and black bus and some trees", "a red white and black bus and some trees"),
    ("hard_count", "Two brown bears interacting in a rocky area.", "A brown bear interacting in a rocky area.",
     "Two brown bears walking in a rocky area.", "A brown bear walking in a rocky area."),
    ("hard_count", "a person sitting on a surf board on a beach", "a group of people sitting on a surf board on a beach",
     "a person sitting on a towel on a beach", "a group of people sitting on a towel on a beach"),
    # 2.13.1, found by the fuzz run and in the 2.13.0 Karpathy-only build: a bare plural's modifiers joined to it
    ("hard_count", "Crisp, delicious apples hang on the dying branches of the tree.",
     "A crisp, delicious apple hangs on the dying branches of the tree.",
     "Ripe apples hang on the dying branches of the tree.", "A ripe apple hangs on the dying branches of the tree."),
]


# twins whose swap is gone with its class or place in 2.12.0 (objects.json swap_classes, places.json: a train for a bus,
# water, a mouse, a refrigerator, foods across fruit, sweets and savoury dishes): neither the failure nor the twin is made
LEFT_OUT = {"A green and yellow bus is driving past a house.", "A black dog with yellow eyes sitting in the water.",
            "Four mice arranged on a desk.", "Several rows of cakes on a table.", "Two donuts on a plate with parsley.",
            "a conveyor belt with a lot of bananas on it", "A cat sitting next to a refrigerator.",
            "A long blue and white bus with passengers", "a woman on some water is holding a green umbrella",
            "A man helps a boarder that fell in the grass."}
SOUND = [case for case in CASES if case[4] not in LEFT_OUT]
GONE = [case for case in CASES if case[4] in LEFT_OUT]


@pytest.mark.parametrize("family,caption,flip,control,control_flip", SOUND, ids=[c[2][:40] for c in SOUND])
def test_a_judged_failure_is_no_candidate_but_its_sound_twin_is(family, caption, flip, control, control_flip):
    assert flip not in _candidates(family, caption)
    assert control_flip in _candidates(family, control)


@pytest.mark.parametrize("family,caption,flip,control,control_flip", GONE, ids=[c[2][:40] for c in GONE])
def test_a_judged_failure_whose_swap_is_left_out_is_made_nowhere(family, caption, flip, control, control_flip):
    assert len(GONE) == len(LEFT_OUT)
    assert flip not in _candidates(family, caption)
    assert control_flip not in _candidates(family, control)


def test_a_human_caption_with_a_before_a_vowel_u_gets_no_hard_flip():
    """"A person with a umbrella" and "A women tennis player" are broken English already; "a unicorn", "a used car"
    and "a sports car" are not."""
    for caption, broken in (("A person with a umbrella and a glass at a table.", True),
                            ("A person with an umbrella and a glass at a table.", False),
                            ("A child riding a unicorn toy near a used car.", False),
                            ("A women tennis player throwing the ball up for a serve.", True),
                            ("A woman tennis player throwing the ball up for a serve.", False),
                            ("A sports car parked beside two women.", False)):
        assert hard_sites.broken_caption(CaptionContext(caption, LEX)) is broken
