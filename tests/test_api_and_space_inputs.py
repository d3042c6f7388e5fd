"""The Python API refuses what the CLI refuses, before any work, and the Space's run folders survive calls at
once (issue 52)."""
from __future__ import annotations

import os
import sys
import threading
import time

import pytest

from helpers.paths import REPO
from lgip_dataset.errors import DataError, LGIPError
from lgip_metric import api
from lgip_metric.models import ModelError


@pytest.mark.parametrize("limit", [0, -5, 2.5, True, "10"])
def test_score_refuses_a_limit_the_cli_refuses(tmp_path, limit):
    with pytest.raises(DataError, match=r"limit= must be a whole number at least 1"):
        api.score("random:tiny-clip", tmp_path / "run", limit=limit)
    with pytest.raises(DataError, match=r"limit= must be a whole number at least 1"):
        api.evaluate_model("random:tiny-clip", tmp_path / "run", limit=limit)
    assert not (tmp_path / "run").exists()  # refused before the run folder is claimed


def test_a_missing_model_and_a_validated_that_is_no_bool_are_refused(tmp_path):
    with pytest.raises(ModelError, match=r"model=None: give a model name"):
        api.score(None, tmp_path / "run")
    for value in ("no", 0, None):
        with pytest.raises(DataError, match=r"validated= must be True or False, got"):
            api.evaluate_model("random:tiny-clip", tmp_path / "run", validated=value)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("given", [[], (), [None], "results.json"])
def test_write_report_of_no_results_is_refused(tmp_path, given):
    with pytest.raises(LGIPError, match=r"write_report: give one Results or a non-empty list of them"):
        api.write_report(given, tmp_path / "report")


def test_run_folders_made_at_once_while_old_ones_are_swept(tmp_path):
    sys.path.insert(0, str(REPO / "space"))
    try:
        from lgip_space.runner import KEEP_RUNS_S, new_run_dir
    finally:
        sys.path.remove(str(REPO / "space"))
    old = time.time() - 2 * KEEP_RUNS_S
    for trial in range(3):
        root = tmp_path / f"runs{trial}"
        for k in range(150):
            folder = root / f"run-old{k}"
            (folder / "report").mkdir(parents=True)
            for name in ("scores.parquet", "results.json", "report/report.md"):
                (folder / name).write_text("x", encoding="utf-8")
            os.utime(folder, (old, old))
        made, failed, start = [], [], threading.Barrier(8)

        def call():
            start.wait()
            try:
                made.append(new_run_dir(root))
            except OSError as err:
                failed.append(err)

        threads = [threading.Thread(target=call) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not failed and len(set(made)) == 8 and all(folder.is_dir() for folder in made)
        assert sorted(root.iterdir()) == sorted(made)  # every old run swept, every new one kept
