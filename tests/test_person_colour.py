"""No flip ever changes a person's colour: the colour families (color, hard_color) leave a colour that describes
a person as it is, binding never moves a colour onto or off a person, and a build counts those colour words."""
from __future__ import annotations

import json
import re

import pyarrow.parquet as pq
import pytest

from lgip_dataset.files.hub_io import BUILD_INFO
from lgip_dataset.perturb import Perturber
from lgip_dataset.sources.coco import read_captions
from lgip_dataset.sources.skips import SkipLog
from lgip_dataset.writing.materialize import PERSON_COLOR, BuildConfig, build
from lgip_metric.cli import main
from helpers.paths import SHARED, needs_shared

COLOUR_TYPES = ("color", "hard_color", "binding")
PERSON_CAPTIONS = {  # caption -> the colour word that describes a person in it
    "a black woman standing over a bushel of yellow bananas": "black",
    "Two black children wearing baseball hats": "black",
    "A black man running towards the tennis ball": "black",
    "black women tennis players": "black",
    "a man with black skin": "black",
    "the woman is black": "black",
    "a white guy riding a horse": "white",
}
OTHER_CAPTIONS = {"a man in a black shirt": "black", "a black dog": "black"}  # colours of no person: flipped

# The test's own reading, apart from the package's lexicons: a colour word followed by a person noun, with at
# most two words between that are no function word, pronoun or -ing verb ("a black tennis player", not "a white
# bus and people", "a brown horse carrying people"), and no animal or thing after it ("a red spider man cake").
COLOURS = ("black", "white", "brown", "yellow", "red", "blue", "green", "gray", "grey", "pink", "purple", "orange",
           "tan", "beige", "gold", "silver", "maroon", "teal", "turquoise", "violet")
PERSONS = ("man", "men", "woman", "women", "person", "persons", "people", "child", "children", "kid", "kids", "boy",
           "boys", "girl", "girls", "baby", "babies", "guy", "guys", "lady", "ladies", "toddler", "toddlers",
           "gentleman", "gentlemen", "player", "players", "male", "males", "female", "females", "teen", "teens",
           "teenager", "teenagers", "skin", "family", "couple", "skier", "skiers", "surfer", "surfers",
           "skateboarder", "skateboarders", "snowboarder", "snowboarders", "athlete", "athletes")
GAP_STOP = ("and", "or", "with", "of", "in", "on", "at", "by", "to", "for", "from", "near", "next", "the", "a", "an",
            "some", "two", "three", "his", "her", "their", "its", "we", "they", "is", "are", "while", "as", "besides",
            "beside", "behind", "over", "under")
MODIFIED = ("bear", "bears", "cow", "cows", "calf", "elephant", "elephants", "giraffe", "giraffes", "zebra", "zebras",
            "sheep", "goat", "goats", "horse", "horses", "bird", "birds", "duck", "ducks", "dog", "dogs", "cat", "cats",
            "cake", "cakes", "toy", "toys", "doll", "dolls")  # what a person noun may only modify: "a brown baby bear"
PERSON_COLOUR = re.compile(
    r"\b(?:%s)\b(?:[ \t]+(?!(?:%s)\b)(?![a-z'-]+ing\b)[a-z'-]+){0,2}[ \t]+(?:%s)\b(?![ \t]+(?:%s)\b)"
    % ("|".join(COLOURS), "|".join(GAP_STOP), "|".join(PERSONS), "|".join(MODIFIED)), re.IGNORECASE)


def person_colours(text: str) -> set[str]:
    """Every colour-and-person phrase of ``text``, in lower case."""
    return {m.group(0).lower() for m in PERSON_COLOUR.finditer(text)}


def new_person_colours(caption: str, variant: str) -> set[str]:
    """The colour-and-person phrases of ``variant`` that ``caption`` does not hold: a person's colour changed."""
    return person_colours(variant) - person_colours(caption)


def colours_given_to_persons(caption: str, variant: str) -> set[str]:
    """The colour words that describe a person in ``variant`` and no person in ``caption``: a colour put on a person
    ("a brown bear" -> "a brown girl"); a person kept as another person keeps their colour ("a black man" -> "a
    black woman")."""
    def near_persons(text):  # any colour word up to four words before a person word ("a white and black baby")
        words = re.findall(r"[a-z'-]+", text.lower())
        return {w for i, w in enumerate(words) if w in COLOURS and any(v in PERSONS for v in words[i + 1:i + 5])}
    return {phrase.split()[0] for phrase in person_colours(variant)} - near_persons(caption)


def test_the_independent_check_reads_what_it_should():
    assert new_person_colours("a black woman with bananas", "a white woman with bananas") == {"white woman"}
    assert new_person_colours("a black tennis player", "a red tennis player") == {"red tennis player"}
    assert not new_person_colours("a black woman with yellow bananas", "a black woman with green bananas")
    assert not new_person_colours("a white bus and people", "a red bus and people")
    assert not new_person_colours("a brown horse carrying people", "a black horse carrying people")
    assert not new_person_colours("a brown baby bear", "a black baby bear")
    assert colours_given_to_persons("a brown bear on a rock", "a brown girl on a rock") == {"brown"}
    assert not colours_given_to_persons("a black man on a rock", "a black woman on a rock")


@pytest.mark.parametrize("caption", ["A brown bear sitting on a white plate.", "A white and black cat on a bed.",
                                     "a small brown dog next to a red truck",
                                     "A street sign on top of a pole next to a large green tree.",
                                     "A dog standing on a bench with an orange tree in back."])
