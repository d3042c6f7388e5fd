"""``kill -9`` of ``lgip build``, ``lgip score`` and ``lgip evaluate``, then a rerun: the same bytes as
an uninterrupted run, and no temporary or partial files anywhere.

The killed run is a subprocess that sends itself SIGKILL just before its N-th ``os.replace``
(every atomic write ends in one), so each kill lands at a reproducible point; the reference and the
rerun run in-process (cheap: no second import of torch). The default run tries a few points;
``HYPOTHESIS_PROFILE=fuzz pytest -m fuzz tests/test_kill_resume.py`` tries every one.

What "the same" means: every file byte for byte, except the fields ``lgip_metric.results.record.VOLATILE``
names in ``results.json``/``provenance.json`` (when they were written, how long each step took,
how many embeddings came from the cache), which are compared with those fields removed. The
embedding cache is not an output: a killed run may leave a temporary chunk file there, which a
later run ignores.
"""
from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

import pytest

from lgip_metric.results.record import without_volatile
from helpers.reliability import counting_replaces, folder_hashes, run_cli, run_killed, write_coco

MODEL = "random:tiny-clip"
LEFTOVERS = (".*.tmp", ".*.partial", ".*.old", ".lgip.lock")


def leftovers(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for pattern in LEFTOVERS for p in root.rglob(pattern))


def killed(point: int, *argv) -> bool:
    """Run ``lgip ARGV`` killed at ``point``; False when the run has fewer points and completed."""
    result = run_killed(point, *argv)
    assert result.returncode in (0, -signal.SIGKILL), (point, result.returncode, result.stderr[-2000:])
    return result.returncode != 0


def resumed(*argv) -> None:
    outcome = run_cli(*argv)
    assert outcome.code == 0, outcome.text[-3000:]


def same_run_outputs(out: Path, reference: Path) -> None:
    """``out`` holds what ``reference`` holds: the same files, equal bytes except the volatile fields."""
    got, want = folder_hashes(out), folder_hashes(reference)
    assert sorted(got) == sorted(want)
    for name, prefix in (("results.json", ()), ("provenance.json", ("provenance",))):
        if name in want:
            read = [json.loads((folder / name).read_text(encoding="utf-8")) for folder in (out, reference)]
            assert without_volatile(read[0], prefix) == without_volatile(read[1], prefix)
            got.pop(name), want.pop(name)
    assert got == want


# --------------------------------------------------------------------------------------------
# build


@pytest.fixture(scope="module")
def build_inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("kill-build")
    captions, images = write_coco(root / "coco", n_images=6, files={f"{6:012d}.jpg": b"broken"})
    argv = ["build", "--captions", captions, "--images", images, "--quiet", "--families", "core,negation"]
    with counting_replaces() as points:
        resumed(*argv, "--out", root / "reference")
    return root, argv, points[0]


def _build_resumes(build_inputs, point: int, tmp_path: Path) -> bool:
    root, argv, _ = build_inputs
    out = tmp_path / "lgip"
    was_killed = killed(point, *argv, "--out", out)
    if was_killed:
        resumed(*argv, "--out", out)
    assert folder_hashes(out) == folder_hashes(root / "reference")
    assert leftovers(tmp_path) == []
    return was_killed


@pytest.mark.slow
@pytest.mark.parametrize("where", ["middle", "publish"])
def test_build_killed_then_rerun_is_byte_identical(build_inputs, where, tmp_path):
    points = build_inputs[2]
    assert _build_resumes(build_inputs, points // 2 if where == "middle" else points, tmp_path)


@pytest.mark.fuzz
def test_build_killed_at_every_point(build_inputs, tmp_path):
    point = 1
    while _build_resumes(build_inputs, point, tmp_path / str(point)):
        point += 1
    assert point > 5


@pytest.mark.fuzz
def test_build_overwrite_killed_at_every_point(build_inputs, tmp_path):
    """An --overwrite of an older build killed anywhere: the rerun publishes the new build, no .old left."""
    root, argv, _ = build_inputs
    old = [a if a != "core,negation" else "core" for a in argv]
    point = 1
    while True:
        out = tmp_path / str(point) / "lgip"
        resumed(*old, "--out", out)
        if not killed(point, *argv, "--out", out, "--overwrite"):
            break
        resumed(*argv, "--out", out, "--overwrite")
        assert folder_hashes(out) == folder_hashes(root / "reference")
        assert leftovers(tmp_path) == []
        point += 1
    assert point > 5


# --------------------------------------------------------------------------------------------
# score and evaluate (one uninterrupted evaluate is the reference of both)


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    root = tmp_path_factory.mktemp("kill-score")
    captions, images = write_coco(root / "coco", n_images=4, files={f"{4:012d}.jpg": b"broken"})
    resumed("build", "--captions", captions, "--images", images, "--out", root / "data", "--quiet")
    # unpacked: a resumed run packs other texts together than the reference did, which moves scores in the
    # last bits (within 1e-6: tests/test_engine.py); plain batches keep them bit for bit
    common = ["--model", MODEL, "--dataset", root / "data", "--cache-dir", root / "cache", "--num-workers", "0",
              "--no-progress", "--no-tree-packing"]
    evaluate = ["evaluate", *common, "--bootstrap", "20"]
    with counting_replaces() as points:
        resumed(*evaluate, "--out", root / "reference")
    return root, ["score", *common], evaluate, points[0]


def _score_resumes(scored, point: int, out: Path) -> bool:
    root, score, _, _ = scored
    shutil.rmtree(root / "cache", ignore_errors=True)  # every killed run starts cold, as the reference did
    was_killed = killed(point, *score, "--out", out)
    resumed(*score, "--out", out)
    reference = root / "reference"
    assert (out / "scores.parquet").read_bytes() == (reference / "scores.parquet").read_bytes()
    read = [json.loads((folder / "provenance.json").read_text(encoding="utf-8")) for folder in (out, reference)]
    assert without_volatile(read[0], ("provenance",)) == without_volatile(read[1], ("provenance",))
    assert leftovers(out) == []
    return was_killed


def _evaluate_resumes(scored, point: int, out: Path) -> bool:
    root, _, evaluate, _ = scored
    shutil.rmtree(root / "cache", ignore_errors=True)
    was_killed = killed(point, *evaluate, "--out", out)
    resumed(*evaluate, "--out", out)
    same_run_outputs(out, root / "reference")
    assert leftovers(out) == []
    return was_killed


@pytest.mark.slow
def test_score_killed_while_caching_then_rerun_gives_the_same_scores(scored, tmp_path):
    assert _score_resumes(scored, 2, tmp_path / "out")


@pytest.mark.slow
def test_evaluate_killed_while_reporting_then_rerun_gives_the_same_outputs(scored, tmp_path):
    assert _evaluate_resumes(scored, scored[3] - 2, tmp_path / "out")


@pytest.mark.fuzz
@pytest.mark.timeout(3600)  # two dozen killed runs, each loading torch afresh
def test_score_and_evaluate_killed_at_every_point(scored, tmp_path):
    for run in (_score_resumes, _evaluate_resumes):
        point = 1
        while run(scored, point, tmp_path / f"{run.__name__}-{point}"):
            point += 1
        assert point > 3
