"""Label stores never lose a label (issue 52, data loss): merges under a lock, stores that always read back,
keys that are never overwritten or self-contradictory, outputs that never replace what is not a file, and
corrupt stores refused naming the file. Keys are written by hand here (no build is read), so each test is fast."""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from helpers.paths import REPO
from helpers.reliability import run_cli, write_coco
from lgip_dataset import judging
from lgip_dataset.errors import DataError

SEPARATORS = "\u2028\u2029\u0085\x0b\x0c\x1c\x1d\x1e\r"  # every character str.splitlines splits at, besides "\n"


def write_key(path: Path, flips: list[tuple[str, str]], type_: str = "color") -> Path:
    """A sheet's key as `lgip judge draw` writes it, for ``flips`` (caption, variant) of ``type_``."""
    path.write_text(judging.key_text([{"item": k, "type": type_, "caption": c, "variant": v, "original_is": "A"}
                                      for k, (c, v) in enumerate(flips, 1)]), encoding="utf-8")
    return path


def write_labels(path: Path, items: int, label: str = "valid") -> Path:
    path.write_text("".join(f"{k}\t{label}\treason {k}\n" for k in range(1, items + 1)), encoding="utf-8")
    return path


def flips(prefix: str, n: int) -> list[tuple[str, str]]:
    return [(f"A red {prefix} {k}.", f"A blue {prefix} {k}.") for k in range(n)]


def merge_args(key: Path, labels: Path, store: Path, judge: str = "ann", *extra: str) -> list[str]:
    return ["judge", "merge", "--key", str(key), "--labels", f"{judge}={labels}", "--store", str(store), *extra]


# ------------------------------------------------------------------------------------------ concurrent merges


def test_two_merges_at_once_keep_both_sheets_labels(tmp_path, monkeypatch):
    """Each merge reads the store, waits a while (a large store), then writes: without the lock the second
    write would drop the first sheet's labels. Repeated, on a new store and on one that holds labels already."""
    from lgip_dataset.judging import store as store_module
    from lgip_metric.cli import main

    slow_text = store_module.store_text

    def store_text(store):
        text = slow_text(store)
        threading.Event().wait(0.3)  # between the read and the write: the window two merges would race in
        return text

    monkeypatch.setattr(store_module, "store_text", store_text)
    sheets = [(write_key(tmp_path / f"s{k}.json", flips(f"sheet{k}", 13)), write_labels(tmp_path / f"l{k}.tsv", 13))
              for k in (1, 2)]
    for trial in range(3):
        store = tmp_path / f"store{trial}.jsonl.gz"
        if trial == 2:
            assert main(merge_args(write_key(tmp_path / "old.json", flips("old", 200)),
                                   write_labels(tmp_path / "old.tsv", 200), store)) == 0
        codes = []
        threads = [threading.Thread(target=lambda k=k, l=l: codes.append(main(merge_args(k, l, store))))
                   for k, l in sheets]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert codes == [0, 0]
        held = judging.read_store(store)
        assert set(flips("sheet1", 13)) | set(flips("sheet2", 13)) <= held.keys(), trial
        assert len(held) == 26 + (200 if trial == 2 else 0)


