"""The hard count flips' grammar: no determiner before the new count ("The a bear is"), no noun the subject
holds left in its old number ("A pizza on tin plates", "two kids riding on a skateboard", "Two men in a green
shirt") and no "a group of" before a thing ("A group of red laptops"); checked on the issue's captions, the
embedded sample and a 2,000-caption val2017 build by :mod:`helpers.count_checks`, which reads the texts alone."""
from __future__ import annotations

import pytest

from helpers.count_checks import count_errors
from helpers.paths import needs_shared
from lgip_dataset import SAMPLE_DIR, schema
from lgip_dataset.files import hub_io
from lgip_dataset.perturb import Perturber

PERTURBER = Perturber(k_same=6, k_diff=6, families="core,hard")
# flips of the embedded sample (and one each of val2017's kind) before the rules were mended
ONCE_WRONG = [
    ("The two bears are wondering about the point of the camera.",
     "The a bear is wondering about the point of the camera."),
    ("The two airplanes are in the air next to eachother", "The an airplane is in the air next to eachother"),
    ("These two birds are sitting on a branch.", "These a bird is sitting on a branch."),
    ("Two pizzas on tin plates on an oven with a fork and knife.",
     "A pizza on tin plates on an oven with a fork and knife."),
    ("a kid riding on a skateboard on the cement", "two kids riding on a skateboard on the cement"),
    ("A man in a green shirt is standing next to an elephant.",
     "Two men in a green shirt are standing next to an elephant."),
    ("A man standing in a green shirt next to an elephant.", "Two men standing in a green shirt next to an elephant."),
    ("a person that is on a motorcycle in the dark", "several people that are on a motorcycle in the dark"),
    ("A red laptop with earbuds sitting on a table", "A group of red laptops with earbuds sitting on a table"),
    ("A pizza that is sitting on a wooden platter.", "A group of pizzas that are sitting on a wooden platter."),
]


def _every_candidate(caption: str) -> list[str]:
    """Every hard count flip a build may choose for the caption (each site's whole pool)."""
    pools = PERTURBER.hard_pools(caption, seed=0, image_id=1)
    return [v.text for site in pools["hard_count"] for v in site]


@pytest.mark.parametrize(("caption", "wrong"), ONCE_WRONG)
def test_the_checker_sees_each_once_wrong_flip(caption, wrong):
    assert count_errors(caption, wrong)


@pytest.mark.parametrize(("caption", "wrong"), ONCE_WRONG)
def test_the_generator_never_offers_a_wrong_count_flip(caption, wrong):
    candidates = _every_candidate(caption)
    assert wrong not in candidates
    assert [(text, count_errors(caption, text)) for text in candidates if count_errors(caption, text)] == []


@pytest.mark.parametrize(("caption", "kept"), [
    ("A dog sleeping on a couch.", "Two dogs sleeping on a couch."),  # "sleeping on": not held
    ("A dog on the beach.", "Two dogs on the beach."),  # a place is held by nothing
    ("A bear in the grass.", "Two bears in the grass."),
    ("A dog is running in the park.", "A group of dogs are running in the park."),  # an animal: "a group of"
    ("Two dogs sleeping on a couch.", "A dog sleeping on a couch."),
])
def test_sound_count_flips_stay(caption, kept):
    assert kept in _every_candidate(caption)


def _errors_of_build(folder) -> list[tuple[str, str, list[str]]]:
    pairs = hub_io.load_config(folder, schema.PAIRS).to_pandas()
    flips = pairs[pairs["type"].str.startswith("hard_")]
    assert len(flips[flips["type"] == "hard_count"]) > 0
    return [(c, v, e) for c, v in zip(flips["caption"], flips["variant"]) if (e := count_errors(c, v))]


def test_the_embedded_samples_hard_flips_pass_the_count_checks():
    assert _errors_of_build(SAMPLE_DIR) == []


@needs_shared("the full captions_val2017.json (a 2,000-caption build)", "coco")
@pytest.mark.slow
def test_a_2000_caption_val2017_builds_hard_flips_pass_the_count_checks(val2017_2000_build):
    assert _errors_of_build(val2017_2000_build) == []