def test_no_object_flip_puts_a_person_where_a_colour_describes_the_noun(caption):
    flips = Perturber(families="core,hard").perturb(caption).flips
    assert [f for f in flips if f.type in ("object", "hard_object")]
    assert not [f.text for f in flips if colours_given_to_persons(caption, f.text)]


def _changes(caption: str, flip, word: str) -> bool:
    """True when ``flip`` edits the first ``word`` of ``caption``."""
    start = re.search(rf"\b{word}\b", caption).start()
    return flip.span[0] <= start < flip.span[1]


@pytest.mark.parametrize("caption, word", PERSON_CAPTIONS.items())
def test_no_colour_flip_changes_a_persons_colour(caption, word):
    flips = [f for f in Perturber(families="all").perturb(caption).flips if f.type in COLOUR_TYPES]
    assert not [f.text for f in flips if _changes(caption, f, word)]
    assert not [f.text for f in flips if new_person_colours(caption, f.text)]


@pytest.mark.parametrize("caption, word", OTHER_CAPTIONS.items())
def test_a_colour_of_a_thing_or_an_animal_still_flips(caption, word):
    flips = Perturber(families="all").perturb(caption).flips
    for family in ("color", "hard_color"):
        assert [f for f in flips if f.type == family and f.original == word], family


def test_the_perturb_command_agrees(capsys):
    for caption, word in {**PERSON_CAPTIONS, **OTHER_CAPTIONS}.items():
        assert main(["perturb", caption, "--families", "all", "--json"]) == 0
        flips = [f for f in json.loads(capsys.readouterr().out)["flips"] if f["type"] in ("color", "hard_color")]
        flipped = [f for f in flips if f["original"].lower() == word]
        assert bool(flipped) == (caption in OTHER_CAPTIONS), (caption, flipped)
        assert not [f["text"] for f in flips if new_person_colours(caption, f["text"])]


def test_binding_never_moves_a_colour_onto_a_person():
    perturber = Perturber(families="binding")
    assert perturber.perturb("a red car and a white truck").flips  # a swap between things stays
    for caption in ("a red car and a black player", "a red shirt and a wet skier", "a red car and a black man"):
        assert not perturber.perturb(caption).flips, caption


SCRAMBLED = ("A pile of green bananas on top of a woman's shoulder.",  # a possessive person word
             "Woman in black body suit surfing on a small wave.",  # a colour by a body word moved before "woman"
             "Person standing near the water with a red disc in hand.",
             "A brown teddy bear sits by a child's toy.",
             "Woman and blue-and-white uniform swinging at a baseball.")  # a colour inside a hyphenated word


@pytest.mark.parametrize("caption", SCRAMBLED)
def test_no_scramble_puts_a_colour_before_a_person(caption):
    flips = Perturber(families="scramble_all,scramble_content,scramble_function").perturb(caption).flips
    assert flips
    assert not [f.text for f in flips if colours_given_to_persons(caption, f.text)]


def _images_with_person_colours(captions_file, limit: int) -> tuple[int, ...]:
    """The first ``limit`` images of ``captions_file`` with a caption in which the independent check reads a
    person's colour."""
    entries = read_captions(captions_file, SkipLog())
    return tuple(e.image_id for e in entries if any(person_colours(c.text) for c in e.captions))[:limit]


def _check_build(out) -> dict:
    """Assert no colour row of the build at ``out`` changes a person's colour; return its build record."""
    pairs = pq.read_table(out / "pairs", columns=["caption", "variant", "type"]).to_pydict()
    rows = [(c, v, t) for c, v, t in zip(pairs["caption"], pairs["variant"], pairs["type"]) if t in COLOUR_TYPES]
    assert {t for _, _, t in rows} >= {"color", "hard_color"}
    assert not [(t, c, v) for c, v, t in rows if new_person_colours(c, v)]
    every = zip(pairs["caption"], pairs["variant"], pairs["type"])
    assert not [(t, c, v) for c, v, t in every if colours_given_to_persons(c, v)]
    info = json.loads((out / BUILD_INFO).read_text())
    counted = info["sites_not_flipped"][PERSON_COLOR]
    assert counted["count"] > 0 and counted["examples"]
    assert all(re.fullmatch(r"\S+: .+ in .+", example) for example in counted["examples"])
    assert PERSON_COLOR in (out / "README.md").read_text()
    return info


@needs_shared("the full captions_val2017.json", "coco")
def test_a_val2017_build_writes_no_flip_of_a_persons_colour_and_counts_them(tmp_path):
    captions = SHARED / "coco" / "annotations" / "captions_val2017.json"
    ids = _images_with_person_colours(captions, 30)
    assert len(ids) >= 15
    out = tmp_path / "val"
    build(BuildConfig(captions=captions, out=out, image_ids=ids, families="all", captions_per_image=None),
          progress=False)
    _check_build(out)


@needs_shared("coco_karpathy_test.json", "coco")
def test_a_karpathy_build_in_worker_processes_counts_them_too(tmp_path):
    captions = SHARED / "coco" / "annotations" / "coco_karpathy_test.json"
    ids = _images_with_person_colours(captions, 12)
    out = tmp_path / "karpathy"
    build(BuildConfig(captions=captions, out=out, image_ids=ids, families="core,hard"), progress=False, workers=2)
    assert _check_build(out)["sites_not_flipped"][PERSON_COLOR]["count"] >= 3


def test_a_build_without_colour_families_records_no_count(tmp_path):
    from helpers.coco import write_sample_coco

    coco = write_sample_coco(tmp_path / "coco")
    out = tmp_path / "objects"
    build(BuildConfig(captions=coco / "annotations" / "captions_val2017.json", out=out, families="object",
                      num_images=3), progress=False)
    assert "sites_not_flipped" not in json.loads((out / BUILD_INFO).read_text())
