"""The hard flips: one of the paper family's own candidates, chosen by context fit and the text-only
balance rule, with the figures recorded; statistics cross-fitted by image."""
from __future__ import annotations

import json
import math
from collections import Counter

import pytest

from lgip_metric.cli import main
from lgip_dataset.ngram import image_half, sentence_trigrams
from lgip_dataset.perturb import Perturber, grammaticality
from lgip_dataset.perturb.context import CaptionContext
from lgip_dataset.perturb.families import hard, hard_sites
from lgip_dataset.perturb.lexicon import load_lexicon
from lgip_dataset.perturb.places import load_places, place_sites
from lgip_dataset.perturb.plausibility import (
    Counts, FoldedCounts, Plausibility, attach, build_counts, context_words, count_captions, image_fold,
    modifying_colours, scene_nouns, shipped_counts,
)
from lgip_dataset.perturb.registry import CORE, FAMILIES, HARD, group_of, resolve_families
from lgip_dataset.perturb.seeding import KeyedRandom
from lgip_dataset.perturb.variant import Variant
from helpers.paths import SHARED, needs_shared

LEX = load_lexicon()
CAPTIONS = [
    "A few cows grazing on a hillside.",
    "A man riding a horse on a beach.",
    "Two dogs playing in the snow.",
    "A red bus parked on the street.",
    "A giraffe standing next to a tree.",
    "A brown horse standing in a green field.",
    "Three people sitting on a bench near a lake.",
    "A woman holding a white umbrella in the rain.",
    "A cat laying on top of a laptop keyboard.",
    "TWO ELEPHANTS WALKING IN A RIVER.",
    "A plate of food with broccoli and a fork.",
    "A man is serving the ball on a tennis court.",
    "A blue and white train pulling into a station.",
    "One skier is going down a snowy slope.",
]
FOLD_IDS = {f: next(i for i in range(1, 100) if image_fold(i) == f) for f in (0, 1)}


def _hard_flips(caption: str, **kwargs) -> list[Variant]:
    return Perturber(k_same=0, k_diff=6, families="hard", **kwargs).perturb(caption, seed=0).flips


def test_the_hard_group_names_the_three_hard_families():
    assert resolve_families("hard") == HARD
    assert resolve_families("core,hard") == CORE + HARD
    assert all(FAMILIES[name].kind == "flip" and group_of(name) == "hard" for name in HARD)
    assert group_of("object") == "core" and group_of("negation") == "extended"


