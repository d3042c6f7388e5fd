"""The artifact audit: the learned text-only adversary (lgip_dataset.selection.adversary) and `lgip audit`."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression

from lgip_dataset import SAMPLE_DIR
from lgip_dataset.selection import adversary
from lgip_metric import audit
from lgip_metric.cli import main

NOUNS = ["dog", "cat", "man", "bus", "car", "horse", "woman", "train"]
COLORS = ["red", "blue", "green", "white", "black"]


def planted(n_images: int = 60, per_image: int = 4, seed: int = 0) -> pd.DataFrame:
    """Pairs whose negative is the caption without the word "sitting": a word that is only ever removed."""
    rng = np.random.default_rng(seed)
    records = []
    for image in range(n_images):
        for k in range(per_image):
            noun, color = NOUNS[int(rng.integers(len(NOUNS)))], COLORS[int(rng.integers(len(COLORS)))]
            caption = f"a {color} {noun} sitting on the street"
            records.append({"image_id": 1000 + image, "caption": caption, "variant": caption.replace(" sitting", ""),
                            "type": "planted"})
    return pd.DataFrame(records)


def mirrored(n_images: int = 60, seed: int = 1) -> pd.DataFrame:
    """Color flips in both orientations on every image: (c, c†) and (c†, c). A linear learner without
    intercept gives the two opposite margins, so exactly half is right whatever it learned."""
    rng = np.random.default_rng(seed)
    records = []
    for image in range(n_images):
        noun = NOUNS[int(rng.integers(len(NOUNS)))]
        a, b = rng.choice(COLORS, 2, replace=False)
        one, two = f"a {a} {noun} on a road", f"a {b} {noun} on a road"
        records += [{"image_id": image, "caption": one, "variant": two, "type": "color"},
                    {"image_id": image, "caption": two, "variant": one, "type": "color"}]
    return pd.DataFrame(records)


def margins_of(frame: pd.DataFrame, **options) -> np.ndarray:
    return adversary.out_of_fold_margins(frame["caption"].tolist(), frame["variant"].tolist(),
                                         frame["image_id"].to_numpy(), **options)


@pytest.mark.parametrize("learner", adversary.LEARNERS)
def test_the_learner_finds_a_planted_artifact_and_sits_at_chance_on_a_mirrored_set(learner):
    frame = planted()
    margins = margins_of(frame, learner=learner)
    assert adversary.held_out_accuracy(margins) == 1.0
    low, high = adversary.accuracy_interval(margins, frame["image_id"], bootstrap=200)
    assert low > 0.95
    symmetric = mirrored()
    margins = margins_of(symmetric, learner=learner, types=symmetric["type"])
    assert np.allclose(margins[0::2], -margins[1::2])
    assert adversary.held_out_accuracy(margins) == 0.5
    low, high = adversary.accuracy_interval(margins, symmetric["image_id"], bootstrap=200)
    assert low <= 0.5 <= high


def test_no_margin_comes_from_a_learner_that_saw_the_image():
    """Each image's pairs remove a token no other image has: in-sample the learner is perfect, held out
    it has never seen the token (margin 0, accuracy exactly 0.5)."""
    originals = [f"qx{image:03d} a photo of a dog" for image in range(80) for _ in range(3)]
    variants = ["a photo of a dog"] * len(originals)  # no n-gram of its own: the token's are all it lacks
    image_ids = [image for image in range(80) for _ in range(3)]
    margins = adversary.out_of_fold_margins(originals, variants, image_ids, learner="word")
    assert (margins == 0).all() and adversary.held_out_accuracy(margins) == 0.5
    vectorizer = CountVectorizer(**{k: v for k, v in adversary.SETTINGS["word"].items()}).fit(originals + variants)
    x = vectorizer.transform(originals) - vectorizer.transform(variants)
    in_sample = LogisticRegression(**adversary.CLASSIFIER).fit(sp.vstack([x, -x]), np.r_[np.ones(240), np.zeros(240)])
    assert adversary.held_out_accuracy(x @ in_sample.coef_.ravel()) == 1.0
    assert adversary.out_of_fold_margins(originals[:3], variants[:3], image_ids[:3]).tolist() == [0.0] * 3  # one fold


def reference_margins(originals, variants, image_ids, types, learner, folds=5) -> np.ndarray:
    """A hand-rolled loop: per type and fold, a vectorizer fitted on the other folds' texts, sklearn's LR."""
    settings = {"word": dict(ngram_range=(1, 2), token_pattern=r"(?u)\b\w+\b"),
                "char": dict(analyzer="char_wb", ngram_range=(2, 4))}[learner]
    fold = np.array([int.from_bytes(hashlib.sha256(str(i).encode()).digest()[:8], "big") % folds for i in image_ids])
    out = np.zeros(len(originals))
    for type_ in set(types):
        for f in range(folds):
            train = [i for i in range(len(originals)) if types[i] == type_ and fold[i] != f]
            test = [i for i in range(len(originals)) if types[i] == type_ and fold[i] == f]
            if not train or not test:
                continue
            vec = CountVectorizer(**settings).fit([originals[i] for i in train] + [variants[i] for i in train])
            x = vec.transform([originals[i] for i in train]) - vec.transform([variants[i] for i in train])
            model = LogisticRegression(fit_intercept=False, C=1.0, solver="liblinear", random_state=0)
            model.fit(sp.vstack([x, -x]), np.r_[np.ones(len(train)), np.zeros(len(train))])
            x_test = vec.transform([originals[i] for i in test]) - vec.transform([variants[i] for i in test])
            out[test] = x_test @ model.coef_.ravel()
    return out


@pytest.mark.parametrize("learner", adversary.LEARNERS)
def test_out_of_fold_margins_match_a_reference_implementation(learner):
    rng = np.random.default_rng(7)
    vocabulary = ["a", "dog", "cat", "red", "blue", "two", "on", "the", "table", "is", "A"]
    originals = [" ".join(rng.choice(vocabulary, int(rng.integers(2, 8)))) for _ in range(240)]
    variants = [" ".join(rng.choice(vocabulary, int(rng.integers(2, 8)))) for _ in range(240)]
    image_ids = rng.integers(0, 50, 240).tolist()
    types = rng.choice(["object", "color"], 240).tolist()
    ours = adversary.out_of_fold_margins(originals, variants, image_ids, types=types, learner=learner)
    assert np.allclose(ours, reference_margins(originals, variants, image_ids, types, learner), atol=1e-9)
    assert (adversary.image_folds([5, "5", np.int64(5)]) == adversary.image_folds(["5"] * 3)).all()
    assert adversary.held_out_accuracy([1.0, -1.0, 0.0, 2.0]) == pytest.approx(0.625)


def test_the_bootstrap_interval_is_reproducible_and_contains_the_estimate():
    rng = np.random.default_rng(3)
    margins, ids = rng.normal(0.2, 1, 500), rng.integers(0, 90, 500)
    first = adversary.accuracy_interval(margins, ids, bootstrap=300, seed=4)
    assert first == adversary.accuracy_interval(margins, ids, bootstrap=300, seed=4)
    assert first != adversary.accuracy_interval(margins, ids, bootstrap=300, seed=5)
    assert first[0] <= adversary.held_out_accuracy(margins) <= first[1]
    assert adversary.accuracy_interval(margins, ids, bootstrap=0) is None


def test_audit_reports_learners_ngram_scorers_and_the_planted_word():
    frame = planted(n_images=40)
    result = audit.audit(frame, learners=("word",), bootstrap=100)
    entry = result["per_type"]["planted"]
    assert entry["pairs"] == 160 and entry["images"] == 40 and "all flips" not in result["blocks"]
    assert entry["learners"]["word"]["accuracy"] == 1.0
    assert {"bigram", "trigram"} <= set(entry)
    top = result["artifacts"]["planted"][0]
    assert (top["word"], top["original"], top["replacement"], top["imbalance"]) == ("sitting", 160, 0, 1.0)
    assert result == audit.audit(frame, learners=("word",), bootstrap=100)  # seeded: the same figures


def run_audit(capsys, *argv) -> tuple[int, str, str]:
    code = main(["audit", *map(str, argv), "--no-progress"])
    out, err = capsys.readouterr()
    return code, out, err


def write_sugarcrepe(folder):
    folder.mkdir()
    for subset, pairs in (("replace_att", [("a red bus on a road", "a blue bus on a road")] * 3),
                          ("swap_obj", [("a dog near a cat", "a cat near a dog")] * 2)):
        data = {str(k): {"filename": f"{139 + k:012d}.jpg", "caption": c, "negative_caption": n}
                for k, (c, n) in enumerate(pairs)}
        (folder / f"{subset}.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_every_input_route_runs(tmp_path, capsys):
    out = tmp_path / "build.json"
    code, text, _ = run_audit(capsys, SAMPLE_DIR, "--learners", "word", "--bootstrap", "50", "--json", out,
                              "--types", "object,color,hard_object")
    assert code == 0 and "| **paper flips** |" in text and "| object |" in text
    record = json.loads(out.read_text())
    assert record["input"]["format"] == "lgip build" and len(record["input"]["sha256"]) == 64
    assert set(record["per_type"]) == {"object", "color", "hard_object"} and record["sklearn_version"]
    code, text, _ = run_audit(capsys, "--from", "sugarcrepe", write_sugarcrepe(tmp_path / "sc"), "--bootstrap", "20")
    assert code == 0 and "| sugarcrepe_replace_att | 3 |" in text and "| sugarcrepe_swap_obj | 2 |" in text
    pairs = planted(n_images=10)
    for suffix, write in ((".csv", lambda p: pairs.to_csv(p, index=False)),
                          (".jsonl", lambda p: pairs.drop(columns="type").rename(columns={"variant": "negative_caption"})
                           .to_json(p, orient="records", lines=True)),
                          (".parquet", lambda p: pairs.to_parquet(p))):
        write(tmp_path / f"pairs{suffix}")
        code, text, _ = run_audit(capsys, "--pairs", tmp_path / f"pairs{suffix}", "--learners", "word,char",
                                  "--bootstrap", "20", "--no-ngram", "--markdown", tmp_path / "audit.md")
        kind = "flip" if suffix == ".jsonl" else "planted"
        assert code == 0 and f"| {kind} | 40 | 10 | 1.000 (1.000–1.000) | 1.000 (1.000–1.000) |" in text, text
        assert (tmp_path / "audit.md").read_text().startswith("# Artifact audit")


@pytest.mark.parametrize("content, argv, needle", [
    ("image_id,caption\n1,a dog\n", ["--pairs", "{file}"], "no column 'variant'"),
    ("", ["--pairs", "{file}"], "the file is empty"),
    ("image_id,caption,variant\n", ["--pairs", "{file}"], "no rows"),
    ("image_id,caption,variant\n1,a dog,\n", ["--pairs", "{file}"], "row 0 has no 'variant'"),
    ("image_id,caption,variant,type\n1,a dog,a cat,object\n", ["--pairs", "{file}", "--types", "color"],
     "no flip rows of type 'color'; its types are object"),
    (None, ["--from", "coco", "{dir}"], "--from coco: unknown probe-set format"),
    (None, ["--from", "sugarcrepe", "{dir}/nothing"], "not a folder"),
    (None, ["{dir}"], "no parquet files for config 'pairs'"),
    (None, ["--pairs", "{dir}/pairs.xlsx"], "unknown table format '.xlsx'"),
    (None, ["--from", "sugarcrepe", "{sc}", "--pairs", "{dir}/x.csv"], "name exactly one input"),
    (None, ["{sample}", "--learners", "bag"], "unknown learner 'bag'"),
    (None, ["{sample}", "--untrained", "tiny-clip"], "--untrained needs --images"),
    (None, ["{sample}", "--untrained", "no-such-model", "--images", "{dir}"], "--untrained no-such-model"),
])
def test_bad_input_gets_one_line_and_exit_code_2(tmp_path, capsys, content, argv, needle):
    file = tmp_path / "pairs.csv"
    if content is not None:
        file.write_text(content, encoding="utf-8")
    sc = write_sugarcrepe(tmp_path / "sc")
    argv = [a.format(file=file, dir=tmp_path, sc=sc, sample=SAMPLE_DIR) for a in argv]
    code, _, err = run_audit(capsys, *argv, "--bootstrap", "0")
    assert code == 2 and needle in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1


def test_untrained_models_report_pr_with_an_interval(sample_coco_dir, tmp_path, capsys):
    out = tmp_path / "audit.json"
    code, text, _ = run_audit(capsys, SAMPLE_DIR, "--types", "object,color", "--learners", "word", "--no-ngram",
                              "--bootstrap", "100", "--untrained", "tiny-clip",
                              "--images", sample_coco_dir / "val2017_images", "--device", "cpu", "--json", out)
    assert code == 0 and "untrained tiny-clip PR [95% CI]" in text
    untrained = json.loads(out.read_text())["untrained"]
    assert untrained["images_found"] == 50 and untrained["models"]["tiny-clip"]["pairs"] > 0
    for name in ("object", "color", "paper flips"):
        block = untrained["models"]["tiny-clip"]["PR"][name]
        assert 0 <= block["interval"][0] <= block["PR"] <= block["interval"][1] <= 1


def extended_pairs(n_images: int = 20) -> pd.DataFrame:
    """Binding and hard_relation flips in both directions, so that text alone sits at chance."""
    records = []
    for image in range(n_images):
        a, b = COLORS[image % 5], COLORS[(image + 1) % 5]
        one, two = f"a {a} dog and a {b} cat", f"a {b} dog and a {a} cat"
        records += [{"image_id": image, "caption": one, "variant": two, "type": "binding"},
                    {"image_id": image, "caption": "a man riding a horse", "variant": "a man leading a horse",
                     "type": "hard_relation"},
                    {"image_id": image, "caption": "a man leading a horse", "variant": "a man riding a horse",
                     "type": "hard_relation"}]
    return pd.DataFrame(records)


def test_the_extended_section_shows_judged_figures_and_the_peer_subsets(tmp_path, capsys):
    extended_pairs().to_csv(tmp_path / "pairs.csv", index=False)
    peer = tmp_path / "sc"
    peer.mkdir()
    for subset, (caption, negative) in (("swap_att", ("a red dog and a blue cat", "a blue dog and a red cat")),
                                        ("replace_rel", ("a man riding a horse", "a man feeding a horse")),
                                        ("replace_obj", ("a dog on a bed", "a cat on a bed"))):
        data = {str(k): {"filename": f"{139 + k:012d}.jpg", "caption": caption, "negative_caption": negative}
                for k in range(6)}
        (peer / f"{subset}.json").write_text(json.dumps(data), encoding="utf-8")
    judged = tmp_path / "judged.json"
    judged.write_text(json.dumps({"format": "lgip-judged", "version": 1, "per_type": {
        "binding": {"drawn": 40, "valid": 37}, "hard_relation": {"drawn": 40, "valid": 40}}}), encoding="utf-8")
    out = tmp_path / "audit.json"
    code, text, _ = run_audit(capsys, "--pairs", tmp_path / "pairs.csv", "--beside", "sugarcrepe", peer,
                              "--judged", judged, "--bootstrap", "20", "--json", out)
    assert code == 0 and "### Extended probes" in text
    assert "| binding | 20 | 20 | 40 (7.5%) |" in text and "| hard_relation | 40 | 20 | 40 (0.0%) |" in text
    assert "| ↳ sugarcrepe_swap_att (peer) | 6 | 6 | — |" in text
    assert "| ↳ sugarcrepe_replace_rel (peer) | 6 | 6 | — |" in text and "replace_obj" not in text
    record = json.loads(out.read_text())
    assert [r["type"] for r in record["extended"]] == ["binding", "sugarcrepe_swap_att", "hard_relation",
                                                        "sugarcrepe_replace_rel"]
    assert record["extended"][1]["beside"] == "binding"


@pytest.mark.parametrize("content, needle", [
    ("not json", "cannot read it as JSON"),
    ('{"per_type": {}}', "not a judged file"),
    ('{"format": "lgip-judged", "per_type": {"binding": {"drawn": 3, "valid": 5}}}', "type 'binding' needs whole counts"),
])
def test_a_bad_judged_file_is_refused_before_the_audit(tmp_path, capsys, content, needle):
    extended_pairs(4).to_csv(tmp_path / "pairs.csv", index=False)
    (tmp_path / "judged.json").write_text(content, encoding="utf-8")
    code, _, err = run_audit(capsys, "--pairs", tmp_path / "pairs.csv", "--judged", tmp_path / "judged.json")
    assert code == 2 and needle in err and "Traceback" not in err, err
    code, _, err = run_audit(capsys, "--pairs", tmp_path / "pairs.csv", "--beside", "coco", tmp_path)
    assert code == 2 and "--beside coco: unknown probe-set format" in err
