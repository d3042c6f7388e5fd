"""Caption hygiene at the build's door: NFC, and no Unicode format or control character (a zero-width space, a
bidi override, ...) other than a zero-width joiner inside an emoji sequence; each cleaning counted, the
original text kept in the ``captions`` config."""
from __future__ import annotations

import json
import unicodedata

import datasets
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lgip_dataset.sources import sugarcrepe
from lgip_dataset.sources.coco import FORMAT_REMOVED, NFC_CHANGED, ZWJ, caption_cleanings, normalise_caption
from lgip_dataset.sources.skips import SkipLog
from helpers.reliability import coco_annotations, run_cli, write_coco

FAMILY = "\U0001F468\u200d\U0001F469\u200d\U0001F467"  # man ZWJ woman ZWJ girl: one emoji
TECHNOLOGIST = "\U0001F469\U0001F3FD\u200d\U0001F4BB"  # woman, skin tone, ZWJ, laptop


@pytest.mark.parametrize("raw, clean", [
    ("A dog\u200b on a red couch.", "A dog on a red couch."),  # zero-width space
    ("A dog \u202eon a couch", "A dog on a couch"),  # right-to-left override
    ("\ufeffA cat\u200e on\u2066 a mat\u2069.", "A cat on a mat."),  # BOM, LRM, isolates
    ("A hot\u00addog stand\x00 at\x07 night\x7f.", "A hotdog stand at night."),  # soft hyphen, NUL, BEL, DEL
    ("A wo\u200dman on a bike", "A woman on a bike"),  # a joiner between letters is no emoji sequence
    (f"A {FAMILY} at the beach", f"A {FAMILY} at the beach"),
    (f"{TECHNOLOGIST} at a desk", f"{TECHNOLOGIST} at a desk"),
    ("  Two  dogs\n\trunning. ", "Two dogs running."),  # whitespace collapses, as before
])
def test_format_and_control_characters_are_removed(raw, clean):
    assert normalise_caption(raw) == clean


def test_what_a_cleaning_changed_is_named():
    assert caption_cleanings("A dog\u200b on a couch") == [FORMAT_REMOVED]
    assert caption_cleanings("A cafe\u0301 sign") == [NFC_CHANGED]
    assert caption_cleanings(" Two  dogs\n") == [] and caption_cleanings(f"A {FAMILY}") == []


@given(st.text(alphabet=st.characters(categories=("L", "Zs", "Cf", "Cc", "So", "Mn", "Po")), max_size=40))
def test_cleaned_text_holds_no_removable_character_and_is_stable(raw):
    clean = normalise_caption(raw)
    assert normalise_caption(clean) == clean and caption_cleanings(clean) == []
    for i, char in enumerate(clean):
        if unicodedata.category(char) in ("Cf", "Cc"):
            assert char == ZWJ and 0 < i < len(clean) - 1, (raw, clean)


def test_a_build_stores_clean_captions_keeps_the_originals_and_counts_them(tmp_path):
    annotations = coco_annotations(4)
    annotations[0]["caption"] = "A brown dog\u200b laying on the ground."
    annotations[6]["caption"] = "Two people \u202estanding in a room."
    annotations[7]["caption"] = "A red bus parked next to a white car.\n"  # whitespace only: no original kept
    captions, images = write_coco(tmp_path / "coco", annotations=annotations)
    out = tmp_path / "data"
    outcome = run_cli("build", "--captions", captions, "--images", images, "--out", out, "--quiet")
    assert outcome.code == 0, outcome.text[-2000:]
    rows = datasets.load_dataset(str(out), "captions", split="test").to_list()
    kept = {r["caption_id"]: r["caption_source"] for r in rows if r["caption_source"] is not None}
    assert kept == {f"c{annotations[0]['id']}": annotations[0]["caption"],
                    f"c{annotations[6]['id']}": annotations[6]["caption"]}
    texts = [r["caption"] for r in rows] + [v["text"] for r in rows for v in r["paraphrases"] + r["flips"]]
    texts += pq.read_table(next((out / "pairs").glob("*.parquet")), columns=["variant"]).column("variant").to_pylist()
    assert not [t for t in texts if caption_cleanings(t) or "\u200b" in t or "\u202e" in t]
    info = json.loads((out / "lgip_build.json").read_text(encoding="utf-8"))
    assert info["cleaned"][FORMAT_REMOVED]["count"] == 2 and info["counts"]["captions"] == len(annotations)
    assert f"cleaned 2 × {FORMAT_REMOVED}" in outcome.out
    assert "caption_source" in (out / "README.md").read_text(encoding="utf-8")


def test_sugarcrepe_texts_are_cleaned_and_counted(tmp_path):
    folder = tmp_path / "sugarcrepe"
    folder.mkdir()
    (folder / "replace_obj.json").write_text(json.dumps({"0": {
        "filename": "000000000001.jpg", "caption": "A dog\u200b on a couch.", "negative_caption": "A cat on a\u202e couch."}}),
        encoding="utf-8")
    cleaned = SkipLog()
    (one,) = sugarcrepe.read_instances(folder, SkipLog(), cleaned=cleaned)
    assert (one.caption, one.negative, one.caption_source) == ("A dog on a couch.", "A cat on a couch.",
                                                              "A dog\u200b on a couch.")
    assert cleaned.counts[FORMAT_REMOVED] == 2
