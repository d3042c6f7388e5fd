"""COCO readers: official captions JSON, Karpathy list format, seeded sampling, bad input."""
from __future__ import annotations

import json

import pytest

from lgip_dataset.errors import DataError
from lgip_dataset.sources.coco import MAX_CAPTION_CHARS, read_captions, read_coco_captions, read_karpathy, select_images
from lgip_dataset.sources.skips import SkipLog
from helpers.paths import SHARED, needs_shared


def _coco(path, images, annotations):
    path.write_text(json.dumps({"images": images, "annotations": annotations, "licenses": [
        {"id": 4, "name": "Attribution License", "url": "http://creativecommons.org/licenses/by/2.0/"}]}))
    return path


@needs_shared("the full captions_val2017.json (5,000 images, 25,014 captions)", "coco")
def test_official_2017_file_reads_every_caption():
    coco_dir = SHARED / "coco"
    skips = SkipLog()
    entries = read_coco_captions(coco_dir / "annotations" / "captions_val2017.json", skips)
    assert len(entries) == 5000
    assert sum(len(e.captions) for e in entries) == 25014
    assert skips.total == 0
    first = next(e for e in entries if e.image_id == 397133)
    assert first.file_name == "000000397133.jpg" and first.license == "Attribution License"
    assert all(c.caption_id.startswith("c") for c in first.captions)
    assert all(c.text == c.text.strip() and "  " not in c.text for e in entries for c in e.captions)


@needs_shared("the full Karpathy test split coco_karpathy_test.json (5,000 images, 25,010 captions)", "coco")
def test_karpathy_list_format():
    coco_dir = SHARED / "coco"
    skips = SkipLog()
    entries = read_captions(coco_dir / "annotations" / "coco_karpathy_test.json", skips)
    assert len(entries) == 5000
    assert sum(len(e.captions) for e in entries) == 25010
    assert entries[0].file_name.startswith("val2014/COCO_val2014_")
    assert str(entries[0].image_id) in entries[0].file_name


def test_2014_style_file_names(tmp_path):
    path = _coco(tmp_path / "captions_val2014.json",
                 [{"id": 42, "file_name": "COCO_val2014_000000000042.jpg", "license": 4}],
                 [{"id": 7, "image_id": 42, "caption": "A dog on a couch."}])
    (entry,) = read_captions(path, SkipLog())
    assert entry.file_name == "COCO_val2014_000000000042.jpg" and entry.captions[0].caption_id == "c7"


def test_malformed_json_names_file_and_position(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text('{"images": [1, 2,, 3]}')
    with pytest.raises(DataError, match=r"broken\.json: malformed JSON at line 1, column"):
        read_captions(bad, SkipLog())


def test_wrong_structure_and_missing_file(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"foo": 1}')
    with pytest.raises(DataError, match="expected an object with 'images' and 'annotations'"):
        read_coco_captions(path, SkipLog())
    with pytest.raises(DataError, match="expected a JSON list"):
        read_karpathy(path, SkipLog())
    with pytest.raises(DataError, match="captions file not found"):
        read_captions(tmp_path / "nope.json", SkipLog())
    bad_ann = _coco(tmp_path / "y.json", [{"id": 1, "file_name": "a.jpg"}], [{"image_id": 1, "caption": "x"}])
    with pytest.raises(DataError, match=r"annotations\[0\] lacks a valid 'image_id' or 'id'"):
        read_coco_captions(bad_ann, SkipLog())


def test_bad_captions_are_counted_not_dropped(tmp_path):
    path = _coco(tmp_path / "c.json", [{"id": 1, "file_name": "a.jpg"}], [
        {"id": 1, "image_id": 1, "caption": "A red bus on a street."},
        {"id": 2, "image_id": 1, "caption": "   "},
        {"id": 3, "image_id": 1, "caption": "word " * 2000},
        {"id": 4, "image_id": 1, "caption": "Un café près de la fenêtre, très jolie ☕"},
        {"id": 5, "image_id": 99, "caption": "A caption whose image is not listed."},
        {"id": 6, "image_id": 1, "caption": None},
    ])
    skips = SkipLog()
    (entry,) = read_coco_captions(path, skips)
    assert [c.caption_id for c in entry.captions] == ["c1", "c4"]
    assert entry.captions[1].text == "Un café près de la fenêtre, très jolie ☕"
    assert skips.counts == {
        "empty caption": 1,
        f"caption longer than {MAX_CAPTION_CHARS} characters": 1,
        "caption without image entry": 1,
        "caption not a string": 1,
    }
    assert any("annotations[2] (id 3)" in line for line in skips.lines())


@needs_shared("the full captions_val2017.json (its 13 images with more than 5 captions)", "coco")
def test_seeded_sampling_is_order_independent_and_capped():
    coco_dir = SHARED / "coco"
    entries = read_coco_captions(coco_dir / "annotations" / "captions_val2017.json", SkipLog())
    def ids(pool, seed):
        return [e.image_id for e in select_images(pool, num_images=50, captions_per_image=5, seed=seed, skips=SkipLog())]
    reversed_entries = read_coco_captions(coco_dir / "annotations" / "captions_val2017.json", SkipLog())[::-1]
    assert ids(entries, 3) == ids(reversed_entries, 3)
    assert ids(entries, 3) != ids(entries, 4)
    skips = SkipLog()
    chosen = select_images(entries, num_images=None, captions_per_image=5, seed=0, skips=skips)
    assert max(len(e.captions) for e in chosen) == 5
    assert skips.counts["caption beyond --captions-per-image (cap)"] == 14  # 12 images with 6 captions, 1 with 7
    with pytest.raises(DataError, match="--num-images must be at least 1"):
        select_images(entries, num_images=0, captions_per_image=5, seed=0, skips=SkipLog())
    with pytest.raises(DataError, match="--image-ids names 1 image"):
        select_images(entries, num_images=None, captions_per_image=5, seed=0, image_ids={1}, skips=SkipLog())
