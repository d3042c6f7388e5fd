"""``lgip build --statistics-captions``: more captions for the hard flips' statistics, each image once."""
from __future__ import annotations

import json

import pytest

from lgip_dataset.errors import DataError
from lgip_dataset.files.hub_io import BUILD_INFO, load_config
from lgip_dataset.perturb.plausibility import shipped_image_ids
from lgip_dataset.sources.coco import read_captions
from lgip_dataset.sources.skips import SkipLog
from lgip_dataset.sources.statistics_captions import read_statistics_files, statistics_captions
from lgip_dataset.writing.materialize import BuildConfig, build
from lgip_metric.cli import main
from helpers.paths import SHARED, needs_shared

ANNOTATIONS = SHARED / "coco" / "annotations"


def _coco(path, captions_of: dict[int, list[str]]):
    """An official-format captions file with these captions per image id."""
    images = [{"id": i, "file_name": f"{i:012d}.jpg"} for i in captions_of]
    annotations = [{"id": 100 * i + j, "image_id": i, "caption": c} for i, cs in captions_of.items()
                   for j, c in enumerate(cs)]
    path.write_text(json.dumps({"images": images, "annotations": annotations}))
    return path


def test_each_image_is_counted_once_and_every_image_is_accounted_for(tmp_path):
    one = _coco(tmp_path / "one.json", {1: ["A dog on a couch."], 2: ["A cat on a bed.", "A cat sleeping."],
                                        3: ["A man riding a horse."]})
    two = _coco(tmp_path / "two.json", {2: ["A cat on a bed."], 3: ["A horse."], 4: ["A red bus on a street."]})
    files = read_statistics_files([one, two])
    pairs, records = statistics_captions(files, counted={1})
    assert sorted(pairs) == [(2, "A cat on a bed."), (2, "A cat sleeping."), (3, "A man riding a horse."),
                             (4, "A red bus on a street.")]
    assert [(r["file"], r["images"], r["captions"], r["images_already_counted"]) for r in records] == [
        ("one.json", 2, 3, 1), ("two.json", 1, 1, 2)]
    for record, file in zip(records, files):  # counted and left out add up to the file's images
        assert record["images"] + record["images_already_counted"] == len(file.entries)
        assert len(record["sha256"]) == 64


def test_unusable_rows_of_a_statistics_file_are_reported_not_dropped(tmp_path):
    path = _coco(tmp_path / "s.json", {1: ["A dog on a couch.", "   "]})
    _, records = statistics_captions(read_statistics_files([path]), counted=set())
    assert records[0]["captions"] == 1 and sum(v["count"] for v in records[0]["rows_skipped"].values()) == 1


@pytest.mark.parametrize("content, says", [
    (None, "captions file not found"),
    ("{not json", "line 1"),
    (json.dumps({"images": [], "annotations": []}), "no usable caption"),
])
def test_a_bad_statistics_file_is_refused_naming_the_option_and_the_file(tmp_path, content, says):
    path = tmp_path / "stats.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(DataError) as err:
        read_statistics_files([path])
    assert str(err.value).startswith(f"--statistics-captions {path}:") and says in str(err.value)


def test_the_option_without_a_hard_family_is_refused_before_any_work(tmp_path, capsys):
    stats = _coco(tmp_path / "stats.json", {1: ["A dog on a couch."]})
    code = main(["build", "--captions", str(stats), "--no-images", "--out", str(tmp_path / "out"),
                 "--families", "core", "--statistics-captions", str(stats), "--quiet"])
    assert code == 2 and "--statistics-captions feeds only the statistics of the families that ask them" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@needs_shared("the shipped counts' source images and the val2017 captions", "coco")
def test_the_shipped_table_names_its_images_and_none_is_a_val2017_image():
    val2017 = {e.image_id for e in read_captions(ANNOTATIONS / "captions_val2017.json", SkipLog())}
    shipped = shipped_image_ids()
    assert len(shipped) == 4407 and not shipped & val2017


@needs_shared("the val2017 captions, counted as more statistics for a 12-image build", "coco")
def test_more_statistics_reach_the_hard_flips_and_are_recorded(tmp_path):
    """A 12-image val2017 build counts, beside the shipped table, only its own captions; with the
    rest of val2017 as statistics its hard flips change, and the build records what it counted."""
    captions = ANNOTATIONS / "captions_val2017.json"
    config = dict(captions=captions, num_images=12, families=("hard_object", "hard_color", "hard_count"))
    build(BuildConfig(out=tmp_path / "alone", **config), progress=False)
    build(BuildConfig(out=tmp_path / "more", statistics_captions=(captions,), **config), progress=False)

    def hard(folder):
        rows = load_config(folder, "pairs").to_pandas()
        return sorted(zip(rows["caption_id"], rows["variant"]))
    assert hard(tmp_path / "alone") != hard(tmp_path / "more")
    alone = json.loads((tmp_path / "alone" / BUILD_INFO).read_text())["hard_flips"]["statistics_captions"]
    (record,) = json.loads((tmp_path / "more" / BUILD_INFO).read_text())["hard_flips"]["statistics_captions"]
    assert alone == []
    assert record["file"] == "captions_val2017.json" and record["images_already_counted"] == 12
    card = (tmp_path / "more" / "README.md").read_text()
    assert f"`captions_val2017.json`: {record['captions']:,} captions of {record['images']:,} more images" in card
    built = set(load_config(tmp_path / "more", "captions").to_pandas()["image_id"])
    assert record["images"] == 5000 - 12 and record["captions"] == 25014 - sum(
        len(e.captions) for e in read_captions(captions, SkipLog()) if e.image_id in built)
