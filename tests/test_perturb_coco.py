"""The engine over all 25,014 real COCO val2017 captions: global invariants and counts."""
from __future__ import annotations

import json
import re
from collections import Counter, defaultdict

import pytest

from lgip_dataset.perturb import Perturber
from lgip_dataset.perturb.invariants import result_problems
from lgip_dataset.perturb.lexicon import load_lexicon
from helpers.paths import SHARED, needs_shared

pytestmark = needs_shared("all 25,014 captions of the full captions_val2017.json", "coco")


@pytest.fixture(scope="module")
def captions():
    data = json.loads((SHARED / "coco" / "annotations" / "captions_val2017.json").read_text("utf-8"))
    return [a["caption"] for a in data["annotations"]]


@pytest.fixture(scope="module")
def results(captions):
    p = Perturber()
    return [p.perturb(c, seed=0) for c in captions]


def test_every_result_keeps_the_contract(captions, results):
    assert len(captions) == 25_014
    bad = [(r.caption, problems) for r in results if (problems := result_problems(r, 6, 6))]
    assert bad == []


def test_counts_per_family_and_type(results):
    families = Counter(v.type for r in results for v in r.paraphrases + r.flips)
    with_type = Counter(t for r in results for t in {v.type for v in r.flips})
    # lower bounds well under the lexicon 1.1.0 numbers (template 73.9k, marker 74.9k, object 102k,
    # color 13.6k, count 10.3k): a broken family or lexicon drops far below them
    assert families["template"] > 60_000 and families["marker"] > 60_000
    assert families["object"] > 90_000 and families["color"] > 10_000 and families["count"] > 6_000
    assert with_type["color"] > 3_000 and with_type["count"] > 2_000
    assert all(r.paraphrases for r in results)  # every COCO caption is wrappable
    assert sum(bool(r.flips) for r in results) > 0.8 * len(results)  # 1.1.0: 84.6% (unsound sites dropped)


def test_multiword_nouns_are_never_split(results):
    """A flip never takes part of a longer lexicon noun: not the "dog" of "hot dog", not the "teddy" of
    "teddy bear"."""
    around = defaultdict(list)  # flipped words -> (regex for the words before, regex for the words after)
    for key in (k for k in load_lexicon().noun_forms if len(k) > 1):
        for n in range(1, len(key)):
            around[key[n:]].append((re.compile(r"\b" + r"\s+".join(key[:n]) + r"\s+$"), None))
            around[key[:n]].append((None, re.compile(r"\s+" + r"\s+".join(key[n:]) + r"\b")))
    for r in results:
        low = r.caption.lower()
        for v in r.flips:
            for before, after in around.get(tuple(v.original.lower().split()), ()):
                assert not (before and before.search(low[:v.span[0]])), (r.caption, v)
                assert not (after and after.match(low[v.span[1]:])), (r.caption, v)


def test_sense_rules_hold(results):
    lex = load_lexicon()
    for r in results:
        low = r.caption.lower()
        for v in r.flips:
            rest = low[v.span[1]:].split()
            nxt = re.sub(r"\W+$", "", rest[0]) if rest else ""
            if v.type == "color":
                assert nxt not in lex.not_color_before, (r.caption, v)
            if v.type == "count" and v.original.lower() == "one":
                assert nxt not in ("of", "another", "way", "is", "or") and not nxt.endswith("ing"), (r.caption, v)
            if v.type == "object" and v.original.lower() == "orange":
                assert not low[v.span[1]:].startswith((" cat", " and white", " juice")), (r.caption, v)


def test_reverse_order_gives_the_same_results(captions, results):
    p = Perturber()
    sample = list(range(0, len(captions), 50))
    assert [p.perturb(captions[i], seed=0) for i in reversed(sample)] == [results[i] for i in reversed(sample)]
