"""Embedding cache: reruns encode nothing, interrupted runs resume, bad chunks are never used."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import uuid

import numpy as np
import pytest

from lgip_dataset.errors import LGIPError
from lgip_dataset.files.atomic import atomic_path
from lgip_metric.scoring.cache import CacheError, EmbeddingCache, content_key
from lgip_metric.scoring.engine import SCORES_FILE, score_dataset
from lgip_metric.models.openclip_backend import OpenClipEncoder
from lgip_metric.testing import make_tiny_dataset, same_scores, straightforward_scores

MODEL = "random:tiny-clip"
# unpacked: a resumed run's batches hold other texts than the first run's, which leaves a plain batch's
# embeddings bit for bit the same but not a tree pack's (those agree within 1e-6: tests/test_engine.py)
SMALL = dict(batch_size=4, cache_chunk_rows=4, num_workers=0, progress=False, tree_packing=False)

KILL_AFTER_CHUNKS = """
import os, signal, sys
from lgip_metric.scoring import cache
from lgip_metric.scoring.engine import score_dataset

write_chunk, written = cache.EmbeddingCache.write_chunk, []

def write_then_maybe_die(self, kind, *args, **kwargs):
    path = write_chunk(self, kind, *args, **kwargs)
    written.append(kind)
    if written.count("text") == 3:
        os.kill(os.getpid(), signal.SIGKILL)  # kill -9 in the middle of the text encodes
    return path

cache.EmbeddingCache.write_chunk = write_then_maybe_die
score_dataset(sys.argv[1], sys.argv[2], sys.argv[3], cache_dir=sys.argv[4],
              batch_size=4, cache_chunk_rows=4, num_workers=0, progress=False, tree_packing=False)
