"""Hand-written tricky captions with their expected flip sites and paraphrases.

A flip *site* is (type, original word(s), start offset). Each caption lists ALL its sites, so a
site that should not exist (the "dog" of "hot dog", the color "orange" of the fruit, the "one" of
"one of the") fails the test as surely as a missing one. Replacement words are seeded, so they are
checked by properties (number, case, article agreement, no synonyms), except for the golden cases.
"""
from __future__ import annotations

import functools

import inflect
import pytest

from lgip_dataset.perturb import Perturber
from lgip_dataset.perturb.invariants import flip_problems, paraphrase_problems
from lgip_dataset.perturb.lexicon import load_lexicon

ALL = Perturber(k_same=100, k_diff=10_000)  # every candidate, to see all sites
LEX = load_lexicon()
PLURALS = {g.plural for g in LEX.groups.values()}
SINGULARS = {g.singular for g in LEX.groups.values()}
INFLECT = inflect.engine()

# (caption, sites) - sites: (type, original, start)
SITES = [
    ("Two dogs playing in the snow.", [("count", "Two", 0), ("object", "dogs", 4)]),
    ("An elephant standing in a field.", [("object", "elephant", 3)]),
    ("A dog on a couch", [("object", "dog", 2), ("object", "couch", 11)]),
    ("A hot dog with mustard on a plate.", [("object", "hot dog", 2), ("object", "plate", 28)]),
    ("Two hot dogs on a plate", [("count", "Two", 0), ("object", "hot dogs", 4), ("object", "plate", 18)]),
    ("A teddy bear sitting on a bed.", [("object", "teddy bear", 2), ("object", "bed", 26)]),
    ("A polar bear swimming in the water.", [("object", "polar bear", 2)]),
    ("A stop sign on a street corner.", [("object", "stop sign", 2)]),
    ("A man swinging a baseball bat.", [("object", "man", 2), ("object", "baseball bat", 17)]),
    ("A woman talking on a cell phone near a fire hydrant.",
     [("object", "woman", 2), ("object", "cell phone", 21), ("object", "fire hydrant", 39)]),
    ("A traffic light hanging over a street.", [("object", "traffic light", 2)]),
    ("A remote control on a table", [("object", "remote control", 2), ("object", "table", 22)]),
    ("A microwave oven in a kitchen", [("object", "microwave oven", 2)]),
    ("a cat sitting on a laptop computer", [("object", "cat", 2), ("object", "laptop computer", 19)]),
    ("A baseball player holding a bat and a glove.", [("object", "bat", 28), ("object", "glove", 38)]),
    # possessives: the noun is flipped, its 's stays ("teddy bear's" is still one unit)
    ("A girl changing her teddy bear's diaper.", [("object", "girl", 2), ("object", "teddy bear", 20)]),
    ("A dog's bowl on the floor", [("object", "dog", 2), ("object", "bowl", 8)]),
    # whole words only
    ("Seeds scattered on the ground.", []),
    ("The catcher is waiting behind the batter.", []),
    ("A business man in a suit.", []),  # the head of a noun-noun compound
    ("A category of items.", []),
    ("A two-story building with four-wheelers", []),
    # orange: fruit or color
    ("An orange on a plate.", [("object", "orange", 3), ("object", "plate", 15)]),
    ("A slice of orange on a plate.", [("object", "plate", 23)]),  # a partitive frame
    ("A bowl of oranges and apples.", [("object", "bowl", 2), ("object", "oranges", 10), ("object", "apples", 22)]),
    ("An apple and an orange on a table.", [("object", "apple", 3), ("object", "orange", 16), ("object", "table", 28)]),
    ("An orange cat sleeping on a bed.", [("color", "orange", 3), ("object", "cat", 10), ("object", "bed", 28)]),
    ("A glass of orange juice.", []),
    ("An orange sitting on top of a wooden table", [("object", "orange", 3), ("object", "table", 37)]),
    ("The wall is orange and the door is blue.", [("color", "orange", 12), ("color", "blue", 35)]),
    # other color uses
    ("Red, white and blue flags.", [("color", "Red", 0), ("color", "white", 5), ("color", "blue", 15)]),
    ("The bus is red.", [("object", "bus", 4), ("color", "red", 11)]),
    ("A man dressed in black.", [("object", "man", 2), ("color", "black", 17)]),
    ("A golfer on the green.", []),
    ("A white toilet next to a black sink.",
     [("color", "white", 2), ("object", "toilet", 8), ("color", "black", 25), ("object", "sink", 31)]),
    ("A black and white photo of a cat.", [("object", "cat", 29)]),  # monochrome, not a color
    # counts
    ("One dog laying on a bed.", [("count", "One", 0), ("object", "dog", 4), ("object", "bed", 20)]),
    ("Two dogs and one cat.",
     [("count", "Two", 0), ("object", "dogs", 4), ("count", "one", 13), ("object", "cat", 17)]),
    ("A dog is sleeping on the floor.", [("object", "dog", 2)]),
    ("One of the men is holding a bat.", [("object", "men", 11), ("object", "bat", 28)]),
    ("No one is in the room.", []),
    ("Two people look at one another.", [("count", "Two", 0), ("object", "people", 4)]),
    ("The one on the left is a zebra.", [("object", "zebra", 25)]),
    ("A one way sign on a pole.", []),  # "way sign": a compound head
    ("Four people, one holding an umbrella.",
     [("count", "Four", 0), ("object", "people", 5), ("object", "umbrella", 28)]),
    ("A man holding one banana.", [("object", "man", 2), ("count", "one", 14), ("object", "banana", 18)]),
    ("Three young men playing frisbee.", [("count", "Three", 0), ("object", "men", 12)]),  # "playing frisbee": an activity
    ("Two of the dogs are sleeping.", [("count", "Two", 0), ("object", "dogs", 11)]),
    ("THREE DOGS ON A BED", [("count", "THREE", 0), ("object", "DOGS", 6), ("object", "BED", 16)]),
    # modifiers and compounds are not objects
    ("A baby elephant next to its mother.", []),  # "baby" modifies "elephant": a compound head
    ("A train station with a train.", []),  # "train" mentioned twice: every mention or none
    ("A bus stop next to the road.", []),
    ("A ski lift on a mountain", []),
    ("A pizza box on a table", [("object", "table", 17)]),
    ("The toilet seat is up", []),
    ("A remote area with a house.", []),
    # number of invariant nouns, case, other scripts
    ("Sheep grazing in a field.", [("object", "Sheep", 0)]),
    ("A sheep standing in a field.", [("object", "sheep", 2)]),
    ("A small white sheep in a field.", [("color", "white", 8), ("object", "sheep", 14)]),  # "a": singular
    ("A black and a white sheep.", [("color", "white", 14), ("object", "sheep", 20)]),
    ("A herd of white sheep.", [("color", "white", 10), ("object", "sheep", 16)]),  # plural after "of"
    # partitive frames across modifiers: no object flip of the counted noun
    ("A pair of gold scissors on a desk.", [("color", "gold", 10), ("object", "desk", 29)]),
    ("A player is up to bat in a baseball game.", []),  # "to bat": a verb, not the noun
    ("A piece of chocolate cake on a plate.", [("object", "plate", 31)]),
    ("A TV in a room", [("object", "TV", 2)]),
    ("Dogs running on a beach", [("object", "Dogs", 0)]),
    ("An old dog sleeping.", [("object", "dog", 7)]),
    ("Ein Hund läuft über die Straße 🐶", []),
]


