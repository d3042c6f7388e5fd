"""The `evaluate` module fed as any harness feeds it: rows of one kind only, ids of any type, and a score table
through the public adapter ``lgip_metric.metric_inputs``."""
from __future__ import annotations

import evaluate
import numpy as np
import pandas as pd
import pytest

from helpers.stats_rows import FIELDS, random_rows
from lgip_dataset.errors import DataError
from lgip_metric import METRIC_PATH, metric_inputs, stats
from lgip_metric.lgip_metric import ids_as_text, ids_from_text
from lgip_metric.stats_inputs import LGIPInputError


@pytest.fixture(scope="module")
def lgip():
    return evaluate.load(str(METRIC_PATH))


def only(data: dict, keep) -> dict:
    rows = [i for i, kind in enumerate(data["variant_kinds"]) if keep(kind, data["variant_types"][i])]
    return {field: [data[field][i] for i in rows] for field in FIELDS}


def test_flips_alone_give_e_sens_and_pr_and_say_why_e_inv_is_absent(lgip):
    data = random_rows(3)
    whole = lgip.compute(**data, bootstrap=0)
    flips = lgip.compute(**only(data, lambda kind, _: kind == "flip"), bootstrap=50)
    assert (flips["E_sens"], flips["PR"]) == (whole["E_sens"], whole["PR"])  # the same flip rows, the same numbers
    assert flips["E_inv"] is None and "E_inv" not in flips["counts"] and "E_inv" not in flips["intervals"]
    assert flips["absent"] == {"E_inv": "the paraphrase set is empty: no row has kind 'paraphrase', so E_inv cannot "
                                        "be computed"}
    assert flips["headline_types"]["paraphrase"] == [] and len(flips["intervals"]["PR"]) == 2
    assert "absent" not in whole


def test_paraphrases_alone_give_e_inv_and_say_why_e_sens_and_pr_are_absent(lgip):
    data = random_rows(4)
    paraphrases = lgip.compute(**only(data, lambda kind, _: kind == "paraphrase"), bootstrap=0)
    assert paraphrases["E_inv"] == lgip.compute(**data, bootstrap=0)["E_inv"]
    assert paraphrases["E_sens"] is None and paraphrases["PR"] is None
    assert set(paraphrases["absent"]) == {"E_sens", "PR"}
    assert all("the flip set is empty" in reason for reason in paraphrases["absent"].values())


def test_hard_flips_alone_as_the_issue_ran_them(lgip):
    data = random_rows(5, flip_types=("hard_object", "hard_color", "hard_count"))
    hard = only(data, lambda kind, _: kind == "flip")
    result = lgip.compute(**hard, bootstrap=0)
    assert result["hard"]["PR"] == result["PR"] and result["headline_types"]["hard"] == ["hard_object", "hard_color",
                                                                                        "hard_count"]
    assert result == stats.lgip_statistics(**hard, bootstrap=0, require_both_kinds=False)


def test_the_statistics_module_still_refuses_one_kind_unless_asked():
    data = only(random_rows(6), lambda kind, _: kind == "flip")
    with pytest.raises(LGIPInputError, match="the paraphrase set is empty"):
        stats.lgip_statistics(**data)


def test_string_image_ids_and_integer_caption_ids_through_evaluate_load(lgip):
    data = random_rows(7, int_ids=True)
    data["image_ids"] = [f"COCO_{i:06d}" for i in data["image_ids"]]
    assert isinstance(data["caption_ids"][0], int)
    got = lgip.compute(**data, bootstrap=200, seed=2)
    assert got == stats.lgip_statistics(**data, bootstrap=200, seed=2)  # to the last digit, intervals too


