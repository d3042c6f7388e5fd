"""A full disk, met by build, score and the embedding cache: a clear message before the work where it can be
foreseen, no partial folder or half-written file left, and a full cache disk only turns the cache off."""
from __future__ import annotations

import errno
import json
import shutil
from collections import namedtuple

import pytest

from lgip_dataset import SAMPLE_DIR
from helpers.reliability import run_cli, write_coco

MODEL = "random:tiny-clip"
Usage = namedtuple("Usage", "total used free")


def full(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.fixture()
def coco(tmp_path):
    return write_coco(tmp_path / "coco")


def leftovers(root) -> list[str]:
    return sorted(p.name for p in root.rglob("*") if p.name.startswith(".") or p.name.endswith(".tmp"))


def test_build_refuses_a_disk_too_small_for_its_images_before_writing(coco, tmp_path, monkeypatch):
    from lgip_dataset.files import atomic

    monkeypatch.setattr(atomic.shutil, "disk_usage", lambda path: Usage(10**9, 10**9, 100))
    outcome = run_cli("build", "--captions", coco[0], "--images", coco[1], "--out", tmp_path / "out", "--quiet")
    assert outcome.code != 0 and "Traceback" not in outcome.text
    assert "its disk has 0.0 MiB free and the images alone need" in outcome.err
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


def test_build_meeting_a_full_disk_keeps_no_partial_folder(coco, tmp_path, monkeypatch):
    from lgip_dataset.writing import materialize

    monkeypatch.setattr(materialize, "_write_parquet", full)
    outcome = run_cli("build", "--captions", coco[0], "--images", coco[1], "--out", tmp_path / "out", "--quiet")
    assert outcome.code != 0 and "Traceback" not in outcome.text
    assert "is full (No space left on device); nothing was kept" in outcome.err
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


def score(tmp_path, *extra):
    return run_cli("score", "--model", MODEL, "--dataset", SAMPLE_DIR, "--limit", "40", "--num-workers", "0",
                   "--no-progress", "--out", tmp_path / "run", *extra)


def test_score_refuses_a_disk_too_small_for_its_scores_before_loading_the_model(tmp_path, monkeypatch):
    from lgip_dataset.files import atomic
    from lgip_metric.scoring import engine

    monkeypatch.setattr(atomic.shutil, "disk_usage", lambda path: Usage(10**9, 10**9, 100))
    monkeypatch.setattr(engine, "load_model", full)  # reached only if the space were not checked first
    outcome = score(tmp_path, "--cache-dir", "none")
    assert outcome.code != 0 and "Traceback" not in outcome.text
    assert "free and the scores need about" in outcome.err


def test_score_meeting_a_full_disk_says_so_and_leaves_no_half_file(tmp_path, monkeypatch):
    from lgip_metric.scoring import score_files

    monkeypatch.setattr(score_files.pq, "write_table", full)
    outcome = score(tmp_path, "--cache-dir", "none")
    assert outcome.code != 0 and "Traceback" not in outcome.text
    assert "scores.parquet (No space left on device); free space there" in outcome.err
    assert not (tmp_path / "run" / "scores.parquet").exists() and leftovers(tmp_path / "run") == []


def test_a_full_cache_disk_turns_the_cache_off_and_the_run_goes_on(tmp_path, monkeypatch):
    from lgip_metric.scoring.cache import EmbeddingCache

    reference = score(tmp_path / "reference", "--cache-dir", "none")
    assert reference.code == 0, reference.text
    monkeypatch.setattr(EmbeddingCache, "write_chunk", full)
    outcome = score(tmp_path, "--cache-dir", tmp_path / "cache")
    assert outcome.code == 0, outcome.text
    provenance = json.loads((tmp_path / "run" / "provenance.json").read_text(encoding="utf-8"))
    assert provenance["cache"]["write_failure"].startswith("No space left on device")
    assert (tmp_path / "run" / "scores.parquet").read_bytes() == \
        (tmp_path / "reference" / "run" / "scores.parquet").read_bytes()
    assert not list((tmp_path / "cache").rglob("chunk-*"))
    shutil.rmtree(tmp_path / "cache")