"""


@pytest.fixture(scope="module")
def dataset(tmp_path_factory, sample_coco_dir):
    return make_tiny_dataset(tmp_path_factory.mktemp("data") / f"lgip-{uuid.uuid4().hex[:12]}", sample_coco_dir)


@pytest.fixture(scope="module")
def reference(dataset, tmp_path_factory):
    """Scores of one uninterrupted run without a cache."""
    return score_dataset(MODEL, dataset, tmp_path_factory.mktemp("ref"), cache_dir="none", **SMALL).scores()


def cached_rows(cache_dir, kind):
    return sum(len(np.load(p)["keys"]) for p in cache_dir.glob(f"*/{kind}/chunk-*.npz"))


def test_rerun_encodes_nothing(dataset, reference, tmp_path):
    first = score_dataset(MODEL, dataset, tmp_path / "a", cache_dir=tmp_path / "cache", **SMALL)
    second = score_dataset(MODEL, dataset, tmp_path / "b", cache_dir=tmp_path / "cache", **SMALL)
    c1, c2 = first.provenance.counts, second.provenance.counts
    assert c1["encoded_texts"] == c1["unique_texts"] and c1["cached_texts"] == 0
    assert c2["encoded_texts"] == 0 and c2["cached_texts"] == c2["unique_texts"]
    assert c2["encoded_images"] == 0 and c2["cached_images"] == 4
    assert c2["skipped_images"] == c1["skipped_images"]  # the corrupt image is retried, still reported
    assert first.scores().equals(reference) and second.scores().equals(reference)


def test_kill_9_then_resume(dataset, reference, tmp_path):
    cache_dir, out = tmp_path / "cache", tmp_path / "out"
    script = [sys.executable, "-c", KILL_AFTER_CHUNKS, MODEL, str(dataset), str(out), str(cache_dir)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    killed = subprocess.run(script, capture_output=True, text=True, env=env, timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert not (out / SCORES_FILE).exists()  # no half-written output
    assert not list(cache_dir.glob("*/*/.*.tmp"))
    done_texts = cached_rows(cache_dir, "text")
    assert done_texts >= 12 and cached_rows(cache_dir, "image") == 4  # three chunks of at least 4 rows
    resumed = score_dataset(MODEL, dataset, out, cache_dir=cache_dir, **SMALL)
    counts = resumed.provenance.counts
    assert done_texts < counts["unique_texts"] and counts["cached_texts"] == done_texts and counts["encoded_texts"] == counts["unique_texts"] - done_texts
    assert counts["encoded_images"] == 0
    assert resumed.scores().equals(reference)
    assert same_scores(resumed.scores(), straightforward_scores(MODEL, dataset, SMALL["batch_size"]))


def test_ctrl_c_keeps_finished_batches(dataset, reference, tmp_path, monkeypatch):
    sizes = []
    start_texts = OpenClipEncoder.start_texts

    def interrupted(self, batch):
        sizes.append(len(batch["input_ids"]))
        if len(sizes) == 5:  # the first call measures the embedding width, then three batches are launched
            raise KeyboardInterrupt
        return start_texts(self, batch)

    monkeypatch.setattr(OpenClipEncoder, "start_texts", interrupted)
    with pytest.raises(KeyboardInterrupt):
        score_dataset(MODEL, dataset, tmp_path / "out", cache_dir=tmp_path / "cache", **{**SMALL, "cache_chunk_rows": 100})
    monkeypatch.undo()
    passed = sum(sizes[1:3])  # the third was still in flight (a batch is launched before the one before it is taken)
    assert cached_rows(tmp_path / "cache", "text") == passed  # the partial chunk was flushed on the way out
    resumed = score_dataset(MODEL, dataset, tmp_path / "out", cache_dir=tmp_path / "cache", **SMALL)
    assert resumed.provenance.counts["cached_texts"] == passed
    assert resumed.scores().equals(reference)


def test_corrupt_chunks_are_detected_and_reencoded(dataset, reference, tmp_path):
    cache_dir = tmp_path / "cache"
    score_dataset(MODEL, dataset, tmp_path / "a", cache_dir=cache_dir, **SMALL)
    chunks = sorted(cache_dir.glob("*/text/chunk-*.npz"))
    tampered, flipped, truncated = chunks[:3]
    lost = sum(len(np.load(c)["keys"]) for c in chunks[:3])
    with np.load(tampered) as chunk:
        arrays = dict(chunk)
    arrays["emb"][0, 0] += 0.25  # a valid file whose numbers changed: only the digest can tell
    with open(tampered, "wb") as handle:
        np.savez(handle, **arrays)
    data = bytearray(flipped.read_bytes())
    data[len(data) // 2] ^= 0xFF  # bit rot inside the file
    flipped.write_bytes(bytes(data))
    truncated.write_bytes(truncated.read_bytes()[:100])
    rerun = score_dataset(MODEL, dataset, tmp_path / "b", cache_dir=cache_dir, **SMALL)
    counts, rejected = rerun.provenance.counts, rerun.provenance.cache["rejected_chunks"]
    assert len(rejected) == 3 and sum("digest mismatch" in r for r in rejected) >= 1
    assert any("unreadable" in r for r in rejected)
    assert counts["encoded_texts"] == lost and counts["cached_texts"] == counts["unique_texts"] - lost
    assert not any(c.exists() for c in (tampered, flipped, truncated))
    assert rerun.scores().equals(reference)


def test_chunks_of_another_model_or_width_are_refused(tmp_path):
    keys = [content_key("a dog"), content_key("a cat")]
    emb = np.eye(2, 4, dtype=np.float32)
    theirs = EmbeddingCache(tmp_path, "model-a", {})
    ours = EmbeddingCache(tmp_path, "model-b", {})
    chunk = theirs.write_chunk("text", keys, emb)
    assert theirs.lookup("text", keys, 4)[0].tolist() == [0, 1]
    (ours.folder / "text").mkdir(parents=True)
    shutil.copy(chunk, ours.folder / "text" / chunk.name)  # a chunk written for another model
    positions, rows = ours.lookup("text", keys, 4)
    assert len(positions) == 0 and "digest mismatch" in ours.rejected_chunks[0]
    assert len(theirs.lookup("text", keys, 8)[0]) == 0 and "expected (n, 8)" in theirs.rejected_chunks[0]


def test_cache_dir_that_is_not_writable_is_a_clear_error(dataset, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(CacheError, match="not writable.*--cache-dir") as err:
        score_dataset(MODEL, dataset, tmp_path / "out", cache_dir=blocker / "cache", **SMALL)
    assert isinstance(err.value, LGIPError) and str(blocker) in str(err.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write into read-only folders")
def test_read_only_cache_dir_is_a_clear_error(dataset, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(CacheError, match="not writable"):
            score_dataset(MODEL, dataset, tmp_path / "out", cache_dir=folder, **SMALL)
    finally:
        folder.chmod(0o700)


def test_atomic_path_never_leaves_a_partial_file(tmp_path):
    target = tmp_path / "scores.parquet"
    target.write_text("previous complete output")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("interrupted")
    assert target.read_text() == "previous complete output" and list(tmp_path.iterdir()) == [target]