@functools.lru_cache(maxsize=None)
def all_flips(caption):
    return ALL.perturb(caption, seed=0).flips


def flips_of(caption, original):
    return [f for f in all_flips(caption) if f.original == original]


@pytest.mark.parametrize("caption,sites", SITES, ids=[c for c, _ in SITES])
def test_flip_sites(caption, sites):
    flips = all_flips(caption)
    found = {(f.type, f.original, f.span[0]) for f in flips}
    assert found == set(sites)
    for f in flips:
        assert caption[f.span[0]:f.span[1]] == f.original
        assert flip_problems(caption, f) == []


def test_table_is_large_enough():
    assert len(SITES) >= 40


def test_plural_nouns_flip_to_plural_nouns():
    for caption, original in [("Two dogs playing in the snow.", "dogs"), ("Sheep grazing in a field.", "Sheep"),
                              ("A herd of white sheep.", "sheep"), ("Three white sheep in a field.", "sheep"),
                              ("A bowl of oranges and apples.", "oranges"), ("Two hot dogs on a plate", "hot dogs")]:
        reps = {f.replacement.lower() for f in flips_of(caption, original)}
        assert reps and reps <= PLURALS, reps - PLURALS


def test_singular_nouns_flip_to_singular_nouns():
    for caption, original in [("A sheep standing in a field.", "sheep"), ("A dog on a couch", "dog"),
                              ("A hot dog with mustard on a plate.", "hot dog"), ("A small white sheep in a field.", "sheep"),
                              ("A black and a white sheep.", "sheep"), ("A freshly shorn sheep.", "sheep"),
                              ("A close up of a fluffy sheep's face.", "sheep")]:
        reps = {f.replacement.lower() for f in flips_of(caption, original)}
        assert reps and reps <= SINGULARS, reps - SINGULARS


