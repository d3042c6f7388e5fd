"""The index of the judged rounds (docs/judged/README.md) and the rows the pages quote from it are what the rounds'
records give now: builders/judged_index.py writes them from each round's keys, label files and round.json."""
from __future__ import annotations

import gzip
import importlib.util
import json

import pytest

from helpers.paths import REPO
from lgip_dataset import judging

spec = importlib.util.spec_from_file_location("judged_index", REPO / "builders" / "judged_index.py")
builder = importlib.util.module_from_spec(spec)
spec.loader.exec_module(builder)


def test_the_index_and_the_pages_rows_are_what_the_records_give_now():
    stale = [path.relative_to(REPO).as_posix() for path, text in builder.outputs().items()
             if path.read_text(encoding="utf-8") != text]
    assert not stale, f"{stale} differ from the judged rounds' records; run `python builders/judged_index.py`"


def test_every_round_folder_tells_its_round_and_has_a_row():
    index = builder.INDEX.read_text(encoding="utf-8")
    for folder in sorted(p for p in builder.JUDGED.iterdir() if p.is_dir()):
        assert (folder / "README.md").is_file(), f"{folder.name}: no README.md telling the round"
        assert f"[{folder.name}]({folder.name}/README.md)" in index, f"{folder.name}: no row in the index"


def _key(seed: int, n: int) -> list[dict]:
    rows = [{"caption": f"A dog number {k} on a couch.", "variant": f"A cat number {k} on a couch.",
             "type": "hard_object"} for k in range(n)]
    rows.sort(key=lambda r: judging.rank(seed, r["caption"], r["variant"]))
    return judging.blind_sheet(rows, seed)[1]


def test_a_keys_seed_is_the_one_its_draw_order_and_its_sheet_say():
    key = _key(4321, 30)
    assert builder.key_seed(key) == 4321
    assert builder.key_seed(key[:5]) is None  # too few items to tell one seed from the others
    assert builder.key_seed([dict(e, item=k) for k, e in enumerate(reversed(key), 1)]) is None  # not in its order


def _write(folder, name, key, labels_by_judge):
    (folder / name).write_bytes(gzip.compress(judging.key_text(key).encode()))
    stem = name.replace("_key", "").removesuffix(".json.gz")
    for judge, labels in labels_by_judge.items():
        (folder / f"{stem}_{judge}.tsv").write_text("".join(f"{k}\t{label}\t\n" for k, label in enumerate(labels, 1)))


def test_a_census_counts_its_sheets_flips_with_every_label_its_folder_gives_them(tmp_path):
    folder = tmp_path / "census_round"
    folder.mkdir()
    key = _key(3101, 24)
    _write(folder, "census_key_1.json.gz", key, {"J1": ["valid"] * 24, "J2": ["absurd"] + ["valid"] * 23})
    third = [dict(key[0], item=1)]
    _write(folder, "census_third_key.json.gz", third, {"J3": ["absurd"]})
    (folder / "round.json").write_text(json.dumps({"kind": "census", "families": "hard 9.9.9", "build": "val2017",
                                                   "judges": "J1–J3", "draws": {"census": {}}}))
    (draw,) = builder.draws(folder)
    measured = builder.measure(draw)
    assert (draw.name, measured["seeds"], measured["labels"]) == ("census", [3101], [2, 3])
    assert (measured["counts"]["drawn"], measured["counts"]["absurd"], measured["unanimous"]) == (24, 1, 23)
    row = builder.row(draw, measured, "judged/")
    assert row.startswith("| — | [census_round](judged/census_round/README.md) (census) | census | hard 9.9.9 |")
    assert "| 3101 | J1–J3 | 2–3 | 24 | 0.0% (0) | 4.2% (1) | 0.0% (0) | 95.8% (23) |" in row


def test_a_page_naming_no_round_is_refused():
    with pytest.raises(ValueError, match=r"p\.md: no judged round is nosuch"):
        builder.page_text("<!-- judged-rows: nosuch -->\n<!-- /judged-rows -->\n", "p.md", [])