def test_ids_keep_their_type_through_add_batch_and_add(lgip):
    data = random_rows(8, int_ids=True)
    data["caption_ids"] = [str(c) if i % 2 else np.int64(c) for i, c in enumerate(data["caption_ids"])]  # mixed
    half = len(data["image_ids"]) // 2
    lgip.add_batch(**{field: np.asarray(data[field][:half], dtype=object if field == "caption_ids" else None)
                      for field in FIELDS})
    for row in range(half, len(data["image_ids"])):
        lgip.add(**{field: data[field][row] for field in FIELDS})
    expected = stats.lgip_statistics(**{**data, "caption_ids": [c if isinstance(c, str) else int(c)
                                                                for c in data["caption_ids"]]}, bootstrap=100)
    assert lgip.compute(bootstrap=100) == expected


@pytest.mark.parametrize("ids", [["a", "", "7"], [7, -3, 2**62], [1.5, 2.0, -0.0], ["7", 7, 7.0, True]])
def test_ids_as_text_turn_back_into_the_same_values_and_types(ids):
    back = ids_from_text(ids_as_text(ids, "image_ids"))
    assert back == ids and [type(v) for v in back] == [type(v) for v in ids]


@pytest.mark.parametrize(("ids", "message"), [
    (["a", None], r"image_ids: row 1 has no id \(1 such row\(s\)\)"),
    ([1, float("nan")], r"image_ids: row 1 has no id"),
    ([1, (2, 3)], r"image_ids: row 1 is \(2, 3\) \(tuple\); an id is a string or a number"),
])
def test_ids_that_are_no_ids_are_refused_naming_the_row(lgip, ids, message):
    with pytest.raises(LGIPInputError, match=message):
        ids_as_text(ids, "image_ids")
    rows = {field: values[:2] for field, values in random_rows(9).items()}
    with pytest.raises(ValueError, match=message):
        lgip.compute(**{**rows, "image_ids": ids}, bootstrap=0)


# ------------------------------------------------------------------------------------------ the adapter


def score_table(seed: int) -> pd.DataFrame:
    """A score table with scores.parquet's columns (and one column the statistics do not read)."""
    data = random_rows(seed, int_ids=True)
    columns = {"s_original": "original_scores", "s_variant": "variant_scores", "kind": "variant_kinds",
               "type": "variant_types", "caption_id": "caption_ids", "image_id": "image_ids"}
    frame = pd.DataFrame({column: data[field] for column, field in columns.items()})
    return frame.assign(caption_id=frame.caption_id.astype(str), row_id=[f"r{i}" for i in range(len(frame))])


def test_metric_inputs_of_a_frame_a_file_and_a_run_folder_feed_compute(lgip, tmp_path):
    frame = score_table(10)
    (tmp_path / "run").mkdir()
    frame.to_parquet(tmp_path / "run" / "scores.parquet")
    expected = stats.lgip_statistics(**{field: frame[column].tolist() for column, field in (
        ("s_original", "original_scores"), ("s_variant", "variant_scores"), ("kind", "variant_kinds"),
        ("type", "variant_types"), ("caption_id", "caption_ids"), ("image_id", "image_ids"))}, bootstrap=100)
    for table in (frame, tmp_path / "run", str(tmp_path / "run" / "scores.parquet")):
        inputs = metric_inputs(table)
        assert sorted(inputs) == sorted(FIELDS)
        assert lgip.compute(**inputs, bootstrap=100) == expected
        assert stats.lgip_statistics(**inputs, bootstrap=100) == expected


@pytest.mark.parametrize(("table", "message"), [
    (lambda tmp: pd.DataFrame({"s_original": [0.1]}), r"the score table lacks the score column\(s\) s_variant, kind"),
    (lambda tmp: tmp / "nowhere" / "scores.parquet", r"scores.parquet not found"),
    (lambda tmp: (tmp / "scores.parquet").write_text("not parquet") and tmp / "scores.parquet",
     "is not a readable parquet file"),
    (lambda tmp: [0.1, 0.2], r"metric_inputs takes a score table .* got list"),
])
def test_metric_inputs_refuses_what_is_no_score_table(tmp_path, table, message):
    with pytest.raises(DataError, match=message):
        metric_inputs(table(tmp_path))