def test_two_merge_processes_at_once_keep_both_sheets_labels(tmp_path):
    """The same with two `lgip judge merge` processes started together on a store of 5,000 flips (once: each
    process takes seconds to start; the test above repeats the race)."""
    big = tmp_path / "store.jsonl"
    assert run_cli(*merge_args(write_key(tmp_path / "old.json", flips("old", 5000)),
                               write_labels(tmp_path / "old.tsv", 5000), big)).code == 0
    sheets = [(write_key(tmp_path / f"s{k}.json", flips(f"sheet{k}", 13)), write_labels(tmp_path / f"l{k}.tsv", 13))
              for k in (1, 2)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    for trial in range(1):
        started = [subprocess.Popen([sys.executable, "-m", "lgip_metric.cli", *merge_args(k, l, big, f"judge{trial}")],
                                    cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                   for k, l in sheets]
        for process in started:
            out, err = process.communicate(timeout=120)
            assert process.returncode == 0, err
        held = judging.read_store(big)
        for flip in flips("sheet1", 13) + flips("sheet2", 13):
            assert f"judge{trial}" in [e["judge"] for e in held[flip]["labels"]]


# ------------------------------------------------------------------------------------------ stores always read back


@pytest.mark.parametrize("separator", list(SEPARATORS))
@pytest.mark.parametrize("name", ["store.jsonl", "store.jsonl.gz"])
def test_line_separators_in_a_caption_a_sheet_or_a_judge_leave_the_store_readable(tmp_path, separator, name):
    store = tmp_path / name
    earlier = flips("earlier", 3)
    assert run_cli(*merge_args(write_key(tmp_path / "e.json", earlier), write_labels(tmp_path / "e.tsv", 3),
                               store)).code == 0
    odd = [(f"A red{separator}bus.", f"A blue{separator}bus."), ("A cat.", f"Two{separator}cats.")]
    outcome = run_cli(*merge_args(write_key(tmp_path / "k.json", odd), write_labels(tmp_path / "l.tsv", 2), store,
                                  f"ann{separator}bob", "--sheet-name", f"sheet{separator}2"))
    assert outcome.code == 0, outcome.text
    held = judging.read_store(store)
    assert set(earlier) | set(odd) == held.keys()
    assert held[odd[0]]["labels"] == [{"judge": f"ann{separator}bob", "label": "valid", "reason": "reason 1",
                                       "sheet": f"sheet{separator}2"}]
    text = (gzip.decompress(store.read_bytes()) if name.endswith(".gz") else store.read_bytes()).decode()
    assert len(text.splitlines()) == len(held) == 5  # no line end inside a record, however lines are split
    report = run_cli("judge", "report", "--store", store)
    assert report.code == 0 and "5 flip(s)" in report.out, report.text


def test_a_store_written_before_the_escapes_still_reads(tmp_path):
    record = {"caption": "A red\u2028bus.", "variant": "A blue\u2028bus.", "type": "color",
              "labels": [{"judge": "ann", "label": "valid", "reason": "", "sheet": "s"}]}
    store = tmp_path / "old.jsonl"
    store.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    assert list(judging.read_store(store)) == [("A red\u2028bus.", "A blue\u2028bus.")]


def test_a_store_that_would_not_read_back_is_not_written(tmp_path):
    store = tmp_path / "store.jsonl"
    judging.write_store(store, judging.read_store(_one_record_store(tmp_path)))
    before = store.read_bytes()
    bad = judging.read_store(store)
    next(iter(bad.values()))["labels"][0]["label"] = "maybe"
    with pytest.raises(DataError, match="would not read back"):
        judging.write_store(store, bad)
    assert store.read_bytes() == before


def _one_record_store(tmp_path: Path) -> Path:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"caption": "A cat.", "variant": "A dog.", "type": "object", "labels": [
        {"judge": "ann", "label": "valid", "reason": "", "sheet": "s"}]}) + "\n", encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------------ keys and labels


def test_a_key_with_one_flip_under_two_items_is_refused_and_the_store_kept(tmp_path):
    store = tmp_path / "store.jsonl"
    assert run_cli(*merge_args(write_key(tmp_path / "e.json", flips("e", 2)), write_labels(tmp_path / "e.tsv", 2),
                               store)).code == 0
    before = store.read_bytes()
    twice = flips("x", 13) + [flips("x", 13)[0]] + flips("y", 12)
    outcome = run_cli(*merge_args(write_key(tmp_path / "k.json", twice), write_labels(tmp_path / "l.tsv", 26), store))
    assert outcome.code == 2 and "Traceback" not in outcome.text
    assert "k.json: items 1 and 14 are the same flip" in outcome.err
    assert store.read_bytes() == before


