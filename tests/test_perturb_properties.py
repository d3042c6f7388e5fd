"""Property tests on arbitrary captions: COCO-like word soup from the lexicons, and any Unicode."""
from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lgip_dataset.errors import DataError
from lgip_dataset.perturb import MAX_CAPTION_CHARS, Perturber
from lgip_dataset.perturb.invariants import flip_problems, result_problems
from lgip_dataset.perturb.select import text_key
from helpers.strategies import captions, seeds, word_soup

RUNS = re.compile(r"[^\W_]+")  # letter/digit runs: "dog's" -> dog, s

P = Perturber()
ALL = Perturber(k_same=100, k_diff=1000)
SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(caption=captions, seed=seeds)
def test_every_variant_keeps_the_contract(caption, seed):
    """Never crashes; caps respected; nothing equal to the caption; no duplicates; every flip is the
    caption with exactly its span replaced (plus a/an and counted-noun agreement); spans consistent."""
    r = P.perturb(caption, seed=seed)
    assert r.caption == caption
    assert result_problems(r, 6, 6) == []
    for v in r.flips:
        assert v.type in ("object", "color", "count")
        assert caption[v.span[0]:v.span[1]] == v.original
        assert text_key(v.text) != text_key(caption)


@SETTINGS
@given(caption=captions, seed=seeds)
def test_outside_the_span_only_agreement_changes(caption, seed):
    """Token-level restatement of the one-substitution rule: words before the span are unchanged except
    the article right before it (a <-> an) or, for counts, the verb of "there is/are" right before
    it; words after it are unchanged except, for counts, the counted noun and its verb changing
    grammatical number."""
    for v in P.perturb(caption, seed=seed).flips:
        s, e = v.span
        before, after = RUNS.findall(caption[:s]), RUNS.findall(caption[e:])
        new = RUNS.findall(v.text)
        new_before = new[:len(before)]
        new_after = new[len(new) - len(after):] if after else []
        assert len(new) == len(before) + len(RUNS.findall(v.replacement)) + len(after)
        changed = [(a, b) for a, b in zip(before, new_before) if a != b]
        agreeing = ("a", "an") + (("is", "are", "was", "were") if v.type == "count" else ())
        assert changed == [] or (len(changed) == 1 and changed[0][0].lower() in agreeing
                                 and before[-1] == changed[0][0])
        changed_after = [(a, b) for a, b in zip(after, new_after) if a != b]
        assert len(changed_after) <= (2 if v.type == "count" else 0)


@SETTINGS
@given(caption=captions, seed=seeds)
def test_deterministic_for_a_seed(caption, seed):
    assert P.perturb(caption, seed=seed) == Perturber().perturb(caption, seed=seed)


@settings(max_examples=200, deadline=None)
@given(caption=word_soup(), seed=seeds)
def test_every_present_flip_type_is_represented(caption, seed):
    present = {v.type for v in ALL.perturb(caption, seed=seed).flips}
    chosen = P.perturb(caption, seed=seed).flips
    assert {v.type for v in chosen} == present
    assert len(chosen) == min(6, len(ALL.perturb(caption, seed=seed).flips))


@settings(max_examples=100, deadline=None)
@given(caption=word_soup(), seed=seeds, k_same=st.integers(0, 8), k_diff=st.integers(0, 8))
def test_caps_and_prefix_property(caption, seed, k_same, k_diff):
    """k limits are respected and a smaller k gives a prefix of a larger k's selection."""
    small = Perturber(k_same=k_same, k_diff=k_diff).perturb(caption, seed=seed)
    big = Perturber(k_same=8, k_diff=8).perturb(caption, seed=seed)
    assert small.paraphrases == big.paraphrases[:k_same]
    assert small.flips == big.flips[:k_diff]


@pytest.mark.parametrize("caption", ["", " ", "\n\t ", None, 42, "x" * (MAX_CAPTION_CHARS + 1), "a" * 10_000])
def test_bad_captions_raise_data_error(caption):
    with pytest.raises(DataError, match="caption"):
        P.perturb(caption)
    with pytest.raises(DataError, match="caption"):
        Perturber.validate_caption(caption)


def test_validate_caption_returns_the_stripped_caption_and_names_the_source():
    assert Perturber.validate_caption("  A dog. ") == "A dog."
    assert Perturber.validate_caption("x" * MAX_CAPTION_CHARS) == "x" * MAX_CAPTION_CHARS
    with pytest.raises(DataError, match="captions.json row 7"):
        Perturber.validate_caption("", what="captions.json row 7")


@pytest.mark.parametrize("kwargs", [{"k_same": -1}, {"k_diff": 1.5}, {"k_same": True}, {"families": ["no_such_family"]}])
def test_bad_settings_raise_data_error(kwargs):
    with pytest.raises(DataError):
        Perturber(**kwargs)


def test_flip_checker_catches_broken_flips():
    """The invariant checker itself must be able to fail."""
    caption = "A dog on a couch near two cats."
    good = next(v for v in ALL.perturb(caption).flips if v.original == "dog")
    assert flip_problems(caption, good) == []
    import dataclasses
    broken = [
        dataclasses.replace(good, span=(3, 6)),
        dataclasses.replace(good, text=good.text.replace("couch", "sofa")),
        dataclasses.replace(good, text=caption),
        dataclasses.replace(good, text="The " + good.text[2:]),
        dataclasses.replace(good, replacement="dog", text=caption),
    ]
    for v in broken:
        assert flip_problems(caption, v), v
    elephant = dataclasses.replace(good, replacement="elephant", text="A elephant on a couch near two cats.")
    assert any("article" in p for p in flip_problems(caption, elephant))
