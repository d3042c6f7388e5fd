"""Blind judging (`lgip judge`, lgip_dataset.judging): sheets drawn blind and seeded, labels merged into a store,
majority and agreement against textbook formulas, labels carried into builds and `lgip evaluate --validated`."""
from __future__ import annotations

import gzip
import hashlib
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import datasets
import pandas as pd
import pytest
from hypothesis import given, strategies as st

from helpers.paths import REPO
from lgip_dataset import SAMPLE_DIR, judging, schema
from lgip_dataset.errors import DataError
from lgip_dataset.files import hub_io
from lgip_metric.cli import main as lgip
from lgip_metric.results.model_index import eval_results
from lgip_metric.results.record import load_results
from lgip_metric.variant_types import VARIANT_TYPES

VALID, INVALID, ABSURD, NOT = judging.LABELS
CORE_FLIPS = "object,color,count"


def draw(tmp_path: Path, *args: str, name: str = "sheet") -> list[dict]:
    """`lgip judge draw` of the embedded sample (unless a folder comes first); the key (of sheet 1 when split)."""
    folder = [] if args and not args[0].startswith("--") else [str(SAMPLE_DIR)]
    assert lgip(["judge", "draw", *folder, *args, "--sheet", str(tmp_path / f"{name}.md"),
                 "--key", str(tmp_path / f"{name}.json")]) == 0
    return json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8")) if (tmp_path / f"{name}.json").exists() else []


def label_file(path: Path, key: list[dict], label_of) -> Path:
    """A judge's label file: ``label_of(entry)`` for each item of ``key``, with a reason."""
    path.write_text("# a judge's labels\n\n" + "".join(f"{e['item']}\t{label_of(e)}\tbecause {e['item']}\n" for e in key),
                    encoding="utf-8")
    return path


def merge(key_path: Path, store: Path, **judges: Path) -> None:
    labels = [arg for name, path in judges.items() for arg in ("--labels", f"{name}={path}")]
    assert lgip(["judge", "merge", "--key", str(key_path), *labels, "--store", str(store)]) == 0


def sample_flips(types: set[str]) -> set[tuple[str, str]]:
    pairs = hub_io.load_config(SAMPLE_DIR, schema.PAIRS).to_pandas()
    flips = pairs[(pairs["kind"] == "flip") & pairs["type"].isin(types)]
    return set(zip(flips["caption"], flips["variant"]))


# ------------------------------------------------------------------------------------------ drawing


def test_a_sheet_is_blind_seeded_and_its_key_unblinds_it(tmp_path):
    key = draw(tmp_path, "--types", CORE_FLIPS, "--n", "40", "--seed", "5")
    sheet = (tmp_path / "sheet.md").read_text(encoding="utf-8")
    lines = sheet.splitlines()
    assert lines[0] == "| item | text A | text B |" and len(lines) == 42
    for line, entry in zip(lines[2:], key):
        item, a, b = (cell.strip() for cell in line.strip("|").split("|"))
        assert int(item) == entry["item"] and {a, b} == {entry["caption"], entry["variant"]}  # no type, no hint
        assert (a == entry["caption"]) == (entry["original_is"] == "A")
        assert entry["type"] in CORE_FLIPS.split(",")
    assert {"A", "B"} == {e["original_is"] for e in key}  # both orders occur
    again = draw(tmp_path, "--types", CORE_FLIPS, "--n", "40", "--seed", "5", name="again")
    assert again == key and (tmp_path / "again.md").read_text(encoding="utf-8") == sheet  # deterministic
    other = draw(tmp_path, "--types", CORE_FLIPS, "--n", "40", "--seed", "6", name="other")
    assert [(e["caption"], e["variant"]) for e in other] != [(e["caption"], e["variant"]) for e in key]
    ranks = [judging.rank(5, e["caption"], e["variant"]) for e in key]
    assert ranks == sorted(ranks)  # in the seeded order


