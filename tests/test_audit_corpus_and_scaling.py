"""`lgip audit --lm-corpus` and `--scaling` under the audit's "not measurable" rule (issue 52, silent wrong):
a corpus of too few other images, or of images all in one statistics fold, and subsets under 10 images read
"not measurable" with the reason, never a number."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.reliability import flip_pairs, run_cli, write_pairs
from lgip_dataset.ngram import image_fold

BLOCK = "paper flips"


def corpus_file(path: Path, image_ids: list[int], per_image: int = 5) -> Path:
    """A COCO captions file of ``image_ids`` (none of them audited), ``per_image`` captions each."""
    images = [{"id": i, "file_name": f"{i:012d}.jpg"} for i in image_ids]
    annotations = [{"id": 10 * i + k, "image_id": i, "caption": f"A green kite {k} flies over the beach of town {i}."}
                   for i in image_ids for k in range(per_image)]
    path.write_text(json.dumps({"images": images, "annotations": annotations}), encoding="utf-8")
    return path


def audit(tmp: Path, *extra) -> tuple[object, dict]:
    pairs = write_pairs(tmp / "pairs.csv", flip_pairs(40))
    outcome = run_cli("audit", "--pairs", pairs, "--learners", "word", "--bootstrap", "20", "--repeats", "1",
                      "--no-progress", "--json", tmp / "audit.json", *extra)
    assert outcome.code == 0 and "Traceback" not in outcome.text, outcome.text
    return outcome, json.loads((tmp / "audit.json").read_text(encoding="utf-8"))


def one_fold(fold: int, n: int) -> list[int]:
    return [i for i in range(1000, 5000) if image_fold(i) == fold][:n]


@pytest.mark.parametrize("corpus_images, says", [
    ([1000], "the corpus has 1 other image, fewer than 10"),
    ([1000, 1001], "the corpus has 2 other images, fewer than 10"),
    (one_fold(0, 50), "the corpus has 0 images in statistics fold 1, fewer than 10: the pairs of that fold would be "
                      "scored by no corpus captions"),
])
def test_a_corpus_of_too_few_other_images_is_not_measurable(tmp_path, corpus_images, says):
    outcome, record = audit(tmp_path, "--lm-corpus", corpus_file(tmp_path / "corpus.json", corpus_images))
    for key in ("corpus_trigram", "corpus_typicality"):
        figure = record["blocks"][BLOCK][key]
        assert figure.get("PR", figure.get("accuracy")) is None and says in figure["not_measurable"], figure
    assert record["blocks"][BLOCK]["trigram"]["PR"] is not None  # the audit's own LMs are measured
    assert says in outcome.out


def test_a_corpus_in_both_folds_is_measured(tmp_path):
    _, record = audit(tmp_path, "--lm-corpus", corpus_file(tmp_path / "corpus.json", one_fold(0, 12) + one_fold(1, 12)))
    assert record["blocks"][BLOCK]["corpus_trigram"]["PR"] is not None
    assert record["blocks"][BLOCK]["corpus_typicality"]["accuracy"] is not None


def test_scaling_subsets_under_ten_images_are_not_measurable(tmp_path):
    outcome, record = audit(tmp_path, "--scaling", "1,2,5,60")
    entries = record["scaling"]
    assert [e["images"] for e in entries] == [1, 1, 1, 12, 40]
    for entry in entries[:3]:
        assert entry["figures"][BLOCK] == {"word": None}
        assert entry["not_measurable"][BLOCK] == "1 image, fewer than 10"
    assert entries[-1]["figures"][BLOCK]["word"] is not None and not entries[-1]["not_measurable"]
    assert "0.500 | 0.500" not in outcome.out and "not measurable (1 image, fewer than 10)" in outcome.out