def test_article_agrees_after_swap():
    flips = flips_of("An elephant standing in a field.", "elephant")
    for f in flips:
        assert f.text.split()[0] == INFLECT.a(f.replacement).split()[0].capitalize()
        assert f.text.startswith(("A ", "An "))
    assert {f.text.split()[0] for f in flips} == {"A", "An"}  # both directions happen
    assert any(f.text == "A giraffe standing in a field." for f in flips)
    dog = flips_of("A dog on a couch", "dog")
    assert any(f.text == "An elephant on a couch" for f in dog)
    # the article belongs to the edit, the span to the noun
    f = next(f for f in dog if f.replacement == "elephant")
    assert (f.original, f.span) == ("dog", (2, 5))


def test_possessive_s_stays_outside_the_span():
    for f in flips_of("A dog's bowl on the floor", "dog"):
        assert f.span == (2, 5) and f.text.endswith(f" {f.replacement}'s bowl on the floor")


def test_article_before_an_adjective_is_untouched():
    for f in flips_of("An old dog sleeping.", "dog"):
        assert f.text.startswith("An old ")


def test_fruit_orange_keeps_agreement():
    for f in flips_of("An apple and an orange on a table.", "orange"):
        assert f.text.startswith("An apple and ")
        assert f.text.split()[3] == INFLECT.a(f.replacement).split()[0]