def test_all_per_type_and_split(tmp_path):
    every = draw(tmp_path, "--types", "hard_color,hard_count", "--all", "--seed", "1")
    assert {(e["caption"], e["variant"]) for e in every} == sample_flips({"hard_color", "hard_count"})
    assert len(every) == len({(e["caption"], e["variant"]) for e in every})  # each pair of texts once
    per_type = draw(tmp_path, "--types", CORE_FLIPS, "--n", "4", "--per-type", name="per")
    assert Counter(e["type"] for e in per_type) == {"object": 4, "color": 4, "count": 4}
    whole = draw(tmp_path, "--types", CORE_FLIPS, "--n", "7", "--seed", "2", name="whole")
    assert lgip(["judge", "draw", str(SAMPLE_DIR), "--types", CORE_FLIPS, "--n", "7", "--seed", "2", "--split", "3",
                 "--sheet", str(tmp_path / "s.md"), "--key", str(tmp_path / "k.json")]) == 0
    parts = [json.loads((tmp_path / f"k_{k}.json").read_text()) for k in (1, 2, 3)]
    assert [len(p) for p in parts] == [3, 2, 2] and all((tmp_path / f"s_{k}.md").is_file() for k in (1, 2, 3))
    dealt = [parts[k % 3][k // 3] for k in range(7)]  # round robin in the seeded order
    assert [(e["caption"], e["variant"]) for e in dealt] == [(e["caption"], e["variant"]) for e in whole]
    assert all([e["item"] for e in p] == list(range(1, len(p) + 1)) for p in parts)


def test_a_draw_keeps_its_flips_when_other_flips_of_a_rebuild_change(monkeypatch):
    """A rebuild that drops or changes some flips changes only those in the draw: every other drawn flip keeps
    its place, so its judgement carries over."""
    types = ("object", "color", "count")
    full = [(r["caption"], r["variant"]) for r in judging.draw(SAMPLE_DIR, types, n=6, seed=3)]
    real = datasets.load_dataset

    def rebuilt(*args, **kwargs):  # the first drawn flip and every other undrawn row are gone
        pairs = real(*args, **kwargs)
        return pairs.filter(lambda r, i: (r["caption"], r["variant"]) != full[0]
                            and ((r["caption"], r["variant"]) in full or i % 2 == 0), with_indices=True)
    monkeypatch.setattr(datasets, "load_dataset", rebuilt)
    again = [(r["caption"], r["variant"]) for r in judging.draw(SAMPLE_DIR, types, n=6, seed=3)]
    assert again[:5] == full[1:] and again[5] not in full


# ------------------------------------------------------------------------------------------ merging and majority


def test_majority_breaks_a_tie_against_valid():
    assert judging.majority([VALID, ABSURD]) == ABSURD
    assert judging.majority([VALID, ABSURD, VALID]) == VALID
    assert judging.majority([NOT, ABSURD]) == ABSURD and judging.majority([NOT, INVALID, NOT]) == NOT
    assert judging.disputed([VALID, ABSURD]) and judging.disputed([VALID, ABSURD, NOT])
    assert not judging.disputed([VALID, ABSURD, VALID]) and not judging.disputed([ABSURD])


def test_a_gzip_compressed_key_merges_as_its_plain_twin(tmp_path):
    """The judged rounds keep their keys gzip-compressed: such a key gives the same store, sheet name included."""
    key = draw(tmp_path, "--types", CORE_FLIPS, "--n", "6", "--seed", "3", name="census_key_1")
    packed = tmp_path / "packed" / "census_key_1.json.gz"
    packed.parent.mkdir()
    packed.write_bytes(gzip.compress((tmp_path / "census_key_1.json").read_bytes(), mtime=0))
    labels = label_file(tmp_path / "ann.tsv", key, lambda e: ABSURD if e["item"] % 2 else VALID)
    merge(tmp_path / "census_key_1.json", tmp_path / "plain.jsonl", ann=labels)
    merge(packed, tmp_path / "packed.jsonl", ann=labels)
    assert (tmp_path / "packed.jsonl").read_bytes() == (tmp_path / "plain.jsonl").read_bytes()
    assert {x["sheet"] for r in judging.read_store(tmp_path / "packed.jsonl").values() for x in r["labels"]} \
        == {"census_key_1"}
    assert judging.read_key(packed) == key
    packed.write_bytes(b"\x1f\x8b not gzip")
    with pytest.raises(DataError, match="census_key_1.json.gz: cannot read it as JSON"):
        judging.read_key(packed)


def test_two_sheets_of_several_judges_merge_into_one_store_and_a_third_judge_settles_the_disputes(tmp_path):
    assert lgip(["judge", "draw", str(SAMPLE_DIR), "--types", CORE_FLIPS, "--n", "12", "--split", "2",
                 "--sheet", str(tmp_path / "s.md"), "--key", str(tmp_path / "k.json")]) == 0
    keys = [json.loads((tmp_path / f"k_{k}.json").read_text()) for k in (1, 2)]
    store = tmp_path / "store.jsonl"
    for k, key in enumerate(keys, 1):
        ann = label_file(tmp_path / f"ann{k}.tsv", key, lambda e: VALID)
        other = label_file(tmp_path / f"other{k}.tsv", key, lambda e: ABSURD if e["item"] % 2 else VALID)
        merge(tmp_path / f"k_{k}.json", store, ann=ann, **{("bob" if k == 1 else "cy"): other})
    records = judging.read_store(store)
    assert len(records) == 12
    for k, key in enumerate(keys, 1):
        for e in key:
            labels = records[(e["caption"], e["variant"])]["labels"]
            assert [(x["judge"], x["label"], x["sheet"]) for x in labels] == [
                ("ann", VALID, f"k_{k}"), ("bob" if k == 1 else "cy", ABSURD if e["item"] % 2 else VALID, f"k_{k}")]
            assert labels[1]["reason"] == f"because {e['item']}"
    lines = [json.loads(line) for line in store.read_text(encoding="utf-8").splitlines()]
    assert [(r["type"], r["caption"], r["variant"]) for r in lines] == sorted((r["type"], r["caption"], r["variant"])
                                                                              for r in lines)
    # bob labels sheet 1 again: his labels are replaced, in their place, not added
    before = store.read_bytes()
    merge(tmp_path / "k_1.json", store, bob=label_file(tmp_path / "bob-again.tsv", keys[0], lambda e: NOT))
    again = judging.read_store(store)
    assert all([x["judge"] for x in again[(e["caption"], e["variant"])]["labels"]] == ["ann", "bob"]
               and again[(e["caption"], e["variant"])]["labels"][1]["label"] == NOT for e in keys[0])
    merge(tmp_path / "k_1.json", store, bob=tmp_path / "other1.tsv")
    assert store.read_bytes() == before  # the same labels give the same file
    # valid against absurd is a tie: absurd; the disputed flips make the third judge's sheet
    disputed = draw(tmp_path, "--types", CORE_FLIPS, "--all", "--disputed", str(store), name="third")
    tied = {(e["caption"], e["variant"]) for key in keys for e in key if e["item"] % 2}
    assert {(e["caption"], e["variant"]) for e in disputed} == tied
    counts = judging.judged_counts(judging.records_of(judging.read_store(store)))
    assert counts["all"][ABSURD] == len(tied) and counts["all"][VALID] == 12 - len(tied)
    merge(tmp_path / "third.json", store, dee=label_file(tmp_path / "dee.tsv", disputed, lambda e: VALID))
    counts = judging.judged_counts(judging.records_of(judging.read_store(store)))
    assert counts["all"][VALID] == 12 and counts["all"]["drawn"] == 12
    assert lgip(["judge", "draw", str(SAMPLE_DIR), "--types", CORE_FLIPS, "--all", "--disputed", str(store),
                 "--sheet", str(tmp_path / "none.md"), "--key", str(tmp_path / "none.json")]) == 2
    # flips labelled twice are left out of a new draw; the others stay
    rest = draw(tmp_path, "--types", CORE_FLIPS, "--all", "--exclude-judged", str(store), name="rest")
    assert {(e["caption"], e["variant"]) for e in rest} == sample_flips(set(CORE_FLIPS.split(","))) - set(records)


def test_a_gzip_store_holds_the_same_records_byte_for_byte_each_time(tmp_path):
    key = draw(tmp_path, "--types", "hard_object", "--n", "5")
    labels = {"ann": judging.read_labels(label_file(tmp_path / "a.tsv", key, lambda e: INVALID), len(key))}
    store: dict = {}
    assert judging.merge(store, key, labels, "s") == 5
    for name in ("one.jsonl.gz", "two.jsonl.gz", "plain.jsonl"):
        judging.write_store(tmp_path / name, store)
    assert (tmp_path / "one.jsonl.gz").read_bytes() == (tmp_path / "two.jsonl.gz").read_bytes()
    assert gzip.decompress((tmp_path / "one.jsonl.gz").read_bytes()) == (tmp_path / "plain.jsonl").read_bytes()
    assert judging.read_store(tmp_path / "one.jsonl.gz") == store == judging.read_store(tmp_path / "plain.jsonl")


def test_report_writes_markdown_and_the_judged_json_lgip_audit_reads(tmp_path):
    from lgip_metric.audit.extended import read_judged

    key = draw(tmp_path, "--types", "object,color", "--n", "3", "--per-type")
    store = tmp_path / "store.jsonl.gz"
    merge(tmp_path / "sheet.json", store, ann=label_file(tmp_path / "a.tsv", key, lambda e: ABSURD if e["item"] == 1 else VALID))
    assert lgip(["judge", "report", "--store", str(store), "--markdown", str(tmp_path / "r.md"),
                 "--json", str(tmp_path / "r.json")]) == 0
    judged = read_judged(tmp_path / "r.json")
    assert {t: c["drawn"] for t, c in judged.items()} == {"color": 3, "object": 3}
    assert sum(c[VALID] for c in judged.values()) == 5 and sum(c[ABSURD] for c in judged.values()) == 1
    text = (tmp_path / "r.md").read_text(encoding="utf-8")
    first = next(e for e in key if e["item"] == 1)
    assert "### Flips not judged valid" in text and first["variant"] in text and "ann: absurd, because 1" in text
    assert "| valid | 5 | 83.3% (35.9%-99.6%) |" in text  # Clopper-Pearson of 5 / 6
    assert lgip(["judge", "report", "--store", str(store), "--types", "count"]) == 2


# ------------------------------------------------------------------------------------------ agreement


def reference_cohen(first: list, second: list, labels) -> float | None:
    """Cohen's kappa by its definition: (observed - expected agreement) / (1 - expected); None where undefined."""
    n = len(first)
    observed = sum(a == b for a, b in zip(first, second)) / n
    expected = sum((first.count(label) / n) * (second.count(label) / n) for label in labels)
    return None if expected == 1 else (observed - expected) / (1 - expected)


def reference_fleiss(rows: list[list[str]]) -> float | None:
    """Fleiss' kappa by its definition for N subjects rated by n raters each; None where undefined."""
    subjects, raters = len(rows), len(rows[0])
    counts = [[row.count(label) for label in judging.LABELS] for row in rows]
    agreement = sum((sum(c * c for c in row) - raters) / (raters * (raters - 1)) for row in counts) / subjects
    shares = [sum(row[j] for row in counts) / (subjects * raters) for j in range(len(judging.LABELS))]
    chance = sum(p * p for p in shares)
    return None if chance == 1 else (agreement - chance) / (1 - chance)


def close(ours, reference) -> bool:
    return ours is None and reference is None or (ours is not None and reference is not None
                                                  and abs(ours - reference) < 1e-9)


@given(st.lists(st.lists(st.sampled_from(judging.LABELS), min_size=2, max_size=4), min_size=1, max_size=40))
def test_cohen_and_fleiss_kappa_equal_their_textbook_definitions(votes):
    records = [{"type": "t", "caption": f"c{i}", "variant": f"v{i}",
                "labels": [{"judge": f"j{k}", "label": label, "reason": "", "sheet": "s"} for k, label in enumerate(v)]}
               for i, v in enumerate(votes)]
    ours = judging.agreement(records)
    first, second = [v[0] for v in votes], [v[1] for v in votes]
    assert ours["flips_with_two_labels"] == len(votes)
    assert ours["raw_agreement"] == pytest.approx(sum(a == b for a, b in zip(first, second)) / len(votes))
    assert close(ours["cohen_kappa"], reference_cohen(first, second, judging.LABELS))
    assert close(ours["cohen_kappa_valid"], reference_cohen([a == VALID for a in first], [b == VALID for b in second],
                                                            (True, False)))
    triples = [v[:3] for v in votes if len(v) >= 3]
    assert ours["flips_with_three_labels"] == len(triples)
    assert close(ours["fleiss_kappa"], reference_fleiss(triples) if triples else None)


# ------------------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize("content, says", [
    ("1\tvalid\tok\n2\tbroken\tno\n", "bad.tsv:2: label 'broken' is none of valid, linguistically invalid"),
    ("1\tvalid\n9\tvalid\n", "bad.tsv:2: item 9 is not on the sheet (its items are 1..3)"),
    ("1\tvalid\n# a comment\n1\tabsurd\n", "bad.tsv:3: item 1 is labelled again (first on line 1)"),
    ("1\tvalid\n", "bad.tsv: no label for item(s) 2, 3"),
    ("one\tvalid\n", "bad.tsv:1: item 'one' is not a whole number"),
    ("1 valid\n", "bad.tsv:1: expected '<item>\\t<label>\\t<reason>'"),
])
def test_a_bad_label_file_is_refused_naming_its_line(tmp_path, capsys, content, says):
    draw(tmp_path, "--types", "object", "--n", "3")
    bad = tmp_path / "bad.tsv"
    bad.write_text(content, encoding="utf-8")
    with pytest.raises(DataError, match=re.escape(says)):
        judging.read_labels(bad, 3)
    capsys.readouterr()
    assert lgip(["judge", "merge", "--key", str(tmp_path / "sheet.json"), "--labels", f"ann={bad}",
                 "--store", str(tmp_path / "store.jsonl")]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err and not (tmp_path / "store.jsonl").exists()


@pytest.mark.parametrize("args, says", [
    (["draw", "missing-folder", "--types", "object", "--n", "3"], "missing-folder: no such folder"),
    (["draw", "{empty}", "--types", "object", "--n", "3"], "has no parquet files for config 'pairs'"),
    (["draw", "{sample}", "--types", "object,nonsense", "--n", "3"], "has no flip of type 'nonsense'"),
    (["draw", "{sample}", "--types", "object", "--n", "100000"], "ask for --n"),
    (["draw", "{sample}", "--types", "hard_count", "--n", "36", "--validated-only"], "ask for --n"),  # 36 in pairs
    (["draw", "{sample}", "--types", "object", "--n", "3", "--exclude-judged", "{empty}/s.jsonl"], "no such label store"),
    (["merge", "--key", "{empty}/key.json", "--labels", "a={empty}/a.tsv", "--store", "{empty}/s.jsonl"],
     "no such key file"),
    (["report", "--store", "{empty}/store.txt"], "a label store is a .jsonl or .jsonl.gz file"),
])
def test_lgip_judge_refuses_bad_input_with_one_line_and_status_2(tmp_path, args, says):
    (tmp_path / "empty").mkdir()
    args = [a.format(empty=tmp_path / "empty", sample=SAMPLE_DIR) for a in args]
    if args[0] == "draw":
        args += ["--sheet", str(tmp_path / "s.md"), "--key", str(tmp_path / "k.json")]
    done = subprocess.run([sys.executable, "-m", "lgip_metric.cli", "judge", *args], capture_output=True, text=True,
                          cwd=tmp_path, env={"PYTHONPATH": str(REPO), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
                                             "PATH": "/usr/bin:/bin"}, timeout=300)
    assert done.returncode == 2 and says in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("lgip judge: error:") == 1
    assert not (tmp_path / "s.md").exists()


def test_a_store_line_that_is_not_a_record_is_refused_naming_it(tmp_path):
    store = tmp_path / "s.jsonl"
    good = {"caption": "a dog", "variant": "a cat", "type": "object",
            "labels": [{"judge": "ann", "label": VALID, "reason": "", "sheet": "s"}]}
    store.write_text(json.dumps(good) + "\n" + json.dumps({**good, "labels": [{**good["labels"][0], "label": "fine"}]}))
    with pytest.raises(DataError, match=re.escape(f"{store}:2: label 'fine' is none of")):
        judging.read_store(store)
    store.write_text(json.dumps(good) + "\n\n" + json.dumps(good) + "\n")
    with pytest.raises(DataError, match=re.escape(f"{store}:3: the flip 'a cat' of 'a dog' has a record already (line 1)")):
        judging.read_store(store)


# ------------------------------------------------------------------------------------------ builds


@pytest.fixture(scope="module")
def image_ids(sample_coco_dir) -> list[int]:
    captions = json.loads((sample_coco_dir / "annotations" / "captions_val2017.json").read_text(encoding="utf-8"))
    return sorted(image["id"] for image in captions["images"])


def build(sample_coco_dir, out: Path, ids: list[int], *extra: str) -> Path:
    assert lgip(["build", "--captions", str(sample_coco_dir / "annotations" / "captions_val2017.json"), *extra,
                 "--image-ids", ",".join(map(str, ids)), "--out", str(out), "--quiet"]) == 0
    return out


def empty_shipped_store(tmp_path: Path, monkeypatch) -> None:
    """The package's store labels val2017 flips, some of them this sample's: an empty one of its name stands in."""
    from lgip_dataset.judging import store as store_module
    shipped = tmp_path / "package" / judging.SHIPPED_STORE.name
    shipped.parent.mkdir()
    shipped.write_bytes(gzip.compress(b"", mtime=0))
    monkeypatch.setattr(store_module, "SHIPPED_STORE", shipped)


def expected_validated(pairs: pd.DataFrame) -> set[str]:
    """The row ids the validated rule keeps, by its statement: every paraphrase, every flip all of whose judges
    labelled it valid, and the unlabelled flips of the core and hard groups (the registry's table)."""
    keep = set()
    for row in pairs.itertuples():
        group = VARIANT_TYPES.get(row.type, {}).get("group", "imported")
        if row.kind == "paraphrase" or (row.judged is not None and set(row.judged["labels"]) == {VALID}) \
                or (row.judged is None and group in ("core", "hard")):
            keep.add(row.row_id)
    return keep


def test_labels_survive_a_rebuild_and_the_validated_config_holds_what_the_rule_keeps(sample_coco_dir, image_ids,
                                                                                     tmp_path, monkeypatch):
    empty_shipped_store(tmp_path, monkeypatch)
    first = build(sample_coco_dir, tmp_path / "first", image_ids[:8], "--no-images", "--families", "all")
    extended = "negation,scramble_all"
    key = draw(tmp_path, str(first), "--types", f"{extended},object", "--n", "12", "--per-type")
    store = tmp_path / "store.jsonl.gz"
    merge(tmp_path / "sheet.json", store, ann=label_file(tmp_path / "a.tsv", key, lambda e: VALID),
          bob=label_file(tmp_path / "b.tsv", key, lambda e: ABSURD if e["item"] % 3 == 0 else VALID),
          cy=label_file(tmp_path / "c.tsv", key, lambda e: VALID))  # every third flip: valid to most, not to all
    judged_first = build(sample_coco_dir, tmp_path / "judged-first", image_ids[:8], "--no-images", "--families", "all",
                         "--judged", str(store))
    rebuilt = build(sample_coco_dir, tmp_path / "rebuilt", image_ids[:12], "--no-images", "--families", "all",
                    "--judged", str(store))
    records = judging.read_store(store)
    for folder in (judged_first, rebuilt):
        pairs = hub_io.load_config(folder, schema.PAIRS).to_pandas()
        pairs["judged"] = [None if j is None else {k: list(v) if k != "majority" else v for k, v in j.items()}
                           for j in pairs["judged"]]
        for row in pairs.itertuples():
            labels = records.get((row.caption, row.variant))
            expected = None if labels is None or row.kind != "flip" else {
                "labels": [x["label"] for x in labels["labels"]], "judges": ["ann", "bob", "cy"],
                "majority": judging.majority([x["label"] for x in labels["labels"]])}
            assert row.judged == expected, row.row_id
        assert {(c, v) for c, v, j in zip(pairs["caption"], pairs["variant"], pairs["judged"]) if j} == set(records)
        validated = hub_io.load_config(folder, schema.VALIDATED).to_pandas()
        assert set(validated["row_id"]) == expected_validated(pairs) and len(validated) == len(set(validated["row_id"]))
        info = json.loads((folder / hub_io.BUILD_INFO).read_text(encoding="utf-8"))
        assert info["judged"]["stores"][0]["file"] == judging.SHIPPED_STORE.name  # applied by default
        assert info["judged"]["stores"][-1] == {"file": store.name, "sha256": hashlib.sha256(store.read_bytes()).hexdigest(),
                                                "records": len(records), "matched": len(records)}
        assert schema.VALIDATED in info["configs"] and info["judged"]["validated_rows"] == len(validated)
        card = (folder / "README.md").read_text(encoding="utf-8")
        assert "## Blind judgements" in card and "config_name: validated" in card
        assert f"| negation | {info['judged']['per_type']['negation']['flips']:,} | 12 |" in card
    assert datasets.load_dataset(str(rebuilt), "validated", split="test").num_rows == info["judged"]["validated_rows"]
    plain = build(sample_coco_dir, tmp_path / "plain", image_ids[:8], "--no-images", "--families", "all",
                  "--judged", "none")
    pairs = hub_io.load_config(plain, schema.PAIRS)
    assert pairs["judged"] == [None] * pairs.num_rows and not (plain / schema.VALIDATED).exists()
    assert json.loads((plain / hub_io.BUILD_INFO).read_text())["judged"]["stores"] == []


def test_a_folder_built_before_labels_loads_and_draws(tmp_path):
    """The sample rewritten without the judged column loads as written, and draws the same sheet."""
    import shutil

    old = tmp_path / "old"
    shutil.copytree(SAMPLE_DIR, old)
    (shard,) = (old / schema.PAIRS).glob("*.parquet")
    pairs = hub_io.load_config(SAMPLE_DIR, schema.PAIRS).remove_columns("judged")
    pairs.to_parquet(str(shard))
    shutil.rmtree(old / schema.VALIDATED, ignore_errors=True)  # written only from labels
    assert "judged" not in hub_io.load_config(old, schema.PAIRS).column_names
    assert judging.draw(old, ["object"], n=5) == judging.draw(SAMPLE_DIR, ["object"], n=5)
    with pytest.raises(DataError, match="no flip of .* carries labels"):
        judging.draw(old, ["object"], validated_only=True)


# ------------------------------------------------------------------------------------------ evaluate --validated


def base_pair_pr(scores: pd.DataFrame, type_: str) -> float:
    """PR of one flip type by its definition: per (image, caption) the share of its flips scored below the
    caption (a tie is not), averaged over the base pairs."""
    flips = scores[(scores["kind"] == "flip") & (scores["type"] == type_)]
    below = (flips["s_original"] > flips["s_variant"]).astype(float)
    return float(below.groupby([flips["image_id"], flips["caption_id"]]).mean().mean())


def test_evaluate_validated_drops_what_the_rule_drops_and_reports_pr_on_both(sample_coco_dir, image_ids, tmp_path,
                                                                           capsys, monkeypatch):
    empty_shipped_store(tmp_path, monkeypatch)  # every label of these builds is this test's own
    folder = build(sample_coco_dir, tmp_path / "build", image_ids[:6], "--images", str(sample_coco_dir / "val2017_images"),
                   "--families", "core,hard,negation")
    key = draw(tmp_path, str(folder), "--types", "object,negation,hard_object", "--n", "6", "--per-type", "--seed", "4")
    invalid = {(e["caption"], e["variant"]) for e in key if e["item"] % 2}  # core and extended flips alike
    store = tmp_path / "store.jsonl"
    merge(tmp_path / "sheet.json", store, ann=label_file(tmp_path / "a.tsv", key, lambda e: ABSURD if e["item"] % 2 else VALID),
          bob=label_file(tmp_path / "b.tsv", key, lambda e: VALID))  # valid against absurd: absurd
    folder = build(sample_coco_dir, tmp_path / "judged", image_ids[:6], "--images", str(sample_coco_dir / "val2017_images"),
                   "--families", "core,hard,negation", "--judged", str(store))
    common = ["--model", "tiny-clip", "--dataset", str(folder), "--device", "cpu", "--num-workers", "0", "--no-progress",
              "--bootstrap", "20", "--cache-dir", str(tmp_path / "cache")]
    assert lgip(["evaluate", *common, "--out", str(tmp_path / "all")]) == 0
    assert lgip(["evaluate", *common, "--out", str(tmp_path / "validated"), "--validated"]) == 0
    assert "validated rows only:" in capsys.readouterr().out
    everything = pd.read_parquet(tmp_path / "all" / "scores.parquet")
    kept = pd.read_parquet(tmp_path / "validated" / "scores.parquet")
    pairs = hub_io.load_config(folder, schema.PAIRS).to_pandas()
    group = pairs["type"].map(lambda t: VARIANT_TYPES[t]["group"])
    labelled = set(judging.read_store(store))
    texts = list(zip(pairs["caption"], pairs["variant"]))
    dropped = {row_id for row_id, kind, g, pair in zip(pairs["row_id"], pairs["kind"], group, texts)
               if kind == "flip" and (pair in invalid or (g == "extended" and pair not in labelled))}
    assert dropped and set(everything["row_id"]) - set(kept["row_id"]) == dropped
    assert {t for t in pairs.set_index("row_id").loc[sorted(dropped), "type"]} >= {"object", "negation"}
    pd.testing.assert_frame_equal(kept.reset_index(drop=True),
                                  everything[~everything["row_id"].isin(dropped)].reset_index(drop=True))
    record = json.loads((tmp_path / "validated" / "results.json").read_text(encoding="utf-8"))
    assert record["settings"]["validated"] is True and record["dataset"]["validated"] is True
    counts = record["provenance"]["counts"]["validated"]
    assert counts["dropped_rows"] == len(dropped) == sum(counts["dropped_per_type"].values())
    assert counts["kept_rows"] == len(kept) == record["provenance"]["counts"]["scored_rows"]
    table = (tmp_path / "validated" / "report" / "validated.md").read_text(encoding="utf-8")
    compared = record["validated_vs_all"]["per_type"]
    for type_ in ("object", "color", "count", "negation", "hard_object", "hard_color"):
        figures = compared[type_]
        assert figures["rows_all"] == int(((everything["type"] == type_)).sum())
        assert figures["rows_validated"] == int(((kept["type"] == type_)).sum())
        assert figures["all"] == pytest.approx(base_pair_pr(everything, type_), abs=1e-12)
        assert figures["validated"] == pytest.approx(base_pair_pr(kept, type_), abs=1e-12)
        row = next(line for line in table.splitlines() if f"| {type_} | PR |" in line)
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[3:] == [str(figures["rows_all"]), str(figures["rows_validated"]), f"{figures['all']:.4f}",
                             f"{figures['validated']:.4f}"]
    assert record["statistics"]["per_type"]["negation"]["PR"] == pytest.approx(base_pair_pr(kept, "negation"), abs=1e-12)
    assert lgip(["report", str(tmp_path / "all"), str(tmp_path / "validated"), "--out", str(tmp_path / "both")]) == 2
    assert "cannot compare results of the validated rows" in capsys.readouterr().err
    args = {name: {r.dataset_args.get("validated") for r in eval_results(load_results(tmp_path / name), "org/lgip")}
            for name in ("all", "validated")}
    assert args == {"all": {None}, "validated": {True}}  # on a model card, never taken for the results of all rows
