"""The audit's held-out instruments (lgip_metric.audit.held_out): fresh partitions no build draws, a naive Bayes
learner checked against a reference computed by hand, a trigram LM on other images' captions, the scaling table,
and on real builds: the held-out figure does not rise from a smaller val2017 build to a larger one."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lgip_dataset import SAMPLE_DIR
from lgip_dataset.errors import DataError
from lgip_dataset.selection import adversary, balance
from lgip_metric import audit
from lgip_metric.audit import held_out
from lgip_metric.cli import main
from helpers.paths import REPO, SHARED, needs_shared
from test_audit import mirrored, planted


def test_partitions_are_seeded_near_equal_and_independent_of_row_order_and_of_the_builds():
    ids = [f"img{i}" for i in range(103)] * 2
    first, again = held_out.partitions(ids, seed=4), held_out.partitions(ids[::-1], seed=4)
    assert len(first) == held_out.REPEATS
    for fold, reversed_fold in zip(first, again):
        assert (fold == reversed_fold[::-1]).all()  # a function of the id, not of the row
        sizes = np.bincount(fold[:103], minlength=held_out.FOLDS)
        assert sizes.max() - sizes.min() <= 1
    assert any((a != b).any() for a, b in zip(first, first[1:]))  # each draw its own partition
    assert (held_out.partitions(ids, seed=5)[0] != first[0]).any()
    build = adversary.random_folds(ids, held_out.FOLDS, (balance.STREAM, 4, 1, 0, 0))
    assert (build != first[0]).mean() > 0.5


def _nb_reference(first: np.ndarray, second: np.ndarray, train: np.ndarray, test: np.ndarray, alpha: float) -> np.ndarray:
    """Multinomial naive Bayes by hand: per-class smoothed n-gram frequencies over the training vocabulary,
    margin = sum over the test pair's n-grams of the log-ratio, caption counted minus flip counted."""
    vocabulary = (first[train] + second[train]).sum(axis=0) > 0
    caption_counts, flip_counts = first[train][:, vocabulary].sum(axis=0), second[train][:, vocabulary].sum(axis=0)
    log_ratio = (np.log((caption_counts + alpha) / (caption_counts.sum() + alpha * vocabulary.sum()))
                 - np.log((flip_counts + alpha) / (flip_counts.sum() + alpha * vocabulary.sum())))
    return (first[test][:, vocabulary] - second[test][:, vocabulary]) @ log_ratio


