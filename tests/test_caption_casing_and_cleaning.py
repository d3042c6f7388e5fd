"""Two silent coercions of captions: an all-caps caption's paraphrases stay all caps ("A PHOTO OF A RED BUS",
never "A PHOTO OF a RED BUS"), and ``lgip perturb`` cleans its caption as a build does, so a zero-width space
inside a word never splits it for the scrambles."""
from __future__ import annotations

import json

from lgip_dataset.perturb import Perturber
from helpers.reliability import run_cli


def test_an_all_caps_caption_keeps_its_paraphrases_all_caps():
    result = Perturber().perturb("A RED BUS ON A STREET.", seed=0)
    texts = [v.text for v in result.paraphrases]
    assert texts and all(text == text.upper() for text in texts), texts
    assert "A PHOTO OF A RED BUS ON A STREET." in texts


def test_a_mixed_case_caption_still_lowers_its_first_word_in_a_frame():
    texts = [v.text for v in Perturber().perturb("A red bus on a street.", seed=0).paraphrases]
    assert "A photo of a red bus on a street." in texts


def test_perturb_cleans_a_zero_width_space_before_scrambling():
    outcome = run_cli("perturb", "A dog\u200bs on a red couch.", "--families", "scramble_content", "--json")
    assert outcome.code == 0, outcome.text
    result = json.loads(outcome.out)
    assert result["caption"] == "A dogs on a red couch."
    assert result["flips"] and not any("\u200b" in f["text"] for f in result["flips"])
    assert all(sorted(f["text"].rstrip(".").split()) == sorted("A dogs on a red couch".split()) for f in result["flips"])
