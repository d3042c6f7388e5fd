"""The hard flips chosen across a set (lgip_dataset.balance): balanced by construction, one per site,
seeded, and on real builds (the embedded sample, 2,000 val2017 captions) within the stated tolerance."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lgip_dataset import balance, hub_io, schema
from lgip_dataset.ngram import words
from lgip_dataset.perturb.variant import Variant
from helpers.paths import needs_shared

VOCABULARY = ("dog", "cat", "horse", "sheep", "cow", "bear")


def _site(caption_id: str, image_id: int, original: str, replacements: list[str], type_: str = "hard_object",
          deltas: list[float] | None = None) -> balance.Site:
    caption = f"A {original} is standing in the field."
    candidates = tuple(
        Variant(caption.replace(original, r, 1), "flip", type_, original, r, (2, 2 + len(original)),
                plausibility={"tier": 0, "lm_delta": (deltas or [0.0] * len(replacements))[k]})
        for k, r in enumerate(replacements))
    return balance.Site(caption_id, image_id, caption, type_, candidates)


def _net(choice: balance.Choice) -> dict[str, Counter]:
    """Per type, every word's removed minus inserted count over the chosen flips."""
    net: dict[str, Counter] = {}
    for per_type in choice.flips.values():
        for type_, flips in per_type.items():
            for flip in flips:
                caption = flip.text  # the variant; its caption is rebuilt from original/replacement
                before = Counter(words(caption.replace(flip.replacement, flip.original, 1)))
                after = Counter(words(caption))
                net.setdefault(type_, Counter()).update(before - after)
                net[type_].subtract(after - before)
    return net


sites_strategy = st.lists(
    st.tuples(st.sampled_from(VOCABULARY), st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=4, unique=True),
              st.integers(0, 30)),
    min_size=1, max_size=40)


@settings(max_examples=25, deadline=None)
@given(sites_strategy)
def test_every_word_is_removed_as_often_as_inserted_within_the_tolerance(raw):
    sites = [_site(f"c{i}", image, original, [r for r in replacements if r != original] or ["bear"])
             for i, (original, replacements, image) in enumerate(raw) if original != "bear" or replacements != ["bear"]]
    choice = balance.choose(sites, seed=0)
    for net in _net(choice).values():
        assert max(map(abs, net.values()), default=0) <= balance.WORD_TOLERANCE
    chosen = [f for per_type in choice.flips.values() for flips in per_type.values() for f in flips]
    per_caption = Counter(f.text.split(" is ")[0] for f in chosen)
    assert sum(len(flips) for per_type in choice.flips.values() for flips in per_type.values()) <= len(sites)
    for caption_id, per_type in choice.flips.items():
        site = next(s for s in sites if s.caption_id == caption_id)
        for flips in per_type.values():
            assert len(flips) == 1 and flips[0] in site.candidates  # one flip per site, one of its candidates
    assert per_caption  # noqa: the strategy always offers a balanced pair or chooses nothing (checked above)


def test_a_one_way_habit_is_not_chosen_and_a_two_way_one_is():
    """Ten dogs can only become cats and no cat a dog: nothing beyond the tolerance is kept; with as many
    cats that can become dogs, every site gets its flip."""
    one_way = [_site(f"c{i}", i, "dog", ["cat"]) for i in range(10)]
    kept = balance.choose(one_way, seed=0)
    assert sum(len(f) for t in kept.flips.values() for f in t.values()) <= balance.WORD_TOLERANCE
    two_way = one_way + [_site(f"d{i}", 100 + i, "cat", ["dog"]) for i in range(10)]
    assert sum(len(f) for t in balance.choose(two_way, seed=0).flips.values() for f in t.values()) == 20


def test_the_text_only_language_model_is_balanced_both_ways():
    """Flips the LM finds less likely than their caption are as many as the ones it finds more likely."""
    sites = [_site(f"c{i}", i, "dog", ["cat"], deltas=[-1.0]) for i in range(12)]
    sites += [_site(f"d{i}", 50 + i, "cat", ["dog"], deltas=[-1.0]) for i in range(12)]
    sites += [_site(f"e{i}", 80 + i, "horse", ["cow"], deltas=[2.0]) for i in range(3)]
    sites += [_site(f"f{i}", 90 + i, "cow", ["horse"], deltas=[2.0]) for i in range(3)]
    report = balance.choose(sites, seed=0).report["per_type"]["hard_object"]
    assert abs(report["lm_prefers_caption"] - report["lm_prefers_flip"]) <= 2


def test_the_choice_is_seeded_and_reproducible():
    sites = [_site(f"c{i}", i % 7, a, [b for b in VOCABULARY if b != a][:3]) for i, a in enumerate(VOCABULARY * 4)]
    first, again = balance.choose(sites, seed=3), balance.choose(sites, seed=3)
    assert first.flips == again.flips and first.report == again.report