def test_a_label_file_of_another_sheet_is_refused_naming_the_key(tmp_path):
    key = write_key(tmp_path / "k.json", flips("x", 13))
    for items, says in ((26, "item 14 is not on the sheet"), (5, "no label for item(s) 6, 7")):
        outcome = run_cli(*merge_args(key, write_labels(tmp_path / "l.tsv", items), tmp_path / "store.jsonl"))
        assert outcome.code == 2 and says in outcome.err and "of the sheet of --key" in outcome.err, outcome.text
    assert not (tmp_path / "store.jsonl").exists()


def test_draw_refuses_to_overwrite_a_key(tmp_path):
    key = tmp_path / "sheet.json"
    key.write_text("[]", encoding="utf-8")
    for existing in (key, tmp_path / "sheet_2.json"):
        existing.write_text("the only copy", encoding="utf-8")
        split = ["--split", "2"] if existing.name.endswith("_2.json") else []
        outcome = run_cli("judge", "draw", tmp_path / "no-build", "--types", "color", "--n", "2", *split,
                          "--sheet", tmp_path / "sheet.md", "--key", key)
        assert outcome.code == 2 and f"--key {existing} exists" in outcome.err and "another --key" in outcome.err
        assert existing.read_text(encoding="utf-8") == "the only copy"
        existing.unlink()


def test_a_flip_drawn_as_two_types_is_counted_under_each(tmp_path):
    same = flips("x", 3)
    store = tmp_path / "store.jsonl"
    assert run_cli(*merge_args(write_key(tmp_path / "h.json", same, "hard_color"), write_labels(tmp_path / "a.tsv", 3),
                               store)).code == 0
    assert run_cli(*merge_args(write_key(tmp_path / "c.json", same, "color"), write_labels(tmp_path / "b.tsv", 3),
                               store, "bob")).code == 0
    line = json.loads(store.read_text(encoding="utf-8").split("\n")[0])
    assert line["type"] == ["hard_color", "color"] and [e["judge"] for e in line["labels"]] == ["ann", "bob"]
    assert run_cli("judge", "report", "--store", store, "--json", tmp_path / "all.json").code == 0
    counts = json.loads((tmp_path / "all.json").read_text(encoding="utf-8"))
    assert counts["per_type"]["hard_color"]["drawn"] == counts["per_type"]["color"]["drawn"] == 3
    assert counts["all"]["drawn"] == 3  # once over all
    assert run_cli("judge", "report", "--store", store, "--types", "color", "--json", tmp_path / "c.json").code == 0
    assert list(json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))["per_type"]) == ["color"]


# ------------------------------------------------------------------------------------------ outputs


@pytest.fixture
def store(tmp_path) -> Path:
    return _one_record_store(tmp_path)


def test_json_to_a_full_device_says_no_space(store):
    outcome = run_cli("judge", "report", "--store", store, "--json", "/dev/full")
    assert outcome.code == 2 and "Traceback" not in outcome.text
    assert "--json /dev/full: no space left on its device" in outcome.err
    assert Path("/dev/full").is_char_device()


def test_a_pipe_or_a_link_to_one_is_written_not_replaced(store, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to(fifo)
    read = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_text(encoding="utf-8")))
    reader.start()
    outcome = run_cli("judge", "report", "--store", store, "--json", link)
    reader.join(timeout=30)
    assert outcome.code == 0, outcome.text
    assert json.loads(read[0])["format"] == "lgip-judged"
    assert link.is_symlink() and fifo.is_fifo()
    null = tmp_path / "null"
    null.symlink_to("/dev/null")
    assert run_cli("judge", "report", "--store", store, "--markdown", null).code == 0
    assert null.is_symlink() and Path("/dev/null").is_char_device()


