"""The lock that guards ``--out`` (``lgip_metric.results.run_folder``): one writer at a time across processes, and
no file of its own left in the run folder after success, failure, SIGINT or ``kill -9``."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from lgip_dataset import SAMPLE_DIR
from lgip_dataset.errors import LGIPError
from lgip_dataset.files.locks import lock_folder
from lgip_metric.results.run_folder import LEGACY_LOCK_FILE, claimed_output
from helpers.paths import REPO
from helpers.reliability import run_cli

HOLDER = """
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # a test run started in the background ignores SIGINT
from lgip_metric.results.run_folder import claimed_output
with claimed_output(sys.argv[1]):
    print("held", flush=True)
    if sys.argv[2] == "sigint":
        os.kill(os.getpid(), signal.SIGINT)
    time.sleep(120)
"""


def holder(out: Path, how: str) -> subprocess.Popen:
    """A process that claims ``out`` like a run and then, per ``how``, interrupts itself or keeps holding it."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(out), how], cwd=REPO, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "held", child.stderr.read()
    return child


def free(out: Path) -> bool:
    """Whether no process holds ``out``'s lock (taking and releasing it)."""
    try:
        os.close(lock_folder(out))
    except LGIPError:
        return False
    return True


def test_a_successful_score_leaves_only_what_it_wrote(tmp_path):
    out = tmp_path / "run"
    outcome = run_cli("score", "--model", "random:tiny-clip", "--dataset", SAMPLE_DIR, "--limit", "30",
                      "--cache-dir", "none", "--num-workers", "0", "--no-progress", "--out", out)
    assert outcome.code == 0, outcome.text[-2000:]
    names = sorted(p.name for p in out.iterdir())
    assert "scores.parquet" in names and not [n for n in names if n.startswith(".")], names
    assert free(out)


def test_a_failed_run_leaves_nothing_and_frees_the_folder(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(RuntimeError):
        with claimed_output(out):
            assert not free(out)  # held while the run works
            raise RuntimeError("the run failed")
    assert list(out.iterdir()) == [] and free(out)


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGKILL"])
def test_an_interrupted_run_leaves_no_lock_file_and_frees_the_folder(tmp_path, signal_name):
    out = tmp_path / "run"
    child = holder(out, "sigint" if signal_name == "SIGINT" else "hold")
    if signal_name == "SIGKILL":
        assert not free(out)
        child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    child.stdout.close(), child.stderr.close()
    assert child.returncode != 0
    assert list(out.iterdir()) == [] and free(out)


def test_a_second_run_is_refused_while_another_process_holds_the_folder(tmp_path):
    out = tmp_path / "run"
    child = holder(out, "hold")
    try:
        with pytest.raises(LGIPError, match=r"--out .* is being written by another lgip run"):
            with claimed_output(out):
                pass
        outcome = run_cli("score", "--model", "random:tiny-clip", "--dataset", SAMPLE_DIR, "--limit", "30",
                          "--cache-dir", "none", "--num-workers", "0", "--no-progress", "--out", out)
        assert outcome.code != 0 and "another lgip run" in outcome.text and "Traceback" not in outcome.text
    finally:
        child.kill()
        child.wait(timeout=60)
        child.stdout.close(), child.stderr.close()
    with claimed_output(out):  # free once the holder is gone
        pass
    assert list(out.iterdir()) == []


def test_a_claim_removes_the_lock_file_an_older_version_left(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / LEGACY_LOCK_FILE).write_bytes(b"")
    with claimed_output(out):
        pass
    assert list(out.iterdir()) == []
