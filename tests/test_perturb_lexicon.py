"""The versioned lexicon files and the family registry."""
from __future__ import annotations

import json
from importlib import resources

import pytest

from lgip_dataset.perturb import LEXICON_VERSION, Perturber, Variant
from lgip_dataset.perturb import registry
from lgip_dataset.perturb.lexicon import FILES, load_lexicon
from helpers.paths import FIXTURES

LEX = load_lexicon()
MULTIWORD_COCO = ["hot dog", "teddy bear", "stop sign", "fire hydrant", "tennis racket", "baseball bat",
                  "baseball glove", "cell phone", "traffic light", "parking meter", "wine glass", "hair drier",
                  "sports ball", "dining table", "potted plant"]


def raw(name):
    return json.loads(resources.files("lgip_dataset.lexicons").joinpath(f"{name}.json").read_text("utf-8"))


@pytest.mark.parametrize("name", FILES)
def test_every_file_carries_the_version(name):
    assert raw(name)["version"] == LEXICON_VERSION


def test_all_80_coco_categories_with_their_supercategories():
    cats = json.loads((FIXTURES / "coco_categories.json").read_text("utf-8"))["categories"]
    assert len(cats) == 80
    covered = {g.coco_category: g.supercategory for g in LEX.groups.values() if g.coco_category}
    assert covered == {c["name"]: c["supercategory"] for c in cats}
    for name in MULTIWORD_COCO:
        assert any(g.coco_category == name for g in LEX.groups.values())


def test_forms_have_plurals_and_belong_to_one_group():
    seen = {}
    for g in raw("objects")["groups"]:
        assert g["forms"] and all(len(pair) == 2 for pair in g["forms"])
        for word in {w for pair in g["forms"] for w in pair}:
            assert seen.setdefault(word, g["id"]) == g["id"], f"{word!r} in {seen[word]} and {g['id']}"
    assert LEX.noun_forms[("people",)].singular == "person"
    assert LEX.noun_forms[("person",)].plural == "people"
    assert LEX.noun_forms[("hot", "dogs")].number == "plural"
    assert LEX.noun_forms[("sheep",)].number == "both"


def test_synonyms_and_hypernyms_are_never_targets():
    def targets(gid):
        return {g.id for g in LEX.object_targets[gid]}
    assert not targets("man") & {"man", "person"}
    assert not targets("person") & {"man", "woman", "child", "boy", "girl", "baby"}
    assert not targets("boy") & {"child", "person"} and "girl" in targets("boy") and "man" in targets("boy")
    assert "sign" not in targets("stop sign") and "bear" in targets("teddy bear")
    assert not {g for g in LEX.object_targets.values() for g in g if g.uncountable}
    assert LEX.color_group["gray"] == LEX.color_group["grey"]
    assert not set(LEX.color_targets["gray"]) & {"gray", "grey", "silver"}
    assert "brown" not in LEX.color_targets["tan"]


def test_swap_classes_stay_within_their_supercategory():
    """Every swap class lists groups of its own supercategory only (the loader refuses any other), an unsplit
    supercategory is one class, and a group its supercategory's classes leave out has none."""
    from lgip_dataset.perturb.lexicon import _swap_classes

    lex = load_lexicon()
    split = {lex.groups[g].supercategory for g, classes in lex.swap_classes.items()
             if classes != {lex.groups[g].supercategory}}
    for gid, classes in lex.swap_classes.items():
        group = lex.groups[gid]
        if group.supercategory not in split:
            assert classes == {group.supercategory}
    assert lex.swap_classes["dog"] == {"pets"} and lex.swap_classes["motorcycle"] == {"motor vehicles", "two-wheelers"}
    with pytest.raises(RuntimeError, match="swap class 'pets' lists 'car', no animal group"):
        _swap_classes(lex.groups, {"animal": {"pets": ["dog", "car"]}})


def test_common_words_keep_proper_nouns_and_acronyms_out():
    assert {"a", "two", "man", "there", "several", "the"} <= LEX.common_words
    assert not {"tv", "honda", "i", "nintendo", "stephen"} & LEX.common_words


def test_paraphrase_patterns_hold_the_caption_once():
    for family, entries in raw("templates")["families"].items():
        for e in entries:
            assert e["pattern"].count("{c}") == 1 and e["kinds"], e


def test_registry_names_and_kinds():
    assert Perturber.families == ("template", "marker", "object", "color", "count")
    assert {f.kind for f in registry.FAMILIES.values()} == {"paraphrase", "flip"}
    with pytest.raises(ValueError):
        registry.register("object", "flip")(lambda ctx, rng: [])
    with pytest.raises(ValueError):
        registry.register("novel", "other")


def test_a_new_family_plugs_in_without_changing_the_others():
    caption = "A man riding a red bike next to two dogs."
    before = Perturber(k_diff=10_000).perturb(caption, seed=4)

    @registry.register("shout", "flip")
    def shout(ctx, rng):
        return [iter([Variant(ctx.text + "!!", "flip", "shout", ctx.text, ctx.text + "!!",
                              (0, len(ctx.text)))])]
    try:
        after = Perturber(k_diff=10_000, families=["object", "color", "count", "shout"]).perturb(caption, seed=4)
        assert [v for v in after.flips if v.type != "shout"] == before.flips
        assert [v.type for v in after.flips].count("shout") == 1
    finally:
        del registry.FAMILIES["shout"]


def _v(text, family):
    return Variant(text, "flip", family, "x", "y", (0, 1))


def test_selector_round_robin_dedup_and_cap():
    from lgip_dataset.perturb.select import round_robin
    caption = "A dog on a couch."

    def families():
        a = [iter([_v("one", "a"), _v("ONE", "a"), _v("a  dog on a couch.", "a"), _v("two", "a")]),
             iter([_v("three", "a")])]
        b = [iter([_v("One", "b"), _v(" one ", "b"), _v("four", "b"), _v("five", "b")])]
        return [a, b]
    # turns: a, b, a, b, ...; within a family its sites in turn; a variant equal to the caption or to an
    # earlier variant (ignoring case and whitespace) is skipped
    assert [v.text for v in round_robin(families(), 10, caption)] == ["one", "four", "three", "five", "two"]
    assert [v.text for v in round_robin(families(), 3, caption)] == ["one", "four", "three"]
    assert round_robin(families(), 0, caption) == []