def test_the_naive_bayes_margins_equal_a_reference_on_random_counts():
    import scipy.sparse as sp

    rng = np.random.default_rng(7)
    for _ in range(5):
        first = rng.poisson(0.3, size=(40, 25)).astype(float)
        second = rng.poisson(0.3, size=(40, 25)).astype(float)
        fold = rng.integers(0, 3, size=40)
        groups = np.zeros(40, dtype=np.int64)
        margins = held_out._nb_margins((sp.csr_matrix(first), sp.csr_matrix(second)), fold, groups, 3)
        for f in range(3):
            test, train = np.flatnonzero(fold == f), np.flatnonzero(fold != f)
            expected = _nb_reference(first, second, train, test, held_out.NB_ALPHA)
            np.testing.assert_allclose(margins[test], expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("learner", held_out.LEARNERS)
def test_every_held_out_learner_finds_a_planted_artifact_and_sits_at_chance_on_a_mirrored_set(learner):
    groups = {"planted": ["planted"]}
    found = held_out.learner_figures(planted(), groups, learners=(learner,), repeats=3)["planted"][learner]
    assert found["mean"] == 1.0 and len(found["draws"]) == 3
    groups = {"color": ["color"]}
    chance = held_out.learner_figures(mirrored(), groups, learners=(learner,), repeats=3)["color"][learner]
    assert chance["min"] == chance["max"] == 0.5


def test_the_corpus_leaves_out_the_audited_images_and_texts_and_says_so(tmp_path):
    corpus = tmp_path / "captions.json"
    corpus.write_text(json.dumps({"images": [{"id": 1, "file_name": "a.jpg"}, {"id": 2, "file_name": "b.jpg"}],
                                  "annotations": [{"id": 1, "image_id": 1, "caption": "A dog on a bed."},
                                                  {"id": 2, "image_id": 2, "caption": "A cat on a mat."},
                                                  {"id": 3, "image_id": 2, "caption": "Two birds in a tree."}]}))
    kept, info = held_out.corpus_captions(corpus, audited_images=[1], audited_captions=["Two birds in a tree."])
    assert kept == [(2, "A cat on a mat.")]
    assert {k: v for k, v in info.items() if k != "scored_by"} == {
        "file": "captions.json", "captions": 1, "images": 1, "left_out_audited_images": 1, "left_out_audited_texts": 1}
    with pytest.raises(DataError, match="--lm-corpus .*outside the audited set"):
        held_out.corpus_captions(corpus, audited_images=[1, 2], audited_captions=[])


def test_the_corpus_lm_scores_each_row_with_the_half_of_the_corpus_no_build_counted_for_it():
    """A build chooses an image's flips with the other statistics fold's counts; the corpus LM of a row learns only
    the corpus captions of the row's own fold, so a corpus text in the other fold never moves its score."""
    from lgip_dataset.ngram import TrigramKN, image_fold

    ids = list(range(1, 40))
    same = next(i for i in ids if image_fold(i) == image_fold(1) and i != 1)
    other = next(i for i in ids if image_fold(i) != image_fold(1))
    rows = pd.DataFrame({"image_id": [1], "caption": ["a red bus on a street"], "variant": ["a blue bus on a street"]})
    corpus = [(same, "a blue bus on a street"), (same, "a dog on a bed")]
    original, variant = held_out.corpus_lm_scores(rows, corpus)
    expected = TrigramKN().fit([text for _, text in corpus])
    assert original[0] == pytest.approx(expected.logprob("a red bus on a street"))
    assert variant[0] == pytest.approx(expected.logprob("a blue bus on a street"))
    moved = held_out.corpus_lm_scores(rows, [*corpus, *[(other, "a red bus on a street")] * 3])
    assert moved[0][0] == pytest.approx(original[0]) and moved[1][0] == pytest.approx(variant[0])


def test_lgip_audit_prints_held_out_and_in_sample_tables_and_the_scaling_table(tmp_path, capsys):
    out = tmp_path / "audit.json"
    assert main(["audit", str(SAMPLE_DIR), "--no-progress", "--repeats", "2", "--bootstrap", "50",
                 "--scaling", "100", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    held, in_sample = printed.index("### Held out: instruments no build uses"), printed.index("### In-sample")
    assert held < in_sample < printed.index("### Held out, by size")
    assert "nb learner acc, mean (range)" in printed and "trigram KN LM on other images' captions PR" in printed
    record = json.loads(out.read_text())
    hard = record["blocks"]["hard flips"]
    assert len(hard["learners"]["nb"]["draws"]) == 2 and hard["learners"]["word"]["range"][0] <= hard["learners"]["word"]["accuracy"]
    build = json.loads((SAMPLE_DIR / "lgip_build.json").read_text())["hard_flips"]["balance"]
    assert record["in_sample"]["hard flips"]["accuracy"] == build["hard_set"]["learner_accuracy"]
    assert [e["captions"] for e in record["scaling"]][-1] == record["scaling"][-1]["captions"] > 100
    assert record["settings"]["held_out"]["partition_stream"] == held_out.STREAM != balance.STREAM


@needs_shared("the full captions_val2017.json and the Karpathy test captions", "coco")
def test_lgip_audit_lm_corpus_trains_a_trigram_on_other_images(tmp_path, capsys):
    annotations = SHARED / "coco" / "annotations"
    assert main(["audit", str(SAMPLE_DIR), "--no-progress", "--repeats", "1", "--bootstrap", "0", "--learners", "word",
                 "--lm-corpus", str(annotations / "coco_karpathy_test.json"), "--json", str(tmp_path / "a.json")]) == 0
    record = json.loads((tmp_path / "a.json").read_text())
    assert record["settings"]["corpus"]["captions"] > 20000
    assert 0.0 <= record["blocks"]["hard flips"]["corpus_trigram"]["PR"] <= 1.0
    assert "the corpus LM learnt" in capsys.readouterr().out


@needs_shared("the full captions_val2017.json (two builds of 1,000 and 3,000 captions)", "coco")
@pytest.mark.slow
def test_the_held_out_figure_does_not_rise_from_a_smaller_build_to_a_larger_one(tmp_path):
    """The AFLite concern: a text-only learner gains with data. Two default builds of val2017 (about 1,000 and
    3,000 captions), each audited on fresh partitions: the larger's word learner on the hard flips is no higher."""
    from lgip_dataset.writing.materialize import BuildConfig, build

    figures = []
    for images in (200, 600):
        out = tmp_path / f"b{images}"
        build(BuildConfig(captions=SHARED / "coco/annotations/captions_val2017.json", out=out, num_images=images,
                          captions_per_image=7, families="core,hard"), progress=False)
        source = audit.from_build(out)
        result = audit.audit(source.frame, types=["hard_object", "hard_color", "hard_count"], learners=("word",),
                             repeats=3, bootstrap=0, ngram=False)
        figures.append(result["blocks"]["hard flips"]["learners"]["word"]["accuracy"])
    smaller, larger = figures
    assert larger <= max(smaller, 0.5) + 0.01, figures
    assert 0.4 <= larger <= 0.56, figures


def _reference(version: str) -> dict:
    learners = {k: {"accuracy": a, "range": [a - 0.01, a + 0.01], "draws": [a]} for k, a in
                (("word", 0.51), ("char", 0.49), ("nb", 0.47), ("context", 0.53))}
    figures = {name: {"pairs": 10, "learners": learners, "trigram": {"PR": 0.52}, "corpus_trigram": {"PR": 0.54},
                      "typicality": {"accuracy": 0.48, "range": [0.47, 0.49]},
                      "corpus_typicality": {"accuracy": 0.52, "interval": [0.5, 0.54]}}
               for name in ("hard flips", "hard_object", "hard_color", "hard_count")}
    return {"lgip_version": "0.3.0", "hard_families_version": version, "git_hash": "abc1234", "machine": "x86_64",
            "records": [{"set": "val2017, seed 0", "rules_tuned_on_it": True, "captions": 25014, "audit": {
                "figures": figures, "in_sample": {"hard flips": {"accuracy": 0.5, "interval": [0.49, 0.51]}}}}],
            "judged": {"drawn": 150, "seed": 7, "judges": 3, "kappa_min": 0.8, "kappa_max": 0.9,
                       "shares": {"linguistically invalid": 0.02, "absurd": 0.01, "not a contradiction": 0.0}}}


def test_the_card_shows_the_reference_held_out_figures_as_the_headline_and_notes_another_version(monkeypatch):
    from lgip_dataset.records import held_out_reference

    info = {"hard_flips": {"balance": {}}, "families": {"hard_object": {"version": "9.9.9"}}}
    monkeypatch.setattr(held_out_reference, "load", lambda: _reference("9.9.9"))
    section = held_out_reference.card_section(info)
    assert section.startswith("## Held out: how far text alone goes on instruments the build never used")
    assert "| val2017, seed 0 (rules tuned on it) | 25,014 | 0.510 / 0.490 / 0.470 / 0.530 |" in section
    assert "| 0.520 / 0.480 | 0.520 / 0.480 | 0.520 / 0.480 | 0.520 / 0.480 | 0.540 / 0.520 |" in section
    assert "| 0.540 / 0.520 | 0.540 / 0.540 / 0.540 | 0.500 |" in section
    assert "| corpus trigram PR: hard_object / hard_color / hard_count |" in section
    assert "2.0% linguistically invalid" in section and "kappa 0.80–0.90" in section
    assert "were measured on version" not in section and "`validated` config" not in section
    reference = _reference("9.9.9")
    reference["judged_validated"] = {**reference["judged"], "drawn": 300, "seed": 8, "kappa_min": None,
                                     "kappa_max": None, "same_label": 1.0,
                                     "shares": {"linguistically invalid": 0.0, "absurd": 0.0, "not a contradiction": 0}}
    monkeypatch.setattr(held_out_reference, "load", lambda: reference)
    section = held_out_reference.card_section(info)
    assert ("On a sealed draw of 300 hard flips of the `validated` config of the Karpathy-only build" in section
            and "seed 8; 3 independent judges" in section and "0.0% linguistically invalid, 0.0% absurd" in section
            and "the same label to 100% of the flips, so Cohen's kappa is undefined" in section)
    monkeypatch.setattr(held_out_reference, "load", lambda: _reference("9.9.9"))
    monkeypatch.setattr(held_out_reference, "load", lambda: _reference("1.0.0"))
    assert "This build's hard families are version 9.9.9; the figures were measured on version 1.0.0" in \
        held_out_reference.card_section(info)
    assert held_out_reference.card_section({"families": {}}) is None  # no hard flips, no section


def test_the_card_labels_a_compositional_family_that_misses_the_standard(monkeypatch):
    from lgip_dataset.records import held_out_reference

    reference = _reference("9.9.9")
    reference["compositional"] = {
        "set": "val2017 + Karpathy test, seed 0, --families all", "config": "validated",
        "standard": {"per_type_max": 0.57, "min": 0.45},
        "families": {"spatial": {"pairs": 1002, "images": 700, "meets_standard": False,
                                 "figures": {"word learner": 0.78, "typicality, other folds": 0.63}},
                     "hard_relation": {"pairs": 1073, "images": 900, "meets_standard": True,
                                       "figures": {"word learner": 0.54, "typicality, other folds": 0.52}}}}
    monkeypatch.setattr(held_out_reference, "load", lambda: reference)
    section = held_out_reference.card_section({"hard_flips": {"balance": {}}, "families": {}})
    assert "| spatial | 1,002 | 0.780 | 0.630 | **misses the standard** (every instrument within 0.45–0.57) |" in section
    assert "| hard_relation | 1,073 | 0.540 | 0.520 | meets the standard |" in section


@needs_shared("the full captions_val2017.json", "coco")
def test_the_benchmark_audits_a_validated_config_and_judges_each_family_against_the_standard(tmp_path):
    import importlib.util

    from lgip_dataset.writing.materialize import BuildConfig, build

    spec = importlib.util.spec_from_file_location("held_out_audit", REPO / "benchmarks" / "held_out_audit.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = tmp_path / "all"
    build(BuildConfig(captions=SHARED / "coco/annotations/captions_val2017.json", out=out, num_images=300,
                      families="all"), progress=False)
    result = bench.compositional(out, "val2017, 300 images", seed=0)
    assert set(result["families"]) <= set(bench.COMPOSITIONAL) and result["families"]
    for family in result["families"].values():
        values = [v for v in family["figures"].values() if v is not None]
        assert family["meets_standard"] == (min(values) >= 0.45 and max(values) <= 0.57)
        assert {"word learner", "context learner", "typicality, other folds"} <= set(family["figures"])


def test_the_shipped_reference_was_measured_on_the_hard_families_of_this_package():
    from lgip_dataset.perturb.families.hard import VERSION
    from lgip_dataset.records import held_out_reference

    reference = held_out_reference.load()
    assert reference is not None and reference["hard_families_version"] == VERSION
    assert {"val2017, seed 0", "val2017, seed 1"} <= {r["set"] for r in reference["records"]}
    held = [r for r in reference["records"] if not r["rules_tuned_on_it"]]
    assert {r["set"].split(",")[0] for r in held} == {"Karpathy test images not in val2017", "val2017 + Karpathy test"}
    assert all("typicality" in f and "context" in f["learners"] for r in reference["records"]
               for f in r["audit"]["figures"].values())
    assert reference["judged"]["judges"] >= 2 and reference["judged"]["drawn"] >= 150


def test_a_later_run_replaces_its_sets_in_place_and_names_its_commit():
    import importlib.util

    spec = importlib.util.spec_from_file_location("held_out_reference_builder", REPO / "builders" / "held_out_reference.py")
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    version = {"lgip_version": "0.2.0", "hard_families_version": "2.11.0"}

    def record(name, captions, tag):
        return {"set": name, "captions": captions, "audit": {"tag": tag}}

    earlier = {**version, "git_hash": "a" * 40, "judged": {"drawn": 1}, "compositional": {"set": "first"},
               "records": [record("val2017 subset, seed 0", 6003, 1), record("val2017 subset, seed 0", 12005, 1),
                           record("val2017, seed 0", 25014, 1), record("val2017 + Karpathy test, seed 0", 47058, 1)]}
    again = {**version, "git_hash": "b" * 40, "compositional": {"set": "second"},
             "records": [record("val2017, seed 0", 25014, 2), record("Karpathy test images not in val2017, seed 0",
                                                                      22044, 2)]}
    out = builder.joined([earlier, again], [REPO / "earlier.json", REPO / "again.json"])
    assert [(r["set"], r["captions"], r["audit"]["tag"]) for r in out["records"]] == [
        ("val2017 subset, seed 0", 6003, 1), ("val2017 subset, seed 0", 12005, 1), ("val2017, seed 0", 25014, 2),
        ("val2017 + Karpathy test, seed 0", 47058, 1), ("Karpathy test images not in val2017, seed 0", 22044, 2)]
    assert out["records"][2]["git_hash"] == "b" * 40 and "git_hash" not in out["records"][0]
    assert out["git_hash"] == "a" * 40 and out["compositional"] == {"set": "second", "git_hash": "b" * 40}
    assert "judged" not in out
    with pytest.raises(SystemExit, match="again.json: hard_families_version 2.12.0"):
        builder.joined([earlier, {**again, "hard_families_version": "2.12.0"}], [REPO / "earlier.json", REPO / "again.json"])


def test_a_sealed_draws_verdicts_count_majorities_and_leave_an_undefined_kappa_undefined(tmp_path):
    import importlib.util

    from sklearn.metrics import cohen_kappa_score

    spec = importlib.util.spec_from_file_location("held_out_reference_builder", REPO / "builders" / "held_out_reference.py")
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    key = [{"item": k, "type": "hard_color", "caption": f"a red car {k}", "variant": f"a blue car {k}",
            "original_is": "A"} for k in range(1, 5)]
    (tmp_path / "key.json").write_text(json.dumps(key), encoding="utf-8")

    def labels(name, *given):
        path = tmp_path / f"{name}.tsv"
        path.write_text("".join(f"{k}\t{label}\t\n" for k, label in enumerate(given, 1)), encoding="utf-8")
        return path

    agreeing = [labels(f"v{j}", *["valid"] * 4) for j in range(3)]
    verdicts = builder.judged(tmp_path / "key.json", agreeing, seed=5)
    assert verdicts["shares"]["valid"] == 1.0 and verdicts["kappa_min"] is None and verdicts["same_label"] == 1.0
    mixed = [labels("a", "valid", "absurd", "valid", "valid"), labels("b", "valid", "absurd", "absurd", "valid"),
             labels("c", "valid", "valid", "valid", "valid")]
    verdicts = builder.judged(tmp_path / "key.json", mixed, seed=5)
    assert verdicts["counts"] == {"valid": 3, "linguistically invalid": 0, "absurd": 1, "not a contradiction": 0}
    assert verdicts["same_label"] == 0.5 and verdicts["drawn"] == 4 and verdicts["judges"] == 3
    first, second = ["valid", "absurd", "valid", "valid"], ["valid", "absurd", "absurd", "valid"]
    assert verdicts["kappa_max"] == pytest.approx(cohen_kappa_score(first, second))  # the one pair both labels vary in
    assert verdicts["kappa_min"] == pytest.approx(0.0)  # judge c's one label against a's (or b's): no better than chance


def test_a_given_compositional_build_is_named_from_its_own_record(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("held_out_audit", REPO / "benchmarks" / "held_out_audit.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    (tmp_path / "lgip_build.json").write_text(json.dumps(
        {"source": {"captions": "mine.json"}, "counts": {"captions": 22044}, "seed": 3}), encoding="utf-8")
    assert bench.compositional_set(tmp_path) == "mine.json (22,044 captions), seed 3, --families all"
