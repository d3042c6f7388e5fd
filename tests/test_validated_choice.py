"""The validated config's compositional flips chosen across a build (lgip_dataset.judging.validated_choice): each
direction of a change as frequent as its reverse, every other validated row kept, the same choice every time, and
`lgip evaluate --validated` scoring exactly the validated config's rows."""
from __future__ import annotations

import gzip
import itertools
import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from lgip_dataset import judging, schema
from lgip_dataset.files import hub_io
from lgip_dataset.judging.labels import VALID
from lgip_dataset.judging.validated_choice import CHOSEN, choose_validated
from lgip_dataset.perturb.plausibility import shipped_counts
from lgip_metric.cli import main as lgip
from lgip_metric.scoring.score_inputs import read_rows, validated_rows

from test_judging import build, draw, label_file, merge

SUBJECTS = ("a dog", "a man", "a woman", "a cat", "a boy", "a girl", "a horse", "a bus", "a truck", "a bike")
VERBS = ("standing", "sitting", "parked", "waiting", "resting")
THINGS = ("a house", "a fence", "a tree", "a building", "a wall", "a car", "a bench", "a train")


def spatial_pairs(front: int, behind: int) -> dict[str, list]:
    """``pairs`` columns of ``front`` valid "in front of" -> "behind" flips and ``behind`` of the reverse (the two
    directions dealt evenly over the wordings, so that only the direction tells them apart), one caption of its own
    image each, with one valid paraphrase and one valid object flip per caption besides."""
    texts = itertools.cycle(f"{s} {v} {{}} {t}" for s, v, t in itertools.product(SUBJECTS, VERBS, THINGS))
    directions = np.zeros(front + behind, dtype=bool)
    directions[np.linspace(0, front + behind - 1, behind).round().astype(int)] = True  # True: behind -> in front of
    columns = {name: [] for name in ("row_id", "caption_id", "image_id", "caption", "variant", "kind", "type")}
    for n in range(front + behind):
        template = next(texts)
        old, new = ("behind", "in front of") if directions[n] else ("in front of", "behind")
        caption = template.format(old)
        for k, (variant, kind, type_) in enumerate(((template.format(new), "flip", "spatial"),
                                                    (caption + " outside", "paraphrase", "template"),
                                                    (caption.replace("a ", "the ", 1), "flip", "object"))):
            for name, value in zip(columns, (f"c{n}-{k}", f"c{n}", 1000 + n, caption, variant, kind, type_)):
                columns[name].append(value)
    return columns


def direction_counts(pairs: dict[str, list], rows) -> Counter:
    def direction(i: int) -> str:
        return "to behind" if pairs["variant"][i].count("behind") > pairs["caption"][i].count("behind") else "to front"

    return Counter(direction(i) for i in rows if pairs["type"][i] == "spatial")


def test_the_choice_evens_out_a_direction_and_keeps_every_other_validated_row():
    pairs = spatial_pairs(front=150, behind=50)
    keep = np.arange(len(pairs["row_id"]))
    chosen, figures = choose_validated(pairs, keep, shipped_counts(), seed=0)
    before, after = direction_counts(pairs, keep), direction_counts(pairs, chosen)
    assert before == {"to behind": 150, "to front": 50}
    assert after["to front"] >= 40 and after["to behind"] >= 40  # most of the rarer direction is kept
    assert abs(after["to behind"] - after["to front"]) <= 0.25 * sum(after.values())  # 100 apart before
    others = [i for i in keep if pairs["type"][i] != "spatial"]
    assert set(others) <= set(chosen.tolist())  # no paraphrase, no flip of another family is left out
    assert figures["spatial"]["judged_valid"] == 200 and figures["spatial"]["flips"] == after.total()
    again, _ = choose_validated(pairs, keep, shipped_counts(), seed=0)
    assert np.array_equal(chosen, again)


def test_nothing_to_choose_keeps_the_rows_as_the_rule_keeps_them():
    pairs = spatial_pairs(front=3, behind=1)
    keep = np.array([i for i, t in enumerate(pairs["type"]) if t not in CHOSEN])
    chosen, figures = choose_validated(pairs, keep, shipped_counts(), seed=0)
    assert np.array_equal(chosen, keep) and figures == {}


