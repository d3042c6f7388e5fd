"""lgip_metric.stats against an independent, slow, obviously-correct loop implementation."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from lgip_metric import stats, stats_bootstrap, stats_inputs
from lgip_metric.stats import LGIPInputError
from helpers.stats_rows import FIELDS, FLIP_TYPES, random_rows

REPO = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------------------
# Random inputs and the loop reference


def _row_value(kind: str, metric: str, original: float, variant: float) -> float:
    if metric == "E_inv":
        return abs(original - variant)
    if metric == "E_sens":
        return original - variant
    return 1.0 if original > variant else 0.0


def reference_block(data: dict, kind: str, type_: str | None, metric: str, pair_level: bool, copies=None):
    """(value, base_pairs, variant_rows, images) by explicit loops; NaN value when nothing qualifies.

    ``copies`` lists image ids with repetition (a bootstrap resample): each copy is a distinct image.
    """
    by_image: dict = {}
    for row in zip(*(data[f] for f in FIELDS)):
        by_image.setdefault(row[5], []).append(row)
    images = copies if copies is not None else list(by_image)
    per_pair: dict = {}
    for copy, image in enumerate(images):
        for original, variant, k, t, caption, _ in by_image[image]:
            if k == kind and (type_ is None or t == type_):
                per_pair.setdefault((copy, image, caption), []).append(_row_value(k, metric, original, variant))
    n_rows = sum(len(v) for v in per_pair.values())
    if not per_pair:
        return math.nan, 0, 0, 0
    if pair_level:
        value = sum(sum(v) for v in per_pair.values()) / n_rows
    else:
        value = sum(sum(v) / len(v) for v in per_pair.values()) / len(per_pair)
    return value, len(per_pair), n_rows, len({(c, i) for c, i, _ in per_pair})


def blocks_of(result: dict):
    """(type or None, kind, metric, block dict) for every number in a statistics result."""
    for kind, metrics in stats.METRICS.items():
        for metric in metrics:
            yield None, kind, metric, result
    for type_, block in result["per_type"].items():
        for metric in stats.METRICS[block["kind"]]:
            yield type_, block["kind"], metric, block


# ------------------------------------------------------------------------------------------
# Point estimates and counts


def grouped(data: dict) -> dict:
    """The rows of ``data`` grouped by image and caption, as a score table holds them (each base
    pair's rows contiguous: the statistics' fast path; shuffled rows take the sorting path)."""
    order = sorted(range(len(data["caption_ids"])), key=lambda i: (data["image_ids"][i], data["caption_ids"][i]))
    return {name: [values[i] for i in order] for name, values in data.items()}


@pytest.mark.parametrize("pair_level", [False, True])
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("rows", ["shuffled", "grouped"])
def test_point_estimates_and_counts_match_loop_reference(seed, pair_level, rows):
    flip_types = FLIP_TYPES if seed % 3 else ("object", "color")  # a missing type
    data = random_rows(seed, flip_types=flip_types, int_ids=seed % 2 == 1)
    data = grouped(data) if rows == "grouped" else data
    result = stats.lgip_statistics(**data, pair_level=pair_level, bootstrap=0)
    assert result["averaging"] == ("pair_level" if pair_level else "base_pair")
    present = set(data["variant_types"])
    assert set(result["per_type"]) == present
    checked = 0
    for type_, kind, metric, block in blocks_of(result):
        value, pairs, rows, images = reference_block(data, kind, type_, metric, pair_level)
        assert block[metric] == pytest.approx(value, abs=1e-12, rel=1e-12)
        assert block["counts"][metric] == {"base_pairs": pairs, "variant_rows": rows, "images": images}
        checked += 1
    assert checked == 3 + sum(len(stats.METRICS[stats.DECLARED_TYPES[t]]) for t in present)


def test_ties_are_not_positive_and_nested_differs_from_pair_level():
    data = {
        "original_scores": [0.3, 0.3, 0.3, 0.3, 0.3, 0.3],  # one s(I, c) per base pair
        "variant_scores": [0.3, 0.1, 0.2, 0.4, 0.3, 0.3],
        "variant_kinds": ["flip", "flip", "flip", "flip", "paraphrase", "paraphrase"],
        "variant_types": ["object", "object", "object", "color", "template", "marker"],
        "caption_ids": ["a", "a", "a", "b", "a", "b"],
        "image_ids": [1, 1, 1, 1, 1, 1],
    }
    nested = stats.lgip_statistics(**data, bootstrap=0)
    # pair a: flips tie, +0.2, +0.1 -> PR 2/3; pair b: -0.1 -> PR 0. Nested: (2/3 + 0) / 2.
    assert nested["PR"] == pytest.approx(1 / 3)
    assert nested["E_sens"] == pytest.approx((0.1 + -0.1) / 2)
    assert nested["E_inv"] == 0.0
    flat = stats.lgip_statistics(**data, pair_level=True, bootstrap=0)
    assert flat["PR"] == pytest.approx(2 / 4)
    assert flat["E_sens"] == pytest.approx(0.2 / 4)


def test_a_base_pair_with_two_original_scores_is_refused():
    data = {"original_scores": [0.3, 0.3, 0.31, 0.5], "variant_scores": [0.2, 0.1, 0.3, 0.4],
            "variant_kinds": ["flip", "paraphrase", "flip", "flip"], "variant_types": ["object", "template", "color", "count"],
            "caption_ids": ["a", "a", "a", "b"], "image_ids": [1, 1, 1, 1]}
    with pytest.raises(LGIPInputError, match=r"original_scores: row 2 gives 0.31 and row 0 gives 0.3 for the same "
                                             r"base pair \(caption_ids 'a', image_ids 1; 1 such row\(s\)\)"):
        stats.lgip_statistics(**data, bootstrap=0)
    data["original_scores"][2] = 0.3 + 1e-9  # the same score recomputed in another batch
    assert stats.lgip_statistics(**data, bootstrap=0)["PR"] == pytest.approx(0.5 * (2 / 2) + 0.5 * 1)


def test_extra_types_are_reported_per_type_with_their_kind():
    data = random_rows(1)
    n = len(data["variant_kinds"])
    data["variant_types"] = [("my_flip" if i % 4 == 0 and k == "flip" else t)
                             for i, (k, t) in enumerate(zip(data["variant_kinds"], data["variant_types"]))]
    with pytest.raises(LGIPInputError, match=r"unknown variant type\(s\) \[.my_flip.\].*extra_types"):
        stats.lgip_statistics(**data, bootstrap=0)
    result = stats.lgip_statistics(**data, extra_types=["my_flip"], bootstrap=0)
    assert result["per_type"]["my_flip"]["kind"] == "flip"
    assert list(result["per_type"])[-1] == "my_flip"
    value, *_ = reference_block(data, "flip", "my_flip", "PR", False)
    assert result["per_type"]["my_flip"]["PR"] == pytest.approx(value, abs=1e-12)
    assert n == len(data["variant_types"])


@pytest.mark.parametrize("pair_level", [False, True])
def test_more_types_than_bits_in_an_integer_match_the_loop_reference(pair_level):
    """70 flip types: the cells of grouped rows no longer fit one integer's bits and are sorted."""
    many = tuple(f"mine_{i:02d}" for i in range(70))
    data = grouped(random_rows(4, n_images=60, flip_types=many))
    result = stats.lgip_statistics(**data, extra_types=many, pair_level=pair_level, bootstrap=0)
    assert len(result["per_type"]) > 62
    for type_, kind, metric, block in blocks_of(result):
        value, pairs, rows, images = reference_block(data, kind, type_, metric, pair_level)
        assert block[metric] == pytest.approx(value, abs=1e-12, rel=1e-12)
        assert block["counts"][metric] == {"base_pairs": pairs, "variant_rows": rows, "images": images}