def test_count_flips_fix_noun_number():
    one = flips_of("One dog laying on a bed.", "One")
    assert len(one) == 9
    for f in one:
        assert f.text == f"{f.replacement} dogs laying on a bed."
    two = {f.replacement: f.text for f in flips_of("Two dogs and one cat.", "Two")}
    assert two["One"] == "One dog and one cat."
    assert two["Three"] == "Three dogs and one cat."
    one_cat = {f.replacement: f.text for f in flips_of("Two dogs and one cat.", "one")}
    assert one_cat["three"] == "Two dogs and three cats."
    men = {f.replacement: f.text for f in flips_of("Three young men playing frisbee.", "Three")}
    assert men["One"] == "One young man playing frisbee."
    hot = {f.replacement: f.text for f in flips_of("Two hot dogs on a plate", "Two")}
    assert hot["One"] == "One hot dog on a plate"
    partitive = {f.replacement: f.text for f in flips_of("Two of the dogs are sleeping.", "Two")}
    assert partitive["One"] == "One of the dogs is sleeping."
    assert partitive["Three"] == "Three of the dogs are sleeping."
    back = {f.replacement: f.text for f in flips_of("Two of the men have a hat.", "Two")}
    assert back["One"] == "One of the men has a hat."
    caps = {f.replacement: f.text for f in flips_of("TWO HOT DOGS", "TWO")}
    assert caps["ONE"] == "ONE HOT DOG"
    verbs = {f.replacement: f.text for f in flips_of("Two dogs are playing and a cat is sleeping.", "Two")}
    assert verbs["One"] == "One dog is playing and a cat is sleeping."
    there = {f.replacement: f.text for f in flips_of("There are two cats on a couch.", "two")}
    assert there["one"] == "There is one cat on a couch." and there["three"] == "There are three cats on a couch."
    back = {f.replacement: f.text for f in flips_of("there is one dog.", "one")}
    assert back["two"] == "there are two dogs."
    was = {f.replacement: f.text for f in flips_of("ONE MAN WAS STANDING.", "ONE")}
    assert was["TWO"] == "TWO MEN WERE STANDING."
    people = {f.replacement: f.text for f in flips_of("One person on a bus", "One")}
    assert people["Five"] == "Five people on a bus"
    possessive = {f.replacement: f.text for f in flips_of("one man's hat", "one")}
    assert possessive["two"] == "two men's hat"


def test_sentence_initial_and_all_caps_case():
    two = flips_of("Two dogs playing in the snow.", "Two")
    assert all(f.replacement[0].isupper() and f.text.startswith(f.replacement + " ") for f in two)
    assert all(f.replacement[0].isupper() for f in flips_of("Dogs running on a beach", "Dogs"))
    assert all(f.replacement.isupper() for f in all_flips("THREE DOGS ON A BED"))
    # a mid-sentence acronym does not make its replacement upper-case
    assert all(f.replacement == f.replacement.lower() for f in flips_of("A TV in a room", "TV"))


def test_synonyms_are_never_flips():
    def reps(caption, original):
        return {f.replacement.lower() for f in flips_of(caption, original)}
    assert not reps("A man in a gray shirt.", "gray") & {"grey", "gray", "silver"}
    assert not reps("A man in a gray shirt.", "man") & {"men", "guy", "person", "people", "gentleman", "man"}
    assert not reps("A dog on a couch", "couch") & {"sofa", "couch"}
    assert not reps("A TV in a room", "TV") & {"tv", "television", "tv set"}
    assert not reps("A woman talking on a cell phone near a fire hydrant.", "cell phone") & {"phone", "cellphone"}
    assert "giraffe" in reps("An elephant standing in a field.", "elephant")


def test_one_substitution_only():
    caption = "A white toilet next to a black sink."
    for f in all_flips(caption):
        s, e = f.span
        assert f.text == caption[:s] + f.replacement + caption[e:] or f.text.startswith(("A ", "An "))


GOLDEN = {
    ("Two dogs playing in the snow.", 3, 4): {
        "caption": "Two dogs playing in the snow.",
        "paraphrases": ["This image shows two dogs playing in the snow.",
                        "In this picture, two dogs playing in the snow.",
                        "A photograph of two dogs playing in the snow."],
        "flips": [
            {"text": "Seven dogs playing in the snow.", "type": "count", "original": "Two", "replacement": "Seven",
             "span": [0, 3]},
            {"text": "Two kites playing in the snow.", "type": "object", "original": "dogs", "replacement": "kites",
             "span": [4, 8]},
            {"text": "One dog playing in the snow.", "type": "count", "original": "Two", "replacement": "One",
             "span": [0, 3]},
            {"text": "Two vans playing in the snow.", "type": "object", "original": "dogs", "replacement": "vans",
             "span": [4, 8]}],
    },
    ("An orange cat on a red couch.", 3, 4): {
        "caption": "An orange cat on a red couch.",
        "paraphrases": ["This image shows an orange cat on a red couch.", "An orange cat on a red couch in this photo.",
                        "A picture of an orange cat on a red couch."],
        "flips": [
            {"text": "An orange surfboard on a red couch.", "type": "object", "original": "cat",
             "replacement": "surfboard", "span": [10, 13]},
            {"text": "A white cat on a red couch.", "type": "color", "original": "orange", "replacement": "white",
             "span": [3, 9]},
            {"text": "An orange cat on a red motorcycle.", "type": "object", "original": "couch",
             "replacement": "motorcycle", "span": [23, 28]},
            {"text": "An orange cat on an orange couch.", "type": "color", "original": "red", "replacement": "orange",
             "span": [19, 22]}],
    },
}