@pytest.fixture()
def own_store(tmp_path, monkeypatch):
    """An empty store in place of the package's, so that every label of the builds is the test's own."""
    from lgip_dataset.judging import store as store_module

    shipped = tmp_path / "package" / judging.SHIPPED_STORE.name
    shipped.parent.mkdir()
    shipped.write_bytes(gzip.compress(b"", mtime=0))
    monkeypatch.setattr(store_module, "SHIPPED_STORE", shipped)


def test_a_build_writes_the_chosen_flips_and_evaluate_validated_scores_the_same_rows(sample_coco_dir, tmp_path,
                                                                                   own_store):
    captions = json.loads((sample_coco_dir / "annotations" / "captions_val2017.json").read_text(encoding="utf-8"))
    ids = sorted(image["id"] for image in captions["images"])
    first = build(sample_coco_dir, tmp_path / "first", ids, "--no-images", "--families", "all")
    key = draw(tmp_path, str(first), "--types", ",".join(CHOSEN), "--all")
    store = tmp_path / "store.jsonl.gz"
    merge(tmp_path / "sheet.json", store, ann=label_file(tmp_path / "a.tsv", key, lambda e: VALID),
          bob=label_file(tmp_path / "b.tsv", key, lambda e: VALID))
    folder = build(sample_coco_dir, tmp_path / "judged", ids, "--no-images", "--families", "all",
                   "--judged", str(store))
    pairs = hub_io.load_config(folder, schema.PAIRS).to_pandas()
    validated = hub_io.load_config(folder, schema.VALIDATED).to_pandas()
    valid = pairs[pairs["type"].isin(CHOSEN) & pairs["judged"].notna()]
    assert len(valid) == len(key) > 0
    chosen = validated[validated["type"].isin(CHOSEN)]
    assert 0 < len(chosen) <= len(valid) and set(chosen["row_id"]) <= set(valid["row_id"])
    others = pairs[~pairs["type"].isin(CHOSEN)]
    assert set(validated["row_id"]) - set(chosen["row_id"]) == set(others["row_id"]) - set(
        others.loc[(others["kind"] == "flip") & others["judged"].isna()
                   & ~others["type"].isin(["object", "color", "count", "hard_object", "hard_color", "hard_count"]),
                   "row_id"])
    info = json.loads((folder / hub_io.BUILD_INFO).read_text(encoding="utf-8"))
    recorded = info["judged"]["validated_choice"]
    assert {t: recorded[t]["flips"] for t in recorded} == chosen["type"].value_counts().to_dict()
    assert {t: recorded[t]["judged_valid"] for t in recorded} == valid["type"].value_counts().to_dict()
    files = hub_io.DatasetFiles(folder)
    rows = read_rows(files, schema.PAIRS, None)
    kept = validated_rows(files, schema.PAIRS, rows)
    assert set(pd.Series(rows.column("row_id").to_pylist())[kept]) == set(validated["row_id"])
    out = tmp_path / "audit.json"
    assert lgip(["audit", str(folder), "--config", "validated", "--types", ",".join(recorded), "--bootstrap", "20",
                 "--repeats", "1", "--no-ngram", "--no-progress", "--json", str(out)]) == 0
    audited = json.loads(out.read_text(encoding="utf-8"))["per_type"]
    assert {t: audited[t]["pairs"] for t in audited} == chosen["type"].value_counts().to_dict()
    drawn = judging.draw(folder, list(recorded), validated_only=True)  # a sealed draw takes the chosen flips only
    assert {(r["caption"], r["variant"]) for r in drawn} == set(zip(chosen["caption"], chosen["variant"]))
    assert len(chosen) < len(valid) and len(drawn) < len(judging.draw(folder, list(recorded)))


@pytest.mark.parametrize("args, says", [
    (["{plain}", "--config", "validated"], "has no validated config (built without labels)"),
    (["--pairs", "{table}", "--config", "validated"], "--config validated names a config of an `lgip build` folder"),
])
def test_audit_config_refuses_what_it_cannot_read(tmp_path, capsys, args, says):
    import shutil

    from lgip_dataset import SAMPLE_DIR

    table = tmp_path / "pairs.csv"
    table.write_text("image_id,caption,variant\n1,a dog,a cat\n", encoding="utf-8")
    plain = tmp_path / "plain"  # the sample as built without labels
    shutil.copytree(SAMPLE_DIR, plain, ignore=shutil.ignore_patterns(schema.VALIDATED))
    args = [a.format(plain=plain, table=table) for a in args]
    assert lgip(["audit", *args]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