def test_images_with_few_sites_come_first():
    """An image with one site is worth more per site than an image with many, so both images get a flip
    when the balance allows only two."""
    crowded = [_site(f"c{i}", 1, "dog", ["cat"]) for i in range(5)]
    alone = [_site("d0", 2, "dog", ["cat"])]
    back = [_site(f"e{i}", 3 + i, "cat", ["dog"]) for i in range(2)]
    choice = balance.choose(crowded + alone + back, seed=0)
    chosen_images = {s.image_id for s in crowded + alone if s.caption_id in choice.flips}
    assert 2 in chosen_images


def _word_balance(folder) -> dict[str, float]:
    """Per hard type of a build: the largest |removed - inserted| share of a word used >= MIN_USES times, and
    the largest absolute imbalance of any word."""
    pairs = hub_io.load_config(folder, schema.PAIRS).to_pandas()
    flips = pairs[pairs["type"].str.startswith("hard_")]
    out = {}
    for type_, rows in flips.groupby("type"):
        net, uses = Counter(), Counter()
        for caption, variant in zip(rows["caption"], rows["variant"]):
            before, after = Counter(words(caption)), Counter(words(variant))
            net.update(before - after)
            net.subtract(after - before)
            uses.update(before - after)
            uses.update(after - before)
        frequent = [abs(net[w]) / uses[w] for w in uses if uses[w] >= balance.MIN_USES]
        out[type_] = (max(frequent, default=0.0), max(map(abs, net.values()), default=0))
    return out


def test_the_embedded_samples_hard_flips_are_balanced():
    from lgip_dataset import SAMPLE_DIR

    figures = _word_balance(SAMPLE_DIR)
    assert set(figures) == {"hard_object", "hard_color", "hard_count"}
    for share, largest in figures.values():
        assert largest <= balance.WORD_TOLERANCE


@needs_shared("the full captions_val2017.json (a 2,000-caption build)", "coco")
@pytest.mark.slow
def test_a_2000_caption_val2017_build_is_balanced_and_counts_go_both_ways(val2017_2000_build):
    out = val2017_2000_build
    for share, largest in _word_balance(out).values():
        assert largest <= balance.WORD_TOLERANCE
    pairs = hub_io.load_config(out, schema.PAIRS).to_pandas()
    counts = pairs[pairs["type"] == "hard_count"]
    diffs = [balance._diff(c, v) for c, v in zip(counts["caption"], counts["variant"])]
    to_one = sum(removed["a"] + removed["an"] < inserted["a"] + inserted["an"] for removed, inserted in diffs)
    from_one = sum(removed["a"] + removed["an"] > inserted["a"] + inserted["an"] for removed, inserted in diffs)
    assert to_one >= 20 and from_one >= 20  # "A dog" -> "Two dogs" and "Two dogs" -> "A dog" both
    assert abs(to_one - from_one) <= 2 * balance.WORD_TOLERANCE  # "a" and "an" each balanced
    assert np.all(pairs.groupby("row_id").size() == 1)


def test_the_build_records_the_balance_and_its_audit_in_the_record_and_the_card():
    import json

    from lgip_dataset import SAMPLE_DIR

    info = json.loads((SAMPLE_DIR / "lgip_build.json").read_text())
    report = info["hard_flips"]["balance"]
    assert report["word_tolerance"] == balance.WORD_TOLERANCE and report["balance_within_folds"]
    card = (SAMPLE_DIR / "README.md").read_text()
    assert "## Hard flips: balanced by construction, audited" in card
    for type_, figures in report["per_type"].items():
        assert figures["largest_word_imbalance"] <= balance.WORD_TOLERANCE
        low, high = figures["learner_interval"]
        assert low <= figures["learner_accuracy"] <= high
        assert f"| {type_} | {figures['flips']:,} |" in card and f"{figures['learner_accuracy']:.3f} [{low:.3f}" in card


_CONSTRAINTS_DIGEST = """
import hashlib, sys
sys.path.insert(0, {tests!r})
from test_balance import VOCABULARY, _site
from lgip_dataset import balance
sites = [_site(f"c{{i}}", i, a, [b for b in VOCABULARY if b != a][:3]) for i, a in enumerate(VOCABULARY * 4)]
digest = hashlib.sha256()
for constraint in balance._Problem(sites, seed=0)._constraints:
    matrix = constraint.A.tocsr()
    for part in (matrix.indptr, matrix.indices, matrix.data, constraint.lb, constraint.ub):
        digest.update(part.tobytes())
print(digest.hexdigest())
"""


def test_the_integer_program_is_the_same_under_any_string_hashing():
    """The program's rows come in a fixed order, whatever PYTHONHASHSEED a process has: their order steers
    which of equally worthy choices the solver returns, so a build must not depend on it."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = _CONSTRAINTS_DIGEST.format(tests=str(Path(__file__).parent))
    digests = {subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONHASHSEED": str(seed)},
                              capture_output=True, text=True, check=True).stdout for seed in range(4)}
    assert len(digests) == 1, digests
