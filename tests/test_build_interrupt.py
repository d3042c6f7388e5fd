"""An interrupted ``lgip build`` says what it kept and its rerun reuses exactly that; a second build into the
same ``--out`` while one runs is refused, not interleaved; a finished build leaves no staging folder."""
from __future__ import annotations

import os

import pytest

from lgip_dataset.files.locks import lock_folder
from lgip_dataset.writing import materialize
from helpers.reliability import run_cli, write_coco


@pytest.fixture()
def coco(tmp_path):
    return write_coco(tmp_path / "coco", n_images=4)


def build(coco, out):
    return run_cli("build", "--captions", coco[0], "--images", coco[1], "--out", out, "--quiet")


def test_ctrl_c_keeps_the_finished_image_shards_and_the_rerun_reuses_them(coco, tmp_path, monkeypatch):
    monkeypatch.setattr(materialize, "IMAGES_PER_SHARD", 2)
    write_shard, written = materialize._write_image_shard, []

    def interrupted_at_the_second(path, *args):
        if written:
            raise KeyboardInterrupt
        written.append(path)
        return write_shard(path, *args)

    monkeypatch.setattr(materialize, "_write_image_shard", interrupted_at_the_second)
    out = tmp_path / "out"
    outcome = build(coco, out)
    assert outcome.code == 130 and "Traceback" not in outcome.text
    assert "the image shards finished so far (1,000 images each) are kept beside --out" in outcome.err
    (first,) = written
    kept = first.stat()
    monkeypatch.setattr(materialize, "_write_image_shard", write_shard)
    rewritten = []
    monkeypatch.setattr(materialize, "_write_image_shard", lambda path, *a: rewritten.append(path) or write_shard(path, *a))
    assert build(coco, out).code == 0
    assert [p.name for p in rewritten] == ["test-00001-of-00002.parquet"]  # the first shard was reused, not redone
    assert (out / "images" / first.name).stat().st_ino == kept.st_ino
    assert not (tmp_path / ".out.partial").exists()


def test_a_second_build_into_the_same_out_is_refused_while_one_runs(coco, tmp_path):
    out = tmp_path / "out"
    staging = tmp_path / ".out.partial"
    staging.mkdir()
    held = lock_folder(staging)  # as the first build holds it
    try:
        outcome = build(coco, out)
    finally:
        os.close(held)
    assert outcome.code != 0 and "Traceback" not in outcome.text
    assert f"--out {out} is being built by another lgip build" in outcome.err
    assert staging.is_dir() and not out.exists()  # the running build's folder is left alone
    assert build(coco, out).code == 0 and not staging.exists()