def test_dev_stdout_is_written_to_never_replaced(store, tmp_path):
    """The command in a subprocess whose stdout is a file: the JSON lands in that file, after the report."""
    out = tmp_path / "out.txt"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with open(out, "w", encoding="utf-8") as handle:
        done = subprocess.run([sys.executable, "-m", "lgip_metric.cli", "judge", "report", "--store", str(store),
                               "--json", "/dev/stdout"], stdout=handle, stderr=subprocess.PIPE, text=True, env=env,
                              cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    assert "## Blind judgements" in text and '"format": "lgip-judged"' in text
    assert Path("/dev/stdout").is_symlink()


def test_a_symlink_to_a_file_keeps_the_link_and_replaces_the_file(store, tmp_path):
    target = tmp_path / "real.json"
    target.write_text("old", encoding="utf-8")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert run_cli("judge", "report", "--store", store, "--json", link).code == 0
    assert link.is_symlink() and json.loads(target.read_text(encoding="utf-8"))["format"] == "lgip-judged"


@pytest.mark.parametrize("option", ["--store", "--sheet", "--json", "--markdown"])
def test_outputs_under_a_file_or_in_an_unwritable_folder_are_refused_before_the_work(tmp_path, store, option,
                                                                                    monkeypatch):
    from lgip_dataset.files import atomic

    (tmp_path / "file").write_text("x", encoding="utf-8")
    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access
    monkeypatch.setattr(atomic.os, "access", lambda path, mode: Path(path) != locked and real_access(path, mode))
    for where, says in ((tmp_path / "file" / "out.jsonl", f"{tmp_path / 'file'} is a file, not a folder"),
                        (locked / "out.jsonl", f"the folder {locked} is not writable"),
                        (locked / "new" / "out.jsonl", f"the folder {locked} is not writable")):
        if option == "--store":
            argv = merge_args(write_key(tmp_path / "k.json", flips("x", 2)), write_labels(tmp_path / "l.tsv", 2), where)
        elif option == "--sheet":
            argv = ["judge", "draw", tmp_path / "no-build", "--types", "color", "--n", "1", "--sheet", where,
                    "--key", tmp_path / "new-key.json"]
        else:
            argv = ["judge", "report", "--store", store, option, where]
        outcome = run_cli(*argv)
        assert outcome.code == 2 and "Traceback" not in outcome.text, outcome.text
        assert f"{option} {where}: {says}" in outcome.err
        assert "Blind judgements" not in outcome.out and "no-build" not in outcome.err  # refused before the work


# ------------------------------------------------------------------------------------------ corrupt stores


@pytest.fixture
def corrupt_store(tmp_path) -> Path:
    data = gzip.compress(("".join(json.dumps({"caption": f"A cat {k}.", "variant": f"A dog {k}.", "type": "object",
                                              "labels": []}) + "\n" for k in range(50))).encode(), mtime=0)
    path = tmp_path / "bad.jsonl.gz"
    path.write_bytes(data[:20] + bytes(b ^ 0x55 for b in data[20:40]) + data[40:])
    return path


def test_a_gzip_corrupt_store_is_refused_naming_it(tmp_path, corrupt_store):
    says = f"{corrupt_store}: cannot read it as gzip-compressed UTF-8 JSON Lines"
    key = write_key(tmp_path / "k.json", flips("x", 2))
    runs = {"--store": merge_args(key, write_labels(tmp_path / "l.tsv", 2), corrupt_store),
            "--exclude-judged": ["judge", "draw", REPO / "lgip_dataset" / "sample", "--types", "color", "--n", "1",
                                 "--exclude-judged", corrupt_store, "--sheet", tmp_path / "s.md",
                                 "--key", tmp_path / "s.json"]}
    captions, _ = write_coco(tmp_path / "coco", n_images=2)
    runs["--judged"] = ["build", "--captions", captions, "--no-images", "--out", tmp_path / "built", "--quiet",
                        "--judged", corrupt_store]
    for option, argv in runs.items():
        outcome = run_cli(*argv)
        assert outcome.code == 2 and "Traceback" not in outcome.text and "zlib" not in outcome.text, outcome.text
        assert f"{option} {says}" in outcome.err
    assert not (tmp_path / "built").exists()
