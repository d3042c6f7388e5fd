"""``lgip build --workers N``: the same folder from worker processes as from one process."""
from __future__ import annotations

import hashlib
import os

import pytest

from lgip_dataset.errors import DataError
from lgip_dataset.writing import materialize
from lgip_dataset.writing.materialize import BuildConfig, build
from lgip_dataset.writing.parallel import map_chunks
from lgip_metric.cli import main


def _hashes(folder):
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


class _Bar:
    """What ``map_chunks`` needs of a tqdm bar."""
    n = 0

    def update(self, count):
        self.n += count


def _pid_of_chunk(chunk, offset):
    return [(item + offset, os.getpid()) for item in chunk]


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_map_chunks_keeps_input_order_and_advances_the_bar(workers):
    bar = _Bar()
    with map_chunks(_pid_of_chunk, 100, list(range(23)), workers, bar, 4) as parts:
        results = [r for part in parts for r in part]
    assert [value for value, _ in results] == list(range(100, 123))
    assert bar.n == 23
    pids = {pid for _, pid in results}
    assert (pids == {os.getpid()}) if workers == 1 else (os.getpid() not in pids)


def test_build_with_workers_gives_the_same_folder(sample_coco_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(materialize, "CAPTIONS_PER_TASK", 9)  # many tasks from a small build
    monkeypatch.setattr(materialize, "COUNTED_PER_TASK", 40)
    captions = sample_coco_dir / "annotations" / "captions_val2017.json"
    folders = {}
    for workers in (1, 2):
        out = tmp_path / f"workers{workers}"
        config = BuildConfig(captions=captions, out=out, num_images=12, seed=3, families="all")
        summary = build(config, progress=False, workers=workers)
        assert summary.counts["flips"].get("hard_object"), "the hard flips' choice must be part of the check"
        folders[workers] = _hashes(out)
    assert folders[1] == folders[2]


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5"])
def test_cli_rejects_a_worker_count_below_one(value, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["build", "--captions", str(tmp_path / "c.json"), "--no-images", "--out", str(tmp_path / "o"),
              "--workers", value])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --workers: expected a whole number >= 1, got '{value}'" in err
    assert "Traceback" not in err


def test_build_rejects_a_worker_count_below_one(tmp_path):
    with pytest.raises(DataError, match="workers must be a whole number >= 1"):
        build(BuildConfig(captions=tmp_path / "c.json", out=tmp_path / "o"), workers=0)