def test_more_than_256_types_match_the_loop_reference():
    """Types are coded a byte per row up to 256 labels; past that, in 64-bit codes."""
    many = tuple(f"mine_{i:03d}" for i in range(300))
    data = random_rows(5, n_images=150, flip_types=many)
    present = sorted(set(data["variant_types"]))
    assert len(present) > 256 + 2
    result = stats.lgip_statistics(**data, extra_types=many, bootstrap=0)
    assert sorted(result["per_type"]) == present
    for type_, kind, metric, block in blocks_of(result):
        if type_ is None or type_ in present[::40]:
            value, pairs, rows, images = reference_block(data, kind, type_, metric, False)
            assert block[metric] == pytest.approx(value, abs=1e-12, rel=1e-12)
            assert block["counts"][metric] == {"base_pairs": pairs, "variant_rows": rows, "images": images}


@pytest.mark.parametrize("seed", range(4))
def test_cells_of_contiguous_base_pairs_equal_the_sorted_cells(seed):
    """The bit-set cells of rows whose base pairs are contiguous (in any pair order) equal
    ``np.unique``'s: same cell of every row, cells in (pair, stratum) order."""
    rng = np.random.default_rng(seed)
    n_pairs, n_strata = 300, int(rng.integers(1, 63))
    per_pair = rng.integers(1, 9, n_pairs)
    pair = np.repeat(rng.permutation(n_pairs), per_pair)
    stratum = rng.integers(0, n_strata, pair.size)
    cell, cell_pair, cell_stratum = stats_inputs.cells(pair, stratum, n_pairs, n_strata)
    keys, expected = np.unique(pair * n_strata + stratum, return_inverse=True)
    assert cell.tolist() == expected.tolist()
    assert cell_pair.tolist() == (keys // n_strata).tolist()
    assert cell_stratum.tolist() == (keys % n_strata).tolist()


def _only_types(data: dict, types) -> dict:
    keep = [i for i, t in enumerate(data["variant_types"]) if t in types]
    return {name: [data[name][i] for i in keep] for name in FIELDS}


@pytest.mark.parametrize("pair_level", [False, True])
def test_headline_averages_the_core_types_only_and_every_type_is_reported(pair_level):
    """New families (negation, syntactic, ...) are reported per type; Table 1 stays the paper's core."""
    data = random_rows(4)
    rng = np.random.default_rng(4)
    new = {"paraphrase": ("syntactic",), "flip": ("negation", "binding", "spatial")}
    data["variant_types"] = [new[k][int(rng.integers(len(new[k])))] if rng.random() < 0.4 else t
                             for k, t in zip(data["variant_kinds"], data["variant_types"])]
    result = stats.lgip_statistics(**data, pair_level=pair_level, bootstrap=0)
    core = _only_types(data, stats.CORE_TYPES)
    for kind, metrics in stats.METRICS.items():
        for metric in metrics:
            value, pairs, rows, images = reference_block(core, kind, None, metric, pair_level)
            assert result[metric] == pytest.approx(value, abs=1e-12)
            assert result["counts"][metric] == {"base_pairs": pairs, "variant_rows": rows, "images": images}
    for type_ in ("syntactic", "negation", "binding", "spatial"):
        kind = stats.DECLARED_TYPES[type_]
        for metric in stats.METRICS[kind]:
            value, *_ = reference_block(data, kind, type_, metric, pair_level)
            assert result["per_type"][type_][metric] == pytest.approx(value, abs=1e-12)
    assert result["headline_types"] == {"paraphrase": ["template", "marker"], "flip": ["object", "color", "count"]}
    only_new = _only_types(data, ("syntactic", "negation", "binding", "spatial"))
    fallback = stats.lgip_statistics(**only_new, pair_level=pair_level, bootstrap=0)
    assert fallback["headline_types"] == {"paraphrase": ["syntactic"], "flip": ["negation", "binding", "spatial"]}
    assert fallback["PR"] == pytest.approx(reference_block(only_new, "flip", None, "PR", pair_level)[0], abs=1e-12)


def nway_reference(data: dict, type_: str) -> tuple[float, int]:
    """SNARE n-way accuracy by loops: per base pair, s(I,c) strictly above every scramble of the type."""
    scrambles: dict = {}
    for original, variant, _, t, caption, image in zip(*(data[f] for f in FIELDS)):
        if t == type_:
            scrambles.setdefault((image, caption), (original, []))[1].append(variant)
    wins = [all(original > v for v in variants) for original, variants in scrambles.values()]
    return sum(wins) / len(wins), len(wins)


@pytest.mark.parametrize("seed", range(3))
def test_nway_accuracy_matches_a_loop_and_its_interval_covers_it(seed):
    data = random_rows(seed)
    rng = np.random.default_rng(seed)
    data["variant_types"] = [stats.NWAY_TYPES[int(rng.integers(3))] if k == "flip" and rng.random() < 0.5 else t
                             for k, t in zip(data["variant_kinds"], data["variant_types"])]
    result = stats.lgip_statistics(**data, bootstrap=200, seed=1)
    parts = [stats.summarize(**{f: data[f][i::2] for f in FIELDS}) for i in range(2)]
    merged = stats.statistics(parts[0].merge(parts[1]), bootstrap=0)
    for type_ in stats.NWAY_TYPES:
        value, pairs = nway_reference(data, type_)
        block = result["per_type"][type_]
        assert block[stats.NWAY] == pytest.approx(value, abs=1e-12)
        assert block["counts"][stats.NWAY]["base_pairs"] == pairs
        low, high = block["intervals"][stats.NWAY]
        assert low <= value <= high
        assert merged["per_type"][type_][stats.NWAY] == pytest.approx(value, abs=1e-12)
    assert stats.NWAY not in result  # n-way is per scramble type only


# ------------------------------------------------------------------------------------------
# Bootstrap


def _reference_interval(replicates: list[float], confidence: float) -> list[float]:
    alpha = (1 - confidence) / 2
    return list(np.nanquantile(np.array(replicates), [alpha, 1 - alpha]))


@pytest.mark.parametrize("pair_level", [False, True])
def test_bootstrap_matches_loop_bootstrap_on_the_same_resampled_images(pair_level):
    data = random_rows(11, n_images=12, flip_types=("object", "color", "count"))
    n_resamples, seed, confidence = 40, 5, 0.9
    result = stats.lgip_statistics(**data, pair_level=pair_level, bootstrap=n_resamples, seed=seed,
                                   confidence=confidence)
    images = sorted(set(data["image_ids"]))
    index = np.concatenate(list(stats.resample_images(len(images), n_resamples, seed)))
    assert index.shape == (n_resamples, len(images))
    for type_, kind, metric, block in blocks_of(result):
        replicates = [reference_block(data, kind, type_, metric, pair_level, copies=[images[i] for i in row])[0]
                      for row in index]
        expected = _reference_interval(replicates, confidence)
        assert block["intervals"][metric] == pytest.approx(expected, abs=1e-12)
        assert block["intervals"][metric][0] <= block[metric] <= block["intervals"][metric][1] or math.isnan(
            expected[0])
    assert result["bootstrap"] == {"resamples": n_resamples, "seed": seed, "confidence": confidence,
                                   "unit": "image", "method": "percentile"}


@pytest.mark.parametrize("label", [["x"], {"kind": "flip"}, 3])
def test_a_label_that_is_not_a_string_is_refused_with_its_row(label):
    types = np.array(["object", "color", "count"], dtype=object)
    types[1] = label
    with pytest.raises(LGIPInputError, match=r"variant_types must be strings; row 1 is "):
        stats.lgip_statistics([0.3, 0.2, 0.1], [0.1, 0.2, 0.3], ["flip"] * 3, types, ["a", "a", "b"], [1, 1, 2],
                              bootstrap=0)


@pytest.mark.parametrize(("n_images", "n_resamples", "chunk_cells"), [(7, 10, 1 << 22), (7, 10, 21), (40, 33, 100)])
def test_multiplicities_count_the_images_of_each_resample(monkeypatch, n_images, n_resamples, chunk_cells):
    """The worker thread's multiplicities, chunk after chunk, count exactly the images that
    ``resample_images`` draws (also when the chunks are many, filling both buffers in turn)."""
    monkeypatch.setattr(stats_bootstrap, "_CHUNK_CELLS", chunk_cells)
    chunks = [weights.copy() for weights in stats_bootstrap.multiplicities(n_images, n_resamples, seed=3)]
    index = np.concatenate(list(stats.resample_images(n_images, n_resamples, 3)))
    expected = np.stack([np.bincount(row, minlength=n_images) for row in index]).astype(np.float64)
    assert np.array_equal(np.concatenate(chunks), expected)
    assert len(chunks) == -(-n_resamples // max(1, chunk_cells // n_images))


def test_packed_counts_give_the_exact_resampled_sums():
    """Count columns packed several to a float64 column unpack to the exact integer sums of every
    resample, for small, large, zero and too-large-to-share columns."""
    rng = np.random.default_rng(0)
    n_images = 50
    counts = np.stack([rng.integers(0, 6, n_images), rng.integers(0, 1000, n_images), np.zeros(n_images, int),
                       rng.integers(0, 2**45, n_images), rng.integers(0, 3, n_images)], axis=1)
    packed, unpack = stats_bootstrap.packed_counts(counts.astype(np.float64), n_images)
    assert packed.shape[1] < counts.shape[1]
    weights = np.concatenate(list(stats_bootstrap.multiplicities(n_images, 300, seed=1)))
    exact = weights.astype(np.int64) @ counts  # integer arithmetic: the reference
    assert np.array_equal(unpack(weights @ packed), exact.astype(np.float64))
    assert (exact < 2**53).all()


def test_bootstrap_is_seeded():
    data = random_rows(3, n_images=30)
    first = stats.lgip_statistics(**data, bootstrap=300, seed=1)
    assert stats.lgip_statistics(**data, bootstrap=300, seed=1) == first
    assert stats.lgip_statistics(**data, bootstrap=300, seed=2)["intervals"] != first["intervals"]


def test_bootstrap_interval_covers_the_truth_about_95_percent_of_the_time():
    """Statistical property: images with iid per-image effects; the 95% interval covers the mean."""
    covered, trials = 0, 60
    for trial in range(trials):
        rng = np.random.default_rng(100 + trial)
        n_images = 60
        effect = rng.normal(0.02, 0.02, n_images)  # per-image true gap; population mean 0.02
        per_row_image = np.repeat(np.arange(n_images), 6)
        s_original = np.full(per_row_image.size, 0.3)
        s_variant = s_original - effect[per_row_image] - rng.normal(0, 0.001, per_row_image.size)
        kinds = np.where(np.arange(per_row_image.size) % 2, "flip", "paraphrase")
        types = np.where(kinds == "flip", "object", "template")
        result = stats.lgip_statistics(s_original, s_variant, kinds, types, per_row_image, per_row_image,
                                       bootstrap=400, seed=trial)
        low, high = result["intervals"]["E_sens"]
        covered += low <= 0.02 <= high
    assert 0.85 <= covered / trials <= 1.0


# ------------------------------------------------------------------------------------------
# Summaries of row shards merge into the summary of all rows (distributed-style evaluation)


@pytest.mark.parametrize("split", ["rows", "images"])
def test_statistics_of_merged_shards_equal_statistics_of_all_rows(split):
    data = random_rows(21, n_images=40)
    n = len(data["caption_ids"])
    if split == "rows":
        shard = np.random.default_rng(0).integers(0, 3, n)  # base pairs split across shards
    else:  # shards of whole images, grouped: the merged cells are contiguous per base pair
        data = grouped(data)
        shard = np.searchsorted(np.unique(data["image_ids"])[[13, 27]], data["image_ids"], side="right")
    summaries = [stats.summarize(**{f: [data[f][i] for i in np.flatnonzero(shard == s)] for f in FIELDS})
                 for s in range(3)]
    merged = stats.statistics(summaries[0].merge(*summaries[1:]), bootstrap=200, seed=4)
    whole = stats.statistics(stats.summarize(**data), bootstrap=200, seed=4)
    for type_, kind, metric, block in blocks_of(whole):
        other = merged if type_ is None else merged["per_type"][type_]
        assert other[metric] == pytest.approx(block[metric], abs=1e-12)
        assert other["counts"][metric] == block["counts"][metric]
        assert other["intervals"][metric] == pytest.approx(block["intervals"][metric], abs=1e-12)


def test_a_shard_without_flips_can_be_summarized_but_not_reported_alone():
    data = random_rows(2)
    only_paraphrases = [i for i, k in enumerate(data["variant_kinds"]) if k == "paraphrase"]
    summary = stats.summarize(**{f: [data[f][i] for i in only_paraphrases] for f in FIELDS})
    with pytest.raises(LGIPInputError, match="flip set is empty"):
        stats.statistics(summary)


def test_a_kind_without_rows_is_none_when_both_kinds_are_not_required():
    data = random_rows(2)
    for kind, missing in (("paraphrase", "flip"), ("flip", "paraphrase")):
        keep = [i for i, k in enumerate(data["variant_kinds"]) if k == kind]
        subset = {f: [data[f][i] for i in keep] for f in FIELDS}
        result = stats.statistics(stats.summarize(**subset), bootstrap=50, require_both_kinds=False)
        for metric in stats.METRICS[missing]:
            assert result[metric] is None and metric not in result["counts"] and metric not in result["intervals"]
        for metric in stats.METRICS[kind]:
            value, pairs, rows, images = reference_block(subset, kind, None, metric, pair_level=False)
            assert result[metric] == pytest.approx(value, abs=1e-12)
            assert result["counts"][metric] == {"base_pairs": pairs, "variant_rows": rows, "images": images}


def test_one_caption_alone_matches_the_loop_reference():
    """The Space's Probe tab: the statistics of a single (image, caption) pair, a kind possibly absent."""
    data = random_rows(5, n_images=6)
    pairs = list(dict.fromkeys(zip(data["image_ids"], data["caption_ids"])))
    one_kind_only = 0
    for image, caption in pairs:
        keep = [i for i, p in enumerate(zip(data["image_ids"], data["caption_ids"])) if p == (image, caption)]
        one = {f: [data[f][i] for i in keep] for f in FIELDS}
        result = stats.statistics(stats.summarize(**one), bootstrap=0, require_both_kinds=False)
        for type_, kind, metric, block in blocks_of(result):
            value, *_ = reference_block(one, kind, type_, metric, pair_level=False)
            assert block[metric] is None if math.isnan(value) else block[metric] == pytest.approx(value, abs=1e-12)
        one_kind_only += result["E_inv"] is None or result["PR"] is None
    assert 0 < one_kind_only < len(pairs)


# ------------------------------------------------------------------------------------------
# Paired comparison and McNemar


@pytest.mark.parametrize(("a_only", "b_only"), [(0, 0), (3, 3), (0, 5), (7, 2), (10, 25), (400, 460), (4000, 4150)])
def test_mcnemar_exact_matches_scipy_binomtest(a_only, b_only):
    expected = scipy.stats.binomtest(a_only, a_only + b_only, 0.5).pvalue if a_only + b_only else 1.0
    assert stats.mcnemar_exact(a_only, b_only) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_compare_differences_paired_intervals_and_mcnemar_match_loops():
    data = random_rows(8, n_images=12)
    rng = np.random.default_rng(9)
    other = np.round(np.array(data["variant_scores"]) + rng.normal(0, 0.03, len(data["variant_scores"])), 2)
    n_resamples, seed = 30, 3
    result = stats.compare(data["original_scores"], data["variant_scores"], data["original_scores"], other,
                           data["variant_kinds"], data["variant_types"], data["caption_ids"], data["image_ids"],
                           bootstrap=n_resamples, seed=seed)
    data_b = {**data, "variant_scores": list(other)}
    images = sorted(set(data["image_ids"]))
    index = np.concatenate(list(stats.resample_images(len(images), n_resamples, seed)))
    for type_, kind, metric, _ in blocks_of(stats.lgip_statistics(**data, bootstrap=0)):
        entry = result[metric] if type_ is None else result["per_type"][type_][metric]
        a = reference_block(data, kind, type_, metric, False)[0]
        b = reference_block(data_b, kind, type_, metric, False)[0]
        assert entry["a"] == pytest.approx(a, abs=1e-12) and entry["b"] == pytest.approx(b, abs=1e-12)
        assert entry["difference"] == pytest.approx(a - b, abs=1e-12)
        diffs = []
        for row in index:
            copies = [images[i] for i in row]
            diffs.append(reference_block(data, kind, type_, metric, False, copies)[0]
                         - reference_block(data_b, kind, type_, metric, False, copies)[0])
        assert entry["interval"] == pytest.approx(_reference_interval(diffs, 0.95), abs=1e-12)
    flips = [i for i, k in enumerate(data["variant_kinds"]) if k == "flip"]
    pos_a = [data["original_scores"][i] > data["variant_scores"][i] for i in flips]
    pos_b = [data["original_scores"][i] > other[i] for i in flips]
    a_only = sum(x and not y for x, y in zip(pos_a, pos_b))
    b_only = sum(y and not x for x, y in zip(pos_a, pos_b))
    assert (result["mcnemar"]["a_only"], result["mcnemar"]["b_only"]) == (a_only, b_only)
    assert result["mcnemar"]["p_value"] == pytest.approx(scipy.stats.binomtest(a_only, a_only + b_only).pvalue)
    assert result["mcnemar"]["test"].startswith("exact binomial")
    assert set(result["per_type"]["object"]["mcnemar"]) >= {"a_only", "b_only", "p_value"}


def test_comparing_a_model_with_itself_gives_zero_differences():
    data = random_rows(4)
    result = stats.compare(data["original_scores"], data["variant_scores"], data["original_scores"],
                           data["variant_scores"], *(data[f] for f in FIELDS[2:]), bootstrap=50)
    assert result["PR"]["difference"] == 0.0 and result["PR"]["interval"] == [0.0, 0.0]
    assert result["mcnemar"]["p_value"] == 1.0


# ------------------------------------------------------------------------------------------
# Bad input


@pytest.fixture
def good():
    return random_rows(0, n_images=5)


def test_mismatched_lengths_name_every_input(good):
    good["variant_scores"] = good["variant_scores"][:-1]
    with pytest.raises(LGIPInputError, match=r"one entry per variant row.*variant_scores=\d+"):
        stats.lgip_statistics(**good)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_scores_name_the_row(good, bad):
    good["original_scores"][3] = bad
    with pytest.raises(LGIPInputError, match=r"original_scores has 1 NaN/inf value\(s\); the first is row 3"):
        stats.lgip_statistics(**good)


def test_unknown_kind_and_kind_type_mismatch(good):
    kinds = list(good["variant_kinds"])
    good["variant_kinds"][2] = "antonym"
    with pytest.raises(LGIPInputError, match="unknown variant kind 'antonym' at row 2"):
        stats.lgip_statistics(**good)
    good["variant_kinds"] = kinds
    row = good["variant_types"].index("object")
    good["variant_kinds"][row] = "paraphrase"
    with pytest.raises(LGIPInputError, match=f"row {row} has variant type 'object' with kind 'paraphrase'"):
        stats.lgip_statistics(**good)


def test_empty_inputs_and_empty_flip_set(good):
    with pytest.raises(LGIPInputError, match="inputs are empty"):
        stats.lgip_statistics(*([] for _ in FIELDS))
    keep = [i for i, k in enumerate(good["variant_kinds"]) if k == "paraphrase"]
    with pytest.raises(LGIPInputError, match="the flip set is empty.*E_sens and PR cannot be computed"):
        stats.lgip_statistics(**{f: [good[f][i] for i in keep] for f in FIELDS})


@pytest.mark.parametrize(("option", "value"), [("bootstrap", -1), ("bootstrap", 2.5), ("confidence", 1.0)])
def test_bad_options(good, option, value):
    with pytest.raises(LGIPInputError, match=option):
        stats.lgip_statistics(**good, **{option: value})


def test_declared_types_mirror_the_family_registry():
    """stats stays NumPy-only (it ships in the Hub metric module), so it reads the generated table
    variant_types.py: that file must be exactly what the builder writes from the registry, and the
    type lists stats derives from it must be the registry's, with each family's kind and group."""
    import importlib.util

    from lgip_dataset.perturb.registry import CORE, FAMILIES, HARD, IMPORTED_TYPES, NWAY_SCORED, group_of

    spec = importlib.util.spec_from_file_location("derive_variant_types", REPO / "builders" / "derive_variant_types.py")
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    assert (REPO / "lgip_metric" / "variant_types.py").read_text(encoding="utf-8") == builder.render()
    assert stats.DECLARED_TYPES == {**{name: family.kind for name, family in FAMILIES.items()}, **IMPORTED_TYPES}
    assert stats.CORE_TYPES == CORE
    assert stats.HARD_TYPES == HARD == tuple(n for n in FAMILIES if group_of(n) == "hard")
    assert stats.NWAY_TYPES == NWAY_SCORED
    assert set(stats.NWAY_TYPES) == {name for name in FAMILIES if name.startswith("scramble_")}


def test_the_hard_flips_have_their_own_headline_block_beside_table_1():
    """Table 1 (the global E_sens/PR) stays on the paper's flips; the hard flips get result["hard"],
    computed over the hard types alone; a dataset without them has no such block."""
    rows = dict(
        original_scores=[0.3, 0.3, 0.3, 0.3, 0.2, 0.2, 0.2],
        variant_scores=[0.29, 0.1, 0.4, 0.25, 0.1, 0.3, 0.2],
        variant_kinds=["paraphrase", "flip", "flip", "flip", "paraphrase", "flip", "flip"],
        variant_types=["template", "object", "hard_object", "hard_color", "marker", "color", "hard_count"],
        caption_ids=["a", "a", "a", "a", "b", "b", "b"],
        image_ids=[1, 1, 1, 1, 2, 2, 2],
    )
    result = stats.lgip_statistics(**rows, bootstrap=20)
    assert result["headline_types"]["flip"] == ["object", "color"]
    assert result["headline_types"]["hard"] == ["hard_object", "hard_color", "hard_count"]
    assert result["PR"] == pytest.approx((1.0 + 0.0) / 2)  # caption a: object 0.3 > 0.1; b: color 0.2 < 0.3
    # hard: caption a has 0.3<0.4 (no) and 0.3>0.25 (yes) -> 0.5; caption b: 0.2 = 0.2 tie -> 0
    assert result["hard"]["PR"] == pytest.approx((0.5 + 0.0) / 2)
    assert result["hard"]["E_sens"] == pytest.approx(((-0.1 + 0.05) / 2 + 0.0) / 2)
    assert result["hard"]["counts"]["PR"] == {"base_pairs": 2, "variant_rows": 3, "images": 2}
    low, high = result["hard"]["intervals"]["PR"]
    assert low <= result["hard"]["PR"] <= high
    plain = stats.lgip_statistics(**{k: v[:2] + v[4:6] for k, v in rows.items()}, bootstrap=0)
    assert "hard" not in plain and "hard" not in plain["headline_types"]
    compared = stats.compare(rows["original_scores"], rows["variant_scores"], rows["original_scores"],
                             [v + 0.01 for v in rows["variant_scores"]], rows["variant_kinds"], rows["variant_types"],
                             rows["caption_ids"], rows["image_ids"], bootstrap=0)
    assert compared["hard"]["PR"]["a"] == pytest.approx(0.25)