@pytest.mark.parametrize("key", GOLDEN, ids=[k[0] for k in GOLDEN])
def test_golden_output_is_pinned(key):
    """Exact output for seed 0; a change here changes every built dataset (bump LEXICON_VERSION)."""
    caption, k_same, k_diff = key
    assert Perturber(k_same=k_same, k_diff=k_diff).perturb(caption, seed=0).to_dict() == GOLDEN[key]


# (caption, paraphrases that must be generated, substrings no paraphrase may contain)
PARAPHRASES = [
    ("A man riding a horse.", ["A photo of a man riding a horse.", "In the scene, a man riding a horse.",
                               "A man riding a horse in this picture."], ["in which", "shows that"]),
    ("A man is riding a horse.", ["A photo in which a man is riding a horse.", "A man is riding a horse in the scene."],
     ["photo of", "image of", "picture of", "image shows a"]),
    ("Honda motorcycle parked on the street", ["A photo of Honda motorcycle parked on the street"], ["honda"]),
    ("TV on a stand", ["A photo of TV on a stand", "In this picture, TV on a stand"], ["tv"]),
    ("I am standing next to a dog.", ["In this picture, I am standing next to a dog."], [" i "]),
    ("A picture of a dog.", ["A picture of a dog in the scene.", "A picture of a dog in this photo."],
     ["photo of", "in this picture", "In the scene,"]),
    ("A black and white photo of a cat.", ["A black and white photo of a cat in the scene."], ["picture of"]),
    ("a dog on a couch", ["a photo of a dog on a couch", "a dog on a couch in this photo"], ["."]),
    ("A dog on a couch...", ["A photo of a dog on a couch."], [".."]),
    ("  A  dog   on a couch ", ["A photo of a dog on a couch", "In this photo, a dog on a couch"], ["  "]),
    ("There are two dogs on the bed", ["A photo in which there are two dogs on the bed",
                                       "There are two dogs on the bed in this picture"], ["photo of"]),
    ("Is this a dog?", ["Is this a dog in the scene?"], ["photo of", "in which"]),
    ("A person sprays the inside of a toilet.", ["A photo in which a person sprays the inside of a toilet."],
     ["photo of"]),
]


@pytest.mark.parametrize("caption,wanted,banned", PARAPHRASES, ids=[c for c, _, _ in PARAPHRASES])
def test_paraphrases(caption, wanted, banned):
    texts = [v.text for v in ALL.perturb(caption, seed=0).paraphrases]
    for w in wanted:
        assert w in texts
    for t in texts:
        assert not any(b in t for b in banned), t
    for v in ALL.perturb(caption, seed=0).paraphrases:
        assert paraphrase_problems(caption, v) == []


@pytest.mark.parametrize("caption", ["ok", "...", "🐶🐶🐶", "  a "])
def test_too_short_captions_get_no_paraphrases(caption):
    assert ALL.perturb(caption, seed=0).paraphrases == []


def test_both_paraphrase_families_are_kept_when_capped():
    r = Perturber(k_same=6).perturb("A man riding a horse.", seed=0)
    assert len(r.paraphrases) == 6
    assert {v.type for v in r.paraphrases} == {"template", "marker"}
    assert Perturber(k_same=2).perturb("A man riding a horse.", seed=5).paraphrases[0].type != \
        Perturber(k_same=2).perturb("A man riding a horse.", seed=5).paraphrases[1].type