def test_perturb_cli_prints_hard_flips_with_their_figures(capsys):
    assert main(["perturb", "A red bus parked on the street.", "--json", "--families", "hard"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["flips"] and {f["type"] for f in data["flips"]} <= set(HARD)
    assert all(set(f["plausibility"]) == {"lm_delta", "context_fit", "typicality", "candidates", "tier",
                                                                     "context"} for f in data["flips"])


@pytest.mark.parametrize("caption", CAPTIONS)
def test_every_hard_flip_is_one_of_its_paper_familys_candidates(caption):
    """The contract: the same site, replacement list and agreement edits as the paper family, or as
    the hard families' own sites (one substitution that contradicts and stays grammatical); only
    the choice differs; one per site; the recorded figures are the ones the choice was made with."""
    flips = _hard_flips(caption)
    assert flips == _hard_flips(caption)  # deterministic
    scorer = shipped_counts().for_image(None)
    for flip in flips:
        ctx = CaptionContext(caption, LEX)
        candidates = {v.text: v for site in hard.CANDIDATES[flip.type](ctx, KeyedRandom(0)) for v in site}
        assert flip.text in candidates
        same = candidates[flip.text]
        assert (flip.original, flip.replacement, flip.span) == (same.original, same.replacement, same.span)
        assert flip.kind == "flip"
        figures = flip.plausibility
        assert figures["lm_delta"] == pytest.approx(scorer.lm_delta(caption, flip.text), abs=1e-5)
        kin, least, least_fit, least_typical = hard.TIERS[flip.type][figures["tier"]]
        assert figures["context_fit"] >= least_fit and len(figures["context"]) >= least and figures["candidates"] >= 1
        assert figures["typicality"] >= hard._typicality_floor(least_typical, person=True)
        assert figures["lm_delta"] >= -hard.MAX_DROP[flip.type]
    spans = [(f.type, f.span) for f in flips]
    assert len(spans) == len(set(spans))  # one flip per site


def test_object_flips_contradict_the_caption_and_never_swap_things_for_beings():
    animate, places = {"person", "animal"}, load_places()
    for caption in CAPTIONS:
        for flip in _hard_flips(caption):
            place = places.group_of.get(tuple(flip.original.lower().split()))
            if place is not None:  # a place for another of its class, neither near it nor named
                new = places.group_of[tuple(flip.replacement.lower().split())]
                assert places.class_of[new] == places.class_of[place] and new != place
                assert new not in places.near[place] and new.split()[0] not in caption.lower()
            elif flip.type == "hard_object":
                old = LEX.noun_forms[tuple(flip.original.lower().split())].group
                new = LEX.noun_forms[tuple(flip.replacement.lower().split())].group
                assert new not in LEX.object_related[old], (caption, flip.text)
                old_kind, new_kind = LEX.groups[old].supercategory, LEX.groups[new].supercategory
                assert old_kind == new_kind or not {old_kind, new_kind} & animate  # no person <-> animal <-> thing
                assert new not in {u.form.group for u in CaptionContext(caption, LEX).units.values() if u.form}


def test_replacements_fit_the_verb_and_the_noun():
    """"grazing" takes animals; a horse gets a colour horses are seen in."""
    grazing = [f for f in _hard_flips("A few cows grazing in a field.") if f.type == "hard_object"]
    assert grazing and all(LEX.groups[LEX.noun_forms[(f.replacement.lower(),)].group].supercategory == "animal"
                           for f in grazing)
    colour = [f for f in _hard_flips("A brown horse standing in a field.") if f.type == "hard_color"]
    assert colour and colour[0].replacement.lower() in ("black", "white", "gray", "grey")


def _scorer(deltas: dict[str, float], fits: dict[str, float]):
    """A stand-in for the statistics: given LM deltas and fits per replacement."""
    class Fixed(Plausibility):
        def __init__(self):
            super().__init__(Counts())

        def informative(self, original, context):
            return context

        def context_fit(self, target, original, context):
            return fits[LEX.groups[target.split(":", 1)[1]].singular]

        def lm_delta(self, caption, variant):
            return deltas[variant.split()[1]]

        def typicality(self, target, original, words):
            return 0.0
    return Fixed()


# "cow" (livestock): "sheep" and "horse" are of its swap class; "person" (a person for an animal) and
# "bench" (a thing) never; a candidate must fit every context word ("running")
@pytest.mark.parametrize("deltas, fits, expected", [
    ({"sheep": 2.0, "horse": 0.5, "person": 3.0}, {"sheep": 1.0, "horse": 1.0, "person": 1.0}, {"sheep"}),  # past the margin
    ({"sheep": 0.5, "horse": 0.2, "person": 3.0}, {"sheep": 1.0, "horse": 1.0, "person": 1.0}, {"sheep", "horse"}),  # >= 0
    ({"sheep": -3.0, "horse": -0.5, "person": -1.0}, {"sheep": 1.0, "horse": 1.0, "person": 1.0}, {"horse"}),  # most likely
    ({"sheep": 3.0, "horse": 0.5, "person": -1.0}, {"sheep": 0.0, "horse": 1.0, "person": 1.0}, {"horse"}),  # fit first
    ({"sheep": 3.0, "horse": -0.5, "person": 2.0}, {"sheep": 0.5, "horse": 1.0, "person": 1.0}, {"horse"}),  # all words fit
    ({"sheep": -3.0, "horse": -0.5, "person": 2.0}, {"sheep": 0.0, "horse": 0.0, "person": 1.0}, set()),  # no person
    ({"sheep": -9.0, "horse": -9.5, "person": -9.9}, {"sheep": 1.0, "horse": 1.0, "person": 1.0}, set()),  # too unlikely
    ({"bench": 5.0}, {"bench": 1.0}, set()),  # a thing for an animal: never
])
def test_the_selection_rule(deltas, fits, expected):
    ctx = CaptionContext("A cow running.", LEX)
    attach(ctx, _scorer(deltas, fits))
    candidates = [Variant(f"A {w} running.", "flip", "object", "cow", w, (2, 5)) for w in deltas]
    chosen = {hard.choose(ctx, "hard_object", candidates, KeyedRandom(seed)) for seed in range(40)}
    assert {v.replacement if v else None for v in chosen} == (expected or {None})
    for v in chosen - {None}:
        assert v.type == "hard_object" and v.plausibility["lm_delta"] == deltas[v.replacement]


def test_a_noun_flips_only_within_its_swap_class():
    """A dog may become a cat but never a horse or an elephant (other classes of the animal
    supercategory), knives forks but never plates, and a noun in none of its supercategory's classes
    ("boat", "clock") no noun at all; a supercategory not split is one class;
    vegetables stay vegetables ("A sandwich with meat" never becomes "A carrot with meat") and fruit fruit (no
    "sprinkled pizzas" for donuts); a baby, a sink, a refrigerator, a chair, a mouse or a keyboard takes no hard object
    flip (2.12.0: judged absurd or no contradiction in the development rounds)."""
    ctx = CaptionContext("A dog running.", LEX)
    attach(ctx, _scorer({w: 0.5 for w in ("cat", "horse", "elephant")}, {w: 1.0 for w in ("cat", "horse", "elephant")}))
    candidates = [Variant(f"A {w} running.", "flip", "object", "dog", w, (2, 5)) for w in ("cat", "horse", "elephant")]
    assert {v.replacement for v in (hard.choose(ctx, "hard_object", candidates, KeyedRandom(s)) for s in range(20))} == {"cat"}
    classes = LEX.swap_classes
    assert classes["knife"] & classes["fork"] and not classes["knife"] & classes["plate"]
    assert classes["boat"] == classes["clock"] == frozenset() and classes["boy"] == classes["child"] == {"people but babies"}
    assert classes["man"] == {"people but babies"}
    assert not classes["baby"] | classes["sink"] | classes["refrigerator"] | classes["chair"] | classes["mouse"]
    assert classes["couch"] & classes["bed"] and classes["bus"] & classes["car"] and not classes["bus"] & classes["train"]
    assert classes["pizza"] == classes["sandwich"] and not classes["pizza"] & classes["donut"]
    assert classes["apple"] == classes["banana"] and not classes["carrot"] & classes["sandwich"]
    assert not classes["skateboard"] & classes["baseball glove"] and classes["skateboard"] & classes["surfboard"]


# ------------------------------------------------------------------------------------------ cross-fitting


def test_each_fold_sees_exactly_the_other_folds_captions():
    corpus = [(i, f"A dog number {i} sitting on a red couch.") for i in range(1, 30)] + [
        (i, f"Two cats near {i} blue cars.") for i in range(1, 30)]
    folded = count_captions(corpus, LEX)
    for fold, image_id in FOLD_IDS.items():
        expected = Counts()
        for other, caption in corpus:
            if image_fold(other) != fold:
                expected.add(caption, LEX)
        seen = folded.for_image(image_id).counts
        assert seen.bigrams == expected.bigrams and seen.pairs == expected.pairs
        own = {f"{i}" for i, _ in corpus if image_fold(i) == fold}
        assert not any(w in own for (v, w) in seen.bigrams)  # no word of an own-fold caption


def test_a_captions_own_fold_never_picks_its_flips():
    """The caption's image is in fold A. Captions of fold A attest "sheep" grazing, the other fold
    only "horse" (and the "cow" itself): the flip can only be the horse, and the sheep's captions
    change nothing."""
    mine, other = FOLD_IDS[0], FOLD_IDS[1]
    caption = "A cow grazing in a field."

    def flips(extra_own: int) -> list[Variant]:
        corpus = ([(other, "A horse grazing in a field."), (other, "A cow grazing in a field.")] * 3
                  + [(mine, "A sheep grazing in a field.")] * extra_own)
        folded = FoldedCounts()
        folded += count_captions(corpus, LEX)
        perturber = Perturber(k_same=0, k_diff=6, families="hard_object", plausibility=folded)
        return perturber.perturb(caption, seed=0, image_id=mine).flips

    assert [f.replacement for f in flips(0)] == ["horse"]
    assert flips(5) == flips(0) and flips(5)[0].plausibility == flips(0)[0].plausibility
    context = tuple(flips(5)[0].plausibility["context"])
    assert context == (">grazing", ">field")
    own = count_captions([(mine, "A sheep grazing in a field.")] * 5, LEX)
    assert own.for_image(mine).context_fit("n:sheep", "n:cow", context) == 0.0  # its own fold's captions are not seen
    # the same captions from the other fold do count: the sheep then fits the context
    other_fold = count_captions([(other, "A sheep grazing in a field.")] * 5, LEX)
    assert other_fold.for_image(mine).context_fit("n:sheep", "n:cow", context) == 1.0


def test_build_counts_add_the_build_to_the_shipped_table():
    shipped = shipped_counts()
    built = build_counts([(FOLD_IDS[0], "A zebra grazing on a hillside.")])
    assert built.folds[1].bigrams == shipped.folds[1].bigrams
    assert built.folds[0].bigrams - shipped.folds[0].bigrams == _bigrams_of("A zebra grazing on a hillside.")


def test_the_trigram_lm_learns_captions_outside_the_build_only():
    """The build's own captions add bigrams but no trigram; a --statistics-captions caption (outside) adds both, and
    the shipped table holds the trigrams of its corpus."""
    caption = "A zebra grazing on a hillside."
    shipped = shipped_counts()
    assert sum(shipped.folds[0].trigrams.values()) > 100_000
    own = build_counts([(FOLD_IDS[0], caption)])
    outside = build_counts([(FOLD_IDS[0], caption, True)])
    assert own.folds[0].trigrams == shipped.folds[0].trigrams
    half = image_half(FOLD_IDS[0])
    assert outside.folds[0].trigrams - shipped.folds[0].trigrams == Counter((half, *t) for t in sentence_trigrams(caption))
    assert own.folds[0].bigrams == outside.folds[0].bigrams
    before = shipped.for_image(FOLD_IDS[1]).trigram_delta(caption, caption.replace("zebra", "horse"))
    assert outside.for_image(FOLD_IDS[1]).trigram_delta(caption, caption.replace("zebra", "horse")) < before


def _bigrams_of(caption: str):
    counts = Counts()
    counts.add(caption, LEX)
    return counts.bigrams


def test_text_alone_sits_near_chance_on_the_hard_flips_of_the_embedded_sample():
    """The selection's aim on a small fixture (the embedded sample's captions, cross-fitted as a
    build does): the project's blind bigram and the trigram prefer the caption over its hard flip
    at most 60% of the time (caption-nested, as PR). With 125 training captions per fold these
    blind models are weak (about 0.5 on the paper's object flips too), so the margin over the
    paper's flips is measured on all of val2017 (benchmarks/blind_flips.py). The rule keeps hard
    flips for 108 of the 250 captions (43%; on all of val2017 it is higher, as the build's own
    captions attest more slots)."""
    import numpy as np
    import pandas as pd

    from lgip_dataset import SAMPLE_DIR
    from lgip_dataset.files.hub_io import load_config
    from lgip_metric.statistics import blind
    from lgip_dataset.ngram import TrigramKN

    captions = load_config(SAMPLE_DIR, "captions").to_pandas()
    pairs = list(zip(captions["image_id"], captions["caption"], captions["caption_id"]))
    perturber = Perturber(k_same=0, k_diff=6, families="hard", plausibility=build_counts(
        (image_id, caption) for image_id, caption, _ in pairs))
    rows = pd.DataFrame([{"image_id": image_id, "caption_id": caption_id, "caption": caption, "variant": v.text,
                          "kind": "flip", "type": v.type, "row_id": f"{caption_id}-{i}"}
                         for image_id, caption, caption_id in pairs
                         for i, v in enumerate(perturber.perturb(caption, seed=0, image_id=image_id).flips)])
    hard_rows = rows["type"].str.startswith("hard_").to_numpy()
    assert rows.loc[hard_rows, "caption_id"].nunique() >= 0.4 * len(pairs)
    for model in (None, TrigramKN):
        original, variant = blind.lm_scores(rows, *(() if model is None else (model,)))
        hard_pr = pd.Series(original > variant)[hard_rows].groupby(rows["caption_id"][hard_rows]).mean().mean()
        assert hard_pr <= 0.6, (model, hard_pr)
        assert np.isfinite(original).all()


@pytest.mark.parametrize("caption", [*CAPTIONS[:4], "A brown bear sitting in the grass.",
                                     "A man in a shirt and tie motioning with his hand."])
def test_the_hard_flips_do_not_depend_on_the_other_families_chosen(caption):
    """A probe set of its own: the same hard flips whether or not the paper's flips are built, even
    where a hard flip equals one of the paper's flips (the last two captions)."""
    alone = _hard_flips(caption)
    flips = Perturber(k_same=6, k_diff=6, families="core,hard").perturb(caption, seed=0).flips
    assert [f for f in flips if f.type in HARD] == alone
    if caption.startswith(("A brown bear sitting", "A man in a shirt")):
        assert {f.text for f in alone} & {f.text for f in flips if f.type not in HARD}


@needs_shared("the full coco_karpathy_test.json and captions_val2017.json, which the shipped counts are derived from", "coco")
def test_the_shipped_counts_are_what_the_builder_derives():
    """lexicons/plausibility_counts.json.gz is exactly builders/derive_plausibility_counts.py's output
    for the current lexicon (rerun it when the lexicon's groups or the context rules change)."""
    import gzip
    import importlib.util
    from importlib import resources
    from pathlib import Path

    coco_dir = SHARED / "coco"
    builder_path = Path(__file__).resolve().parents[1] / "builders" / "derive_plausibility_counts.py"
    spec = importlib.util.spec_from_file_location("derive_plausibility_counts", builder_path)
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    data, _ = builder.derive(coco_dir / "annotations" / "coco_karpathy_test.json",
                             [coco_dir / "annotations" / "captions_val2017.json"])
    shipped = json.loads(gzip.decompress(resources.files("lgip_dataset.lexicons").joinpath(
        "plausibility_counts.json.gz").read_bytes()))
    assert data == shipped


# ------------------------------------------------------------------------------------------ slot fit

# Context-word counts per target (shares are taken among the words on the same side): a tree is hung
# on ("<hanging") 40 times in 100 words before it, a camera twice in 400, a banana 10 times in 100;
# "<metallic" is seen with a toilet, once with a banana.
SLOT_COUNTS = Counts(pairs=Counter({
    ("n:tree", "<hanging"): 40, ("n:tree", "<tall"): 60, ("n:tree", ">tall"): 5,
    ("n:camera", "<hanging"): 2, ("n:camera", "<holding"): 398,
    ("n:banana", "<hanging"): 10, ("n:banana", "<ripe"): 89, ("n:banana", "<metallic"): 1,
    ("n:toilet", "<metallic"): 30, ("n:toilet", "<white"): 70,
}))


@pytest.mark.parametrize("target, original, word, fits", [
    ("n:banana", "n:tree", "<hanging", True),  # 10/100 >= 0.1 * 40/100: bananas hang too
    ("n:camera", "n:tree", "<hanging", False),  # 2/400 < 0.1 * 40/100: attested, but far rarer in that slot
    ("n:tree", "n:banana", "<hanging", True),  # more typical than the original: fits
    ("n:banana", "n:toilet", "<metallic", False),  # seen once: below MIN_COOCCURRENCE
    ("n:camera", "n:toilet", "<metallic", False),  # never seen
    ("n:camera", "n:toilet", "<holding", True),  # the original never seen with it: attestation suffices
    ("n:dog", "n:tree", "<hanging", False),  # a target never counted
])
def test_a_replacement_fits_a_slot_attested_nearly_as_often_as_the_original(target, original, word, fits):
    assert Plausibility(SLOT_COUNTS).fits(target, original, word) is fits


def test_only_the_preposition_and_the_words_seen_with_the_original_are_informative():
    scorer = Plausibility(SLOT_COUNTS)
    # "<hanging" (40) and ">tall" (5) are seen with the tree; "<metallic" never; a preposition always counts
    assert scorer.informative("n:tree", ("<hanging", "<metallic", "<@on", ">tall")) == ("<hanging", "<@on", ">tall")
    assert scorer.informative("n:banana", ("<metallic", "<hanging")) == ("<hanging",)  # seen once: too few
    assert scorer.informative("n:dog", ("<hanging",)) == ()


def test_a_colour_modifying_the_site_must_be_seen_with_the_replacement():
    counts = Counts(pairs=Counter({("c:green", ">field"): 5, ("c:green", ">park"): 3, ("c:green", ">beach"): 1,
                                   ("c:brown", ">n:horse"): 9, ("c:brown", ">n:dog"): 4, ("c:white", ">n:dog"): 7,
                                   ("c:white", ">living"): 2}))
    scorer = Plausibility(counts)
    assert scorer.colours_attested("p:park", ("c:green",)) and not scorer.colours_attested("p:beach", ("c:green",))
    assert scorer.colours_attested("n:dog", ("c:brown", "c:white")) and not scorer.colours_attested("n:zebra", ("c:brown",))
    assert scorer.colours_attested("p:living room", ("c:white",)) and scorer.colours_attested("n:zebra", ())
    ctx = CaptionContext("A brown and white dog laying on a green field.", LEX)
    dog = next(u.start for u in ctx.units.values() if u.form.group == "dog")
    field = next(site.first for site in place_sites(ctx))
    assert modifying_colours(ctx, dog) == ("c:brown", "c:white") and modifying_colours(ctx, field) == ("c:green",)
    assert modifying_colours(ctx, 0) == ()


def test_context_fit_is_the_share_of_context_words_that_take_the_replacement():
    scorer = Plausibility(SLOT_COUNTS)
    assert scorer.context_fit("n:banana", "n:tree", ("<hanging", ">tall")) == 0.5
    assert scorer.context_fit("n:camera", "n:tree", ()) == 1.0


# Hand-written captions whose flips the previous rule (window co-occurrence seen once) made absurd or
# unsound, and the replacements the slot fit must no longer choose for the noun (COCO statistics).
ABSURD_BEFORE = [
    ("A metallic toilet sitting in a small bathroom.", "toilet", {"pizza", "cake", "sandwich"}),
    ("some people are sitting on a trolly outside", "people", {"elephants", "dogs", "horses", "cats"}),
    ("A person looks at a very big computer monitor.", "person", {"bear", "dog", "cat", "elephant"}),
    ("A bunch of bananas hanging on the tree", "tree", {"camera", "laptop", "oven", "toilet"}),
    ("A white cake covered in flowers and white frosting.", "cake", {"plate", "bowl", "table"}),
    ("A city road with cars, truck and traffic lights", "cars", {"boats", "airplanes"}),
    ("A dog waits in the basket of the bicycle.", "bicycle", {"table", "bed", "toilet", "oven"}),
    ("A man is in a kitchen making pizzas.", "pizzas", {"tables", "chairs", "beds"}),
    ("A delicious pizza with vegetable toppings stands out on a yellow plate.", "plate",
     {"traffic light", "fire hydrant", "stop sign"}),
    ("A table with a laptop and a lamp on it.", "table", {"man", "woman", "dog", "cat"}),
    ("A woman riding a horse on a beach.", "woman", {"table", "chair", "car"}),
    # judged absurd under the window fit alone: the word that gives it away is far from the slot
    ("A baseball catcher stands ready to catch a ball.", "ball", {"frisbee", "kite"}),
    ("A person riding a wave on top of a surfboard.", "surfboard", {"skateboard", "snowboard", "skis"}),
    ("A person riding a skateboard on the side of the road.", "skateboard", {"snowboard", "surfboard", "skis"}),
    ("A pizza that is sitting on a plate, on a table.", "plate", {"laptop", "keyboard", "book"}),
]


@pytest.mark.parametrize("caption, original, never", ABSURD_BEFORE)
def test_the_slot_fit_no_longer_chooses_the_absurd_replacements(caption, original, never):
    flips = [f for f in _hard_flips(caption) if f.type == "hard_object" and f.original.lower() == original]
    assert not {f.replacement.lower() for f in flips} & never, flips
    for flip in flips:
        _kin, least, least_fit, _typical = hard.TIERS["hard_object"][flip.plausibility["tier"]]
        assert flip.plausibility["context_fit"] >= least_fit and len(flip.plausibility["context"]) >= least


def test_typicality_weighs_every_caption_word_against_the_original():
    """log P(words | replacement) - log P(words | original), smoothed: "catcher" is seen with balls,
    never with frisbees, so a caption about a catcher is far less typical of a frisbee."""
    counts = Counts(pairs=Counter({("n:sports ball", "*catcher"): 30, ("n:sports ball", "*catch"): 30,
                                   ("n:sports ball", "*field"): 40, ("n:frisbee", "*catch"): 50,
                                   ("n:frisbee", "*field"): 50}))
    scorer = Plausibility(counts)
    assert scorer.typicality("n:frisbee", "n:sports ball", ("*catcher", "*catch")) < -3.0
    assert scorer.typicality("n:frisbee", "n:sports ball", ("*catch", "*field")) > 0.0
    assert scorer.typicality("n:frisbee", "n:sports ball", ()) == 0.0
    vocabulary = 3 + 1  # the distinct caption words, plus one unseen
    expected = math.log((0 + 0.5) / (100 + 0.5 * vocabulary)) - math.log((30 + 0.5) / (100 + 0.5 * vocabulary))
    assert scorer.typicality("n:frisbee", "n:sports ball", ("*catcher",)) == pytest.approx(expected)


@pytest.mark.parametrize("caption, classes", [
    ("A man riding a horse on a beach.", {("k:one", "A man"), ("k:one", "a horse")}),
    ("Several dogs are playing in the grass.", {("k:many", "dogs")}),
    ("Two dogs and some cats near a table", {("k:many", "cats"), ("k:one", "a table")}),
    ("People are snowboarding down a hill.", {("k:many", "People")}),
])
def test_counts_said_without_a_number_word_are_typicality_targets(caption, classes):
    """"a dog" counts as k:one and "dogs" (no number word before it) as k:many, with the caption's words only, so
    that a count flip's typicality reads the count a caption says with an article or a bare plural."""
    from lgip_dataset.perturb.plausibility import count_classes

    ctx = CaptionContext(caption, load_lexicon())
    found = {(key, " ".join(t.text for t in ctx.tokens[first:end])) for key, first, end in count_classes(ctx)}
    assert found == classes
    counts = Counts()
    counts.add(caption, load_lexicon())
    keys = {key for key, _ in classes}
    assert {t for t, w in counts.pairs if t in keys} == keys
    assert all(w.startswith("*") for t, w in counts.pairs if t in ("k:one", "k:many"))


# ------------------------------------------------------------------------------------------ hard sites of their own

# Place sites (lexicon places.json): caption -> {place: the groups it may become} (every site of the
# caption); a place is a site only with an article or a preposition before it (across adjectives), when
# it modifies no next word, names no part ("the grass of a field"), and is its group's only mention.
PLACE_SITES = [
    ("A man cooking in a kitchen.", {"kitchen": {"bathroom", "bedroom", "living room", "office", "dining room"}}),
    ("A very large kitchen with a stove.", {"kitchen": {"bathroom", "bedroom", "living room", "office", "dining room"}}),
    ("Two dogs playing in the snow.", {"snow": {"grass", "sand", "dirt"}}),
    ("A person snowboarding in some snow.", {"snow": {"grass", "sand", "dirt"}}),
    ("Cows standing in grass near a lake.", {"grass": {"sand", "snow"}, "lake": {"ocean", "river"}}),
    ("A surfer riding a wave in the ocean.", {"ocean": {"lake", "river", "pond"}}),
    ("A horse standing in a lush green field.", {"field": {"beach", "street", "forest", "parking lot", "desert",
                                                           "mountain"}}),
    ("A dog running on the sandy beach.", {"beach": {"field", "street", "park", "forest", "parking lot", "runway",
                                                     "desert", "mountain"}}),
    ("A bus driving down the road next to a park.", {"street": {"beach", "runway", "desert", "mountain"},  # forest: near
                                                     "park": {"beach", "desert", "mountain", "runway"}}),
    ("A small living room with a couch.", {"living room": {"kitchen", "bathroom", "bedroom", "office",
                                                           "dining room"}}),
    ("A kitchen counter with a bowl of fruit.", {}),  # a modifier of "counter"
    ("A bus on a city street.", {}),  # "city street": a compound
    ("A glass of water on a table.", {}),  # "of": a substance, not a place
    ("Cows in the grass of a field.", {"field": {"beach", "street", "forest", "parking lot", "desert", "mountain"}}),
    ("A kitchen filled with kitchen appliances.", {}),  # mentioned twice: every mention or none
    ("A man holding a water bottle.", {}),
    ("A street sign at the corner.", {}),
    ("People walk down street at night.", {}),  # no article nor preposition before it
    ("A giraffe drinking water.", {}),
]


@pytest.mark.parametrize("caption, expected", PLACE_SITES)
def test_place_sites(caption, expected):
    ctx = CaptionContext(caption, LEX)
    sites = {" ".join(t.low for t in ctx.tokens[s.first:s.end]): set(s.targets) for s in place_sites(ctx)}
    assert {load_places().group_of[tuple(k.split())]: v for k, v in sites.items()} == expected


# Article counts: "a"/"an" before a countable subject noun becomes "two"/"three" with the noun and its verb
# agreeing; no site where a pronoun refers back, a verb would be left unagreed, the noun is a possessor,
# is mentioned twice, is uncountable or is no subject.
ARTICLE_COUNTS = [
    ("A dog is sleeping on a couch.", {"Two dogs are sleeping on a couch.", "Three dogs are sleeping on a couch.",
                                       "Several dogs are sleeping on a couch.", "Some dogs are sleeping on a couch.",
                                       "Many dogs are sleeping on a couch.", "A group of dogs are sleeping on a couch.",
                                       "Dogs are sleeping on a couch."}),
    ("A large dog runs across the field.", {"Two large dogs run across the field.",
                                            "Three large dogs run across the field.",
                                            "Several large dogs run across the field.",
                                            "Some large dogs run across the field.",
                                            "Many large dogs run across the field.",
                                            "A group of large dogs run across the field.",
                                            "Large dogs run across the field."}),
    ("A giraffe standing next to a tree.", {"Two giraffes standing next to a tree.",
                                            "Three giraffes standing next to a tree.",
                                            "Several giraffes standing next to a tree.",
                                            "Some giraffes standing next to a tree.",
                                            "Many giraffes standing next to a tree.",
                                            "A group of giraffes standing next to a tree.",
                                            "Giraffes standing next to a tree.",
                                            # the tree it stands next to is counted too (hard families 2.7.0)
                                            "A giraffe standing next to two trees.",
                                            "A giraffe standing next to three trees.",
                                            "A giraffe standing next to several trees.",
                                            "A giraffe standing next to some trees."}),  # not "many" (2.8.0)
    ("AN ELEPHANT WALKING IN A RIVER.", {"TWO ELEPHANTS WALKING IN A RIVER.", "THREE ELEPHANTS WALKING IN A RIVER.",
                                         "SEVERAL ELEPHANTS WALKING IN A RIVER.", "SOME ELEPHANTS WALKING IN A RIVER.",
                                         "MANY ELEPHANTS WALKING IN A RIVER.", "A GROUP OF ELEPHANTS WALKING IN A RIVER.",
                                         "ELEPHANTS WALKING IN A RIVER."}),
    ("A man holding his phone.", set()),  # "his" refers back to the man
    ("A boy playing tennis runs to the ball.", set()),  # "runs" would stay singular
    ("A man's hat on a table.", set()),  # a possessor
    ("A dog and another dog on a bed.", set()),  # mentioned twice
    ("There is a dog on the bed.", set()),  # not the subject
    ("A couple of dogs on a bed.", set()),  # a quantity phrase, the count family's site
    ("A broccoli on a plate.", set()),  # uncountable
    ("A man riding a horse on a beach.", set()),  # "a horse" is held: "Two men riding a horse" clashes
    ("A man riding horses on a beach.", {"Two men riding horses on a beach.", "Three men riding horses on a beach.",
                                         "Several men riding horses on a beach.", "Some men riding horses on a beach.",
                                         "Many men riding horses on a beach.", "A group of men riding horses on a beach.",
                                         "Men riding horses on a beach."}),
    ("A stop sign on the corner of a street.", {"Two stop signs on the corner of a street.",
                                                "Three stop signs on the corner of a street.",
                                                "Several stop signs on the corner of a street.",
                                                "Some stop signs on the corner of a street.",
                                                "Many stop signs on the corner of a street.",
                                                "Stop signs on the corner of a street."}),  # a thing: no "a group of"
]


# A plural subject with no determiner takes an article: caption -> its flip (None: no site).
BARE_PLURALS = [
    ("Dogs are sleeping on a couch.", "A dog is sleeping on a couch."),
    ("Brown horses grazing in a field.", "A brown horse grazing in a field."),
    ("Elephants walk through the grass.", "An elephant walks through the grass."),
    ("Old men sit on a bench.", "An old man sits on a bench."),
    ("ZEBRAS GRAZING IN A FIELD", "A ZEBRA GRAZING IN A FIELD"),
    ("dogs sleeping on a bed", "a dog sleeping on a bed"),
    ("People standing in a kitchen while they cook.", None),  # "they" refers back
    ("The dogs are sleeping on a couch.", None),  # a determiner: no bare plural
    ("Dogs playing with each other in a yard.", None),  # a reciprocal frame
]


@pytest.mark.parametrize("caption, expected", BARE_PLURALS)
def test_bare_plural_subjects_take_an_article(caption, expected):
    pools = Perturber(families="hard_count").hard_pools(caption)["hard_count"]
    flips = {v.text for pool in pools for v in pool if v.replacement.lower().split()[0] in ("a", "an")}
    assert flips == ({expected} if expected else set())


@pytest.mark.parametrize("caption, expected", ARTICLE_COUNTS)
def test_article_count_flips(caption, expected):
    ctx = CaptionContext(caption, LEX)
    assert {v.text for site in hard_sites.article_count_flips(ctx) for v in site} == expected


# The reverse of the article counts: "two"/"three" counting a subject becomes "a"/"an", so counts go both
# ways; never where a plural pronoun refers back, and never in a caption that says its count twice.
SINGULAR_COUNTS = [
    ("Two dogs are sleeping on a couch.", "A dog is sleeping on a couch."),
    ("Two elephants walk through the grass.", "An elephant walks through the grass."),
    ("Three people stand in the kitchen.", "A person stands in the kitchen."),
    ("TWO DOGS ON A BED.", "A DOG ON A BED."),
    ("Two men sit on a bench while they eat.", None),  # "they" refers back to the men
    ("Two dogs are on a bed with three dogs.", None),  # a second count of the same noun
    ("Three men watch while two of the men play.", None),  # the count said twice
    ("Three people stand around the middle person.", None),  # "middle" needs three
    ("Two zebras stand next to each other.", None),  # a reciprocal frame
    ("Two pairs of skis lean on a wall.", None),  # no countable object subject
    ("Four men sit on a bench.", "A man sits on a bench."),  # any number of two or more
    ("Several dogs are sleeping on a couch.", "A dog is sleeping on a couch."),  # a plural quantifier
    ("Some cups are on the table.", "A cup is on the table."),
    ("A couple of dogs are sleeping on a couch.", "A dog is sleeping on a couch."),  # "couple" is the count itself
    ("A couple of dogs sleep while the other dog plays.", None),  # "other": the count said another way
    ("Very many bags on the floor.", None),  # "very many" is no count to make singular
    ("Several of the dogs are sleeping.", None),  # a partitive
    ("A group of people are standing in a field.", "A person is standing in a field."),
    ("A group of five men stand in a field.", None),  # no "a group of a man"
    ("Two people riding horses on the beach.", None),  # "horses" is held: "A person riding horses" clashes
    ("Two people holding a tomato.", "A person holding a tomato."),  # the held tomato agrees with one person
    ("Two men are dressed in blazers and hats.", None),  # a bare plural no lexicon lists: one man, many blazers
    ("Two dogs with bows on their heads.", None),  # "their" refers back
]


@pytest.mark.parametrize("caption, expected", SINGULAR_COUNTS)
def test_counts_go_both_ways(caption, expected):
    pools = Perturber(families="hard_count").hard_pools(caption)["hard_count"]
    singular = {v.text for pool in pools for v in pool if v.replacement.lower() in ("a", "an")}
    assert singular == ({expected} if expected else set())


@pytest.mark.parametrize("caption", ["Three men watch while two of the men play.", "Both dogs are asleep on a bed.",
                                     "A dog and the other dog on a bed.", "Three people stand around the middle person.",
                                     "A pair of men stand at the corner.", "Two boys sit at a table with three boys."])
def test_no_count_flip_where_the_caption_says_its_count_another_way(caption):
    assert not Perturber(families="hard_count").hard_pools(caption)["hard_count"]
    assert not [f for f in _hard_flips(caption) if f.type == "hard_count"]


@pytest.mark.parametrize("name", sorted(hard.POOL_MAX_DROP))
def test_a_pool_keeps_candidates_down_to_its_familys_drop(name):
    """A count's plural is rare in text ("Desks containing ..."), so its pool goes further below the caption's
    likelihood than an object's or a colour's; none goes past its own bound."""
    drop = hard.POOL_MAX_DROP[name]
    variant = Variant("B", "flip", name, "a", "b", (0, 1))
    ranked = [[(variant, 1.0, -drop, 0.0, 0), (variant, 1.0, -drop - 0.01, 0.0, 0), (variant, 1.0, -8.5, 0.0, 0)]]
    kept = [v.plausibility["lm_delta"] for v in hard.pool(name, ranked, ())]
    assert kept == [-drop] + ([-8.5] if drop >= 8.5 else [])
    assert hard.hard_flip_provenance()["pool_max_drop"][name] == drop


def test_a_noun_used_in_the_plural_is_never_a_singular_replacement():
    pools = Perturber(families="hard_object").hard_pools("A man riding a snowboard down a snowy slope.")
    assert not {v.replacement.lower() for pool in pools["hard_object"] for v in pool} & {"ski"}


@pytest.mark.parametrize("caption, original, other_gender", [
    ("A man works on his laptop at a desk.", "man", {"woman", "girl", "lady"}),
    ("A woman rides her bike down the street.", "woman", {"man", "boy", "guy"})])
def test_a_gendered_noun_keeps_its_gender_where_a_pronoun_refers_to_it(caption, original, other_gender):
    pools = Perturber(families="hard_object").hard_pools(caption)["hard_object"]
    assert not {v.replacement.lower() for pool in pools for v in pool if v.original.lower() == original} & other_gender


# Kin of an object candidate (None: never a hard flip): caption, original, replacement, kin
KIN = [
    ("A dog running in a field.", "dog", "cat", 0),
    ("A man riding a wave.", "man", "woman", 1),  # the other gender's counterpart
    ("A girl riding a wave.", "girl", "boy", 1),
    ("A man riding a wave.", "man", "girl", 0),  # another person, not the counterpart
    ("A man sits on a bench with a dog laying at his feet.", "man", "woman", None),  # "his": the man's or the dog's
    ("A man sits on a bench with a dog laying at his feet.", "man", "girl", None),
    ("A man sits on a bench with a dog laying at his feet.", "man", "boy", 0),  # the same gender: "his" still fits
    ("A laptop on a desk.", "laptop", "table", None),  # a thing of another supercategory
    ("A dog running in a field.", "dog", "man", None),
    ("A man standing in a kitchen.", "kitchen", "bathroom", 0),  # a place of its class (cooking fixes it, 2.17.0)
]


@pytest.mark.parametrize("caption, original, replacement, kin", KIN)
def test_object_kin(caption, original, replacement, kin):
    ctx = CaptionContext(caption, LEX)
    site = next(list(s) for s in hard.object_candidates(ctx, KeyedRandom(0))
                for s in [list(s)] if s and s[0].original.lower() == original)
    variant = next((v for v in site if v.replacement.lower() == replacement), None)
    if variant is None:  # a noun of another swap class is never offered at all
        assert kin is None and hard._swap_kin(ctx, ctx.lex.noun_forms[(original,)].group,
                                                ctx.lex.noun_forms[(replacement,)].group) is None
        return
    first, end = hard._tokens_of(ctx, variant.span)
    assert hard._object_kin(ctx, variant, first, end) == kin


# Hand-written captions and replacements the hard flips never choose there (shipped statistics).
NEVER = [
    ("A man sits on a bench with a dog laying at his feet.", "man", {"woman", "girl", "lady"}),  # pronoun
    ("The home plate with the catcher and someone ready to bat.", "bat", None),  # a verb after "to": no site
    ("A plate of food with broccoli and a fork.", "broccoli", {"tables", "chairs", "beds"}),  # another kind
    ("a man holding a cat in front of a stove", "cat", {"horse", "cow", "elephant", "sheep", "zebra"}),  # scene
    ("Bed in room with candles covered by a mosquito net", "bed", {"cake", "pizza"}),
    ("A dog is sleeping on a couch in a kitchen.", "kitchen", {"beach", "street", "field", "grass"}),  # class
    ("A man wearing cowboy gear is sitting on a horse.", "horse", {"dog", "cat", "sheep", "bear"}),  # "on a"
    ("A group of people on horses on a beach.", "horses", {"dogs", "cats", "birds"}),
    ("The people are sitting outside under a large umbrella.", "umbrella", {"suitcase", "kite", "table"}),
    ("A woman holding a baby next to a caged bird.", "bird", None),  # "caged": never seen with a bird
    ("A woman and a young girl holding a kite on a green field.", "field", {"beach", "desert", "sand", "snow"}),
    ("A large brown horse standing in a field.", "horse", {"zebra", "sheep"}),  # colours seen with it
]


@pytest.mark.parametrize("caption, original, never", NEVER)
def test_hard_flips_never_choose(caption, original, never):
    flips = [f for f in _hard_flips(caption) if f.type == "hard_object" and f.original.lower() == original]
    if never is None:
        assert not flips
    else:
        assert not {f.replacement.lower() for f in flips} & never, flips


# Hand-written captions with hard flips that the shipped statistics choose.
EXPECTED = [
    ("A dog is sleeping on a couch in a kitchen.", "A dog is sleeping on a couch in a living room."),
    ("Three people sitting on a bench near a lake.", "Three people sitting on a bench near an ocean."),
    ("A horse grazing in a field.", "Two horses grazing in a field."),
    ("A dog playing in a yard.", "Two dogs playing in a yard."),
    ("A woman holding a white umbrella in the rain.", "A man holding a white umbrella in the rain."),
    # "curled" is never seen with a couch: it neither blocks the bed nor decides alone
    ("A dog curled up on a couch with blankets and pillows.", "A dog curled up on a bed with blankets and pillows."),
]


@pytest.mark.parametrize("caption, flip", EXPECTED)
def test_hard_flips_of_the_new_sites(caption, flip):
    assert flip in {f.text for f in _hard_flips(caption)}


def test_scene_attestation_asks_for_every_other_noun_and_place():
    counts = Counts(pairs=Counter({("n:horse", "*n:person"): 3, ("n:horse", "*field"): 2, ("n:cat", "*n:oven"): 1}))
    scorer = Plausibility(counts)
    assert scorer.scene_attested("n:horse", ("*n:person", "*field"))
    assert not scorer.scene_attested("n:horse", ("*n:person", "*n:oven"))  # never seen with an oven
    assert scorer.scene_attested("n:cat", ("*n:oven",)) and scorer.scene_attested("n:cat", ())
    assert scene_nouns(("*n:man", "*riding", "*beach", "*living", "*kitchen")) == ("*n:man", "*beach", "*kitchen")


@pytest.mark.parametrize("caption, place, context", [
    ("A dog running on the sandy beach.", "beach", ("<sandy", "<running", "<@on")),
    ("Cows grazing in a field near a barn.", "field", ("<grazing", "<n:cow", ">barn", "<@in")),
    ("A large kitchen with a stove.", "kitchen", ("<large", ">n:oven", )),
])
def test_a_place_is_fitted_with_its_preposition(caption, place, context):
    ctx = CaptionContext(caption, LEX)
    site = next(s for s in place_sites(ctx) if s.group == place)
    assert context_words(ctx, site.first, site.end, "p") == context


@pytest.mark.parametrize("caption, noun, context", [
    ("A man wearing cowboy gear is sitting on a horse.", "horse", ("<sitting", "<@on")),
    ("A cat sleeping under a small wooden table.", "table", ("<wooden", "<small", "<@under")),
    ("A dog running in a field.", "dog", (">running", ">field")),  # no preposition before it
])
def test_a_noun_is_fitted_with_its_preposition(caption, noun, context):
    """"sitting on a horse" is seen, "on a dog" is not: the preposition keeps a rider off a dog."""
    ctx = CaptionContext(caption, LEX)
    unit = next(u for u in ctx.units.values() if ctx.tokens[u.start].low == noun)
    assert context_words(ctx, unit.start, unit.end, "n") == context


@pytest.mark.parametrize("caption", [
    "Two girl that are standing next to a suitcase.",  # a plural count before a singular noun
    "these man are standing near a fire hydrant",  # a plural demonstrative before a singular noun
    "A man that is on the back of a elephant.",  # an article that does not fit the next word
    "A YOUNG GIRL EATING PIZZA DRESSED AS A EGYPTION",
])
def test_a_broken_human_caption_gets_no_hard_flip(caption):
    """The judged failures of a sealed draw: a flip of a caption that is broken English already is an invalid
    pair whatever it changes, so no hard family offers one (the paper's families stay as the paper defines them)."""
    perturber = Perturber(families="hard")
    assert perturber.perturb(caption, seed=0).flips == []
    assert all(not pools for pools in perturber.hard_pools(caption, seed=0).values())


@pytest.mark.parametrize("caption, rule", [  # d: judged development draw 2.1.0, s: sealed draw 2.2.0, v: val2017
    ("Two girl that are standing next to a suitcase.", "plural_count"),  # d
    ("A man that is on the back of a elephant.", "article"),  # d
    ("A living area congaing a couch, table, piano and fireplace.", "spelling"),  # d
    ("A YOUNG GIRL EATING PIZZA DRESSED AS A EGYPTION", "spelling"),  # d
    ("THERE IS A WOMAN THAT IS HOLDNG A TENNIS RACKET", "spelling"),  # v
    ("a man standing in the grass holding a tennis rackett", "spelling"),  # v
    ("A man prepare food in the small kitchen.", "agreement"),  # s: a singular subject, a bare verb
    ("Girls stands in living room with microphone.", "agreement"),  # s: a plural subject, an -s verb
    ("Pizza are on display for the hungry diners", "agreement"),  # v: an auxiliary after any lexicon noun
    ("A young child in a khaki pants and a hitting helmet, holding a small baseball bat while standing in the grass.",
     "singular_before_plural"),  # s
    ("A women is standing on the sidewalk under a sign.", "singular_before_plural"),  # v
    ("A person sitting a the couch in a living room.", "function_words"),  # v, judged broken in the label store
    ("A pile of of oranges and apples piled together.", "function_words"),  # v
    ("A man throws a ball with to small boys in a yard as a dog runs around.", "to_for_two"),  # s
    ("A cat sitting of a TV on top of a TV stand.", "posture_of"),  # s
])
def test_each_rule_finds_its_broken_caption(caption, rule):
    """Broken human captions (the judged draws' and val2017's), each found by its rule: no hard family flips them,
    though each has a site."""
    ctx = CaptionContext(caption, LEX)
    assert grammaticality.RULES[rule](ctx) and hard_sites.broken_caption(ctx)
    perturber = Perturber(families="hard")
    assert perturber.perturb(caption, seed=0).flips == []
    assert all(not pools for pools in perturber.hard_pools(caption, seed=0).values())


@pytest.mark.parametrize("caption", [
    "A European man riding a horse near a barn.",  # "a European": a vowel letter, a consonant sound
    "an orange cat on a red couch",
    "The laptop has an mp3 player next to it.",  # "an mp3": a letter's name
    "A man and woman stand next to a red car.",  # "and" joins the subject: no verb after "man"
    "Two men stand next to a red car.",
    "a group of people stand on a hill",  # the subject is "a group"
    "A dog show in a park with many people.",  # "show" is a noun too
    "The man found the frisbee by the parked cars.",  # a past form
    "a man in a pair of pants holding an umbrella",  # a quantity before a plural
    "a few people walking on a beach",
    "A great many people at a red bus stop.",
    "a bus stop near a road",  # a compound, no verb
    "Two computer screens on a desk next to a lamp.",  # a singular noun modifying a plural after a count
    "A large kite with three orange, white and black fish.",  # a colour, no noun
    "A red sports car parked on a street.",  # a plural noun modifying a noun after "a"
    "a man playing the nintendo wii in a living room",  # a brand in lower case
    "A skateboarder doing a trick near a gazebo.",  # rare, no misspelling
    "A man holding a Zzyzx sign near a streetlight.",  # a capitalised name in a mixed-case caption
    "Four computers are turned on on a desk.",  # a particle before a preposition
    "Two men holding on to kites in a park.",  # "on to": not "two"
    "A pitcher's mound with a ball on it.",  # a possessive
])
def test_sound_english_is_not_taken_for_a_broken_caption(caption):
    """Near misses of the rules: sound captions keep their hard flips."""
    assert not grammaticality.broken(CaptionContext(caption, LEX))


@pytest.mark.parametrize("caption", [
    "Several refrigerators are lined up by a wall.",
    "Boats floating in rows at the dock in the river",
    "Two men are walking together down a street.",
])
def test_a_collective_predicate_keeps_its_things_many(caption):
    """"A refrigerator is lined up by a wall", "A boat floating in rows": no hard count flip makes them one."""
    pools = Perturber(families="hard_count").hard_pools(caption, seed=0).get("hard_count", [])
    assert not any(v.replacement.lower().startswith(("a ", "an ", "one ")) for pool in pools for v in pool)


def test_a_noun_held_by_a_possessive_keeps_the_subject_in_its_number():
    """"A person has their cell phone" is no "A group of people have their cell phone"."""
    pools = Perturber(families="hard_count").hard_pools("A person has their cell phone clipped to their belt.", seed=0)
    assert pools.get("hard_count", []) == []


def _candidate_texts(caption: str) -> set[str]:
    """Every hard object candidate of the caption that has a kin (before any statistics)."""
    ctx = CaptionContext(caption, LEX)
    texts = set()
    for site in map(list, hard.object_candidates(ctx, KeyedRandom(0))):
        if site:
            first, end = hard._tokens_of(ctx, site[0].span)
            texts |= {v.text for v in site if hard._object_kin(ctx, v, first, end) is not None}
    return texts


# Hard object rules of 2.4.0 (development draw of 2.3.0): caption, a candidate never offered, a near miss kept.
OBJECT_RULES_24 = [
    # "girl" is said of young women: no contradiction either way; boy <-> man stays
    ("A woman sitting in front of a giant pizza.", "A girl sitting in front of a giant pizza.",
     "A man sitting in front of a giant pizza."),
    ("A girl on the ground ready to throw a frisbee.", "A woman on the ground ready to throw a frisbee.",
     "A boy on the ground ready to throw a frisbee."),
    ("A man and a woman standing over two pizzas.", "A man and a girl standing over two pizzas.",
     "A man and a boy standing over two pizzas."),
    ("A man and a boy playing frisbee in a park.", None, "A man and a girl playing frisbee in a park."),
    ("A boy riding a skateboard down a street.", None, "A man riding a skateboard down a street."),
    # the caption says the old gender otherwise: clothing, "mens"
    ("A woman in lingerie is laying on a soft bed.", "A man in lingerie is laying on a soft bed.",
     None),
    ("A woman running across a tennis court in a shirt skirt.",
     "A man running across a tennis court in a shirt skirt.", None),
    ("A man pouring wine into two other mens wine glasses", "A woman pouring wine into two other mens wine glasses",
     None),
    ("A man in a suit standing on a street.", None, "A woman in a suit standing on a street."),
    # rail cars of a train
    ("Train with cars in rail yard waiting to load.", "Train with buses in rail yard waiting to load.", None),
    ("A bus parked near cars on a city street.", None, "A bus parked near trucks on a city street."),
    # water is no place (2.12.0): nothing flips into it or out of it
    ("The group paddles the boat down on the water.", "The group paddles the boat down on the sand.", None),
    ("There are several boats in the water that you can see from the beach.",
     "There are several boats in the sand that you can see from the beach.", None),
    ("Horses are standing in an open field in the grass.", "Horses are standing in an open field in the water.",
     "Horses are standing in an open field in the snow."),
    ("A horse standing in the grass near a fence.", "A horse standing in the water near a fence.",
     "A horse standing in the sand near a fence."),
    ("A dog standing in the water near a beach.", "A dog standing in the sand near a beach.", None),
]


@pytest.mark.parametrize("caption, dropped, kept", OBJECT_RULES_24)
def test_hard_object_rules_of_2_4(caption, dropped, kept):
    texts = _candidate_texts(caption)
    assert dropped is None or dropped not in texts
    assert kept is None or kept in texts, sorted(texts)


# Hard count rules of 2.4.0: caption, a count flip never offered, a near miss kept.
COUNT_RULES_24 = [
    ("A little kid holding up two hot dogs in buns.", "A little kid holding up a hot dog in buns.", None),
    ("A little kid holding up two hot dogs.", None, "A little kid holding up a hot dog."),
    ("a wooden bench surrounded by some potted plants", "a wooden bench surrounded by a potted plant", None),
    ("an apple building and a white bus and people", "some apples building and a white bus and people", None),
    ("Two dogs in a park.", None, "A dog in a park."),
    ("Two people on skis going down a hill.", None, "Three people on skis going down a hill."),
    ("A dog is sleeping on a couch.", None, "Dogs are sleeping on a couch."),
]


@pytest.mark.parametrize("caption, dropped, kept", COUNT_RULES_24)
def test_hard_count_rules_of_2_4(caption, dropped, kept):
    pools = Perturber(families="hard_count").hard_pools(caption, seed=0).get("hard_count", [])
    texts = {v.text for pool in pools for v in pool}
    assert dropped is None or dropped not in texts
    assert kept is None or kept in texts, sorted(texts)


# hard families 2.7.0: an article counting an object held or near, (caption, a flip it takes, a flip it never takes)
HELD_COUNTS = [
    ("A baseball player holding a bat next to a dugout.", "A baseball player holding two bats next to a dugout.",
     "A baseball player holding a bat next to two dugouts."),  # "dugout" is no object noun of the lexicon
    ("A bathroom with a toilet and a tub.", "A bathroom with two toilets and a tub.",
     "A bathroom with a toilet and two tubs."),  # "and" counts nothing
    ("A dog sitting next to a bench in a park.", "A dog sitting next to two benches in a park.",
     "Dogs sitting next to two benches in a park."),  # one count at a time
    ("A cake with a knife on a plate.", "A cake with two knives on a plate.", None),
    ("A man cutting a cake with a knife.", None, "A man cutting a cake with two knives."),  # "with" a tool
    ("A man with a tie standing in a room.", None, "A man with two ties standing in a room."),  # a garment
    ("A man with a dog sits on a bench.", None, "A man with two dogs sits on a bench."),  # the subject's verb after
    ("A tower with a clock on it.", None, "A tower with two clocks on it."),  # "it" may refer to the clock
]


@pytest.mark.parametrize("caption,made,never", HELD_COUNTS, ids=[c[0][:30] for c in HELD_COUNTS])
def test_an_article_counts_an_object_held_or_near_but_no_tool_garment_or_referent(caption, made, never):
    ctx = CaptionContext(caption, load_lexicon())
    texts = {v.text for site in hard.CANDIDATES["hard_count"](ctx, KeyedRandom(0)) for v in site}
    assert never is None or never not in texts
    assert made is None or made in texts


# hard families 2.8.0, from the absurd flips of the 2.7.0 sealed draw: (families, caption, a flip it takes, one it never takes)
RULES_28 = [
    ("hard_count", "A baseball player with a bat.", "A baseball player with several bats.",
     "A baseball player with many bats."),  # a held object: "several" and "some", never "many" or "a group of"
    ("hard_count", "A beach chair with an umbrella.", "A beach chair with some umbrellas.",
     "A beach chair with a group of umbrellas."),
    ("hard_count", "A dog is sleeping on a couch.", "A group of dogs are sleeping on a couch.", None),  # a subject still may
    ("hard_count", "Two people have a conversation at an intersection", "Three people have a conversation at an intersection",
     "A person has a conversation at an intersection"),  # a conversation takes two
    ("hard_object", "A large cruise ship is traveling on the ocean.", "A large cruise ship is traveling on the lake.",
     "A large cruise ship is traveling on the pond."),
    ("hard_object", "Giraffe trying to stand up after sitting in the grass",
     "Zebra trying to stand up after sitting in the grass", "Giraffe trying to stand up after sitting in the water"),
    ("hard_object", "Black and yellow umbrellas open on the grass of a park.", None,
     "Black and yellow umbrellas open on the grass of a street."),
    ("hard_object", "A long train filled with nothing but cabooses.", None, "A long bus filled with nothing but cabooses."),
    ("hard_object", "A woman watching another woman walk with a suitcase on wheels.", None,
     "A woman watching another woman walk with an umbrella on wheels."),
    ("hard_object", "A man rides his skateboard near a drain pipe system.", "A boy rides his skateboard near a drain pipe system.",
     "A man rides his surfboard near a drain pipe system."),
    ("hard_object", "an open box of doughnuts on a wooden table", None, "an open box of pizzas on a wooden table"),
    ("hard_color", "An elephant is walking through the green shrubs.", "An elephant is walking through the brown shrubs.",
     "An elephant is walking through the blue shrubs."),
    ("hard_color", "Two jersey cows grazing in a green meadow.", "Two jersey cows grazing in a brown meadow.",
     "Two jersey cows grazing in a black meadow."),
    ("hard_color", "I black cat with yellow eyes sitting in the grass.", "I black cat with green eyes sitting in the grass.",
     "I black cat with white eyes sitting in the grass."),  # "eyes", a form the colour family reads as a verb
]


@pytest.mark.parametrize("family,caption,made,never", RULES_28, ids=[f"{r[0]}: {r[1][:30]}" for r in RULES_28])
def test_hard_rules_of_2_8(family, caption, made, never):
    texts = {v.text for pool in Perturber(families=family).hard_pools(caption).get(family, []) for v in pool}
    assert never is None or never not in texts
    assert made is None or made in texts, sorted(texts)


@pytest.mark.parametrize("caption", ["A black dog with a red collar.", "A white plate with a green apple and a red cup."])
def test_each_color_site_flips_its_own_word_with_its_own_targets(caption):
    """Every hard colour candidate of a site replaces that site's word, with a colour that site allows (2.7.0 and
    before built each site's flips lazily, so every site flipped the last site's word with the first's colours)."""
    ctx = CaptionContext(caption, LEX)
    sites = hard.colors.color_sites(ctx)
    pools = hard.CANDIDATES["hard_color"](ctx, KeyedRandom(0))
    assert len(pools) == len(sites) >= 2
    for site, pool in zip(sites, pools):
        flips = list(pool)
        assert flips and all(v.original.lower() == ctx.tokens[site.index].low for v in flips)
        allowed = set(hard.colors.every_word_site(ctx, site).targets)
        assert {v.replacement.lower() for v in flips} <= allowed
