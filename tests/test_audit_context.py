"""The audit's context instruments: context typicality against a plain reference, planted artifacts found, a
set with none at chance, and the figures in the audit's JSON, markdown and command."""
from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from lgip_metric import audit
from lgip_dataset.selection import adversary, context_typicality as context
from lgip_metric.audit import held_out

KITCHEN = ["oven", "stove", "sink", "counter", "fridge"]
BEACH = ["surfboard", "wave", "sand", "ocean", "towel"]


def _reference_margin(caption: str, variant: str, corpus: list[str]) -> float:
    """The typicality margin written out word by word: mean over (changed word, context word) of smoothed PMI."""
    import re

    def words(text):
        return set(re.findall(r"[a-z0-9]+(?:'[a-z]+)?", text.lower()))

    docs = [words(t) for t in corpus]
    before, after = words(caption), words(variant)
    shared = sorted((before & after) - adversary.function_words())
    removed, inserted = sorted(before - after), sorted(after - before)
    vocabulary = before | after
    n = Counter(w for d in docs for w in d if w in vocabulary)
    total, size = len(docs), len(set().union(*docs))

    def pmi(w, c):
        prior = (n[w] + 1) / (total + size)
        joint = sum(1 for d in docs if w in d and c in d)
        return math.log((joint + context.ALPHA * prior) / (n[c] + context.ALPHA) / prior)

    def mean(changed):
        if not changed or not shared:
            return 0.0
        return sum(pmi(w, c) for w in changed for c in shared) / (len(changed) * len(shared))
    return mean(removed) - mean(inserted)


def test_typicality_margins_equal_a_word_by_word_reference():
    corpus = ["a man cooking at the stove in a kitchen", "a kitchen with an oven and a sink",
              "a surfer riding a wave at the beach", "a dog on the beach with a towel", "a cat sleeping on a sink",
              "two dogs in a kitchen"]
    pairs = [("a kitchen with a stove", "a kitchen with a surfboard"), ("a dog on the beach", "two dogs on the beach"),
             ("a cat on a sink", "a cat on a wave"), ("a red bus", "a blue train")]
    scorer = context.Pairs([c for c, _ in pairs], [v for _, v in pairs])
    got = scorer.typicality_margins(corpus, np.arange(len(pairs)))
    want = [_reference_margin(c, v, corpus) for c, v in pairs]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert got[0] > 0 and got[2] > 0 and got[3] == 0.0  # no shared content word: a tie


def _scene_rows(images: int, planted: bool, seed: int = 0) -> pd.DataFrame:
    """Captions of kitchen and beach scenes; each flip swaps one scene object for another. ``planted``: always for
    an object of the *other* scene (text alone can tell); else for one of the same scene (it cannot)."""
    rng = np.random.default_rng(seed)
    rows = []
    for image in range(images):
        scene, other = (KITCHEN, BEACH) if image % 2 else (BEACH, KITCHEN)
        place = "kitchen" if scene is KITCHEN else "beach"
        for k in range(3):
            a, b = rng.choice(len(scene), 2, replace=False)
            caption = f"a {scene[a]} and a {scene[b]} in the {place} number {k}"
            new = other[rng.integers(len(other))] if planted else scene[[i for i in range(len(scene)) if i not in (a, b)][
                rng.integers(3)]]
            rows.append({"image_id": image, "caption_id": f"c{image}-{k}", "caption": caption, "kind": "flip",
                         "type": "hard_object", "variant": caption.replace(scene[a], new, 1),
                         "variant_id": f"c{image}-{k}-f"})
    return pd.DataFrame(rows)


def test_a_flip_out_of_its_scene_is_found_by_typicality_and_the_context_learner():
    rows = _scene_rows(60, planted=True)
    result = audit.audit(rows, bootstrap=0, learners=("word", "context"), ngram=False)
    entry = result["per_type"]["hard_object"]
    assert entry["typicality"]["accuracy"] > 0.9
    assert entry["learners"]["context"]["accuracy"] > 0.9


def test_a_flip_within_its_scene_reads_near_chance():
    rows = _scene_rows(60, planted=False)
    result = audit.audit(rows, bootstrap=0, learners=("context",), ngram=False)
    entry = result["per_type"]["hard_object"]
    assert 0.35 < entry["typicality"]["accuracy"] < 0.65
    assert 0.35 < entry["learners"]["context"]["accuracy"] < 0.65
    assert len(entry["typicality"]["draws"]) == held_out.REPEATS


def test_the_corpus_typicality_reads_each_row_by_its_own_statistics_fold():
    """A corpus whose captions put the beach objects in kitchens reverses the reading: the corpus, not the audited
    captions, is what it learns from."""
    from lgip_dataset.ngram import image_fold

    rows = _scene_rows(60, planted=True)
    swapped = [(1000 + i, f"a {BEACH[i % 5]} and a {BEACH[(i + 1) % 5]} in the kitchen") for i in range(200)]
    swapped += [(2000 + i, f"a {KITCHEN[i % 5]} and a {KITCHEN[(i + 1) % 5]} at the beach") for i in range(200)]
    assert {image_fold(i) for i, _ in swapped} == {0, 1}
    margins = held_out.corpus_typicality_margins(rows, swapped)
    kitchen_rows = rows["caption"].str.contains("kitchen").to_numpy()
    assert (margins[kitchen_rows] < 0).mean() > 0.9


def test_the_command_reports_the_context_instruments_held_out(tmp_path, capsys):
    from lgip_metric.cli import main

    rows = _scene_rows(40, planted=True)
    pairs = tmp_path / "pairs.csv"
    rows.to_csv(pairs, index=False)
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps([{"image": f"val2014/COCO_val2014_{1000 + i:012d}.jpg",
                                   "caption": [f"a {KITCHEN[i % 5]} and a {KITCHEN[(i + 2) % 5]} in the kitchen",
                                               f"a {BEACH[i % 5]} on the beach"]} for i in range(60)]))
    out = tmp_path / "audit.json"
    assert main(["audit", "--pairs", str(pairs), "--lm-corpus", str(corpus), "--bootstrap", "50", "--json", str(out),
                 "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "context typicality, other folds" in printed and "context typicality, corpus" in printed
    entry = json.loads(out.read_text())["per_type"]["hard_object"]
    assert entry["corpus_typicality"]["accuracy"] > 0.9 and len(entry["corpus_typicality"]["interval"]) == 2
    assert entry["learners"]["context"]["accuracy"] > 0.9


@pytest.mark.parametrize("caption, variant, removed, inserted, shared", [
    ("A dog is on the couch.", "Two dogs are on the couch.", ["a", "dog", "is"], ["are", "dogs", "two"], ["couch"]),
    ("a sink in a kitchen", "a sink in a bathroom", ["kitchen"], ["bathroom"], ["sink"]),
])
def test_a_pair_splits_into_changed_and_shared_content_words(caption, variant, removed, inserted, shared):
    assert context.split_pair(caption, variant) == (removed, inserted, shared)
