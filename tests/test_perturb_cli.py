"""``lgip perturb``: readable output, the --json schema and the error paths."""
from __future__ import annotations

import json

import pytest

from lgip_metric.cli import main

CAPTION = "An orange cat sleeping next to two dogs on a red couch."


def test_json_schema(capsys):
    assert main(["perturb", CAPTION, "--json", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    data = json.loads(out)  # exactly one JSON object
    assert set(data) == {"caption", "paraphrases", "flips"}
    assert data["caption"] == CAPTION
    assert 1 <= len(data["paraphrases"]) <= 6
    for p in data["paraphrases"]:
        assert set(p) == {"text", "type"} and p["type"] in ("template", "marker")
    assert 1 <= len(data["flips"]) <= 6
    assert {f["type"] for f in data["flips"]} == {"object", "color", "count"}
    for f in data["flips"]:
        assert set(f) == {"text", "type", "original", "replacement", "span"}
        start, end = f["span"]
        assert CAPTION[start:end] == f["original"]
        assert f["text"] != CAPTION


def test_k_and_seed_options(capsys):
    main(["perturb", CAPTION, "--json", "--k-same", "2", "--k-diff", "0"])
    data = json.loads(capsys.readouterr().out)
    assert len(data["paraphrases"]) == 2 and data["flips"] == []
    main(["perturb", CAPTION, "--json", "--seed", "1"])
    one = capsys.readouterr().out
    main(["perturb", CAPTION, "--json", "--seed", "1"])
    assert capsys.readouterr().out == one


def test_readable_output(capsys):
    assert main(["perturb", "Two dogs playing in the snow."]) == 0
    out = capsys.readouterr().out
    assert "caption: Two dogs playing in the snow." in out
    assert "[count]" in out and "[object]" in out and "Two -> " in out and "dogs -> " in out
    assert "paraphrases (6)" in out and "flips (6)" in out


@pytest.mark.parametrize("caption,message", [("", "CAPTION is empty"), ("   ", "CAPTION is empty"),
                                             ("x" * 1001, "CAPTION is 1001 characters")])
def test_bad_caption_exits_2_with_a_message(caption, message, capsys):
    assert main(["perturb", caption]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("lgip perturb: error:")


def test_negative_k_is_an_argument_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["perturb", CAPTION, "--k-diff", "-1"])
    assert exc.value.code == 2
    assert "--k-diff" in capsys.readouterr().err


def test_non_ascii_caption(capsys):
    assert main(["perturb", "Zwei Hunde 🐶 and two cats.", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["caption"] == "Zwei Hunde 🐶 and two cats."
    assert any(f["original"] == "two" for f in data["flips"])


def test_families_all_json_has_every_family(capsys):
    caption = "A red truck towing a white car to the left of a bus before sunset."
    assert main(["perturb", caption, "--families", "all,relation,temporal", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"caption", "paraphrases", "flips"}
    items = data["paraphrases"] + data["flips"]
    assert all({"text", "type"} <= set(item) for item in items)
    assert {item["type"] for item in items} >= {"template", "marker", "object", "color", "syntactic", "negation",
                                                  "binding", "spatial", "temporal", "scramble_content",
                                                  "scramble_function", "scramble_all"}


def test_families_list_and_default(capsys):
    main(["perturb", CAPTION, "--families", "negation,color", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["paraphrases"] == [] and {f["type"] for f in data["flips"]} == {"negation", "color"}
    main(["perturb", CAPTION, "--json"])
    default = json.loads(capsys.readouterr().out)
    assert {f["type"] for f in default["paraphrases"] + default["flips"]} <= {"template", "marker", "object",
                                                                                "color", "count"}


def test_unknown_family_lists_the_valid_ones(capsys):
    assert main(["perturb", CAPTION, "--families", "core,negashun"]) == 2
    err = capsys.readouterr().err
    assert "--families: unknown family 'negashun'" in err and "valid: core, hard, all" in err and "scramble_all" in err
