"""Shared fixtures: a COCO folder in ``../shared/coco``'s layout built from the embedded sample, and the
hypothesis profiles.

Property tests run under the ``ci`` profile by default: ``derandomize=True`` draws the same examples
on every run and machine, and ``database=None`` keeps no example database between runs, so a test
that passes once passes every time. ``HYPOTHESIS_PROFILE=fuzz`` draws fresh random examples
(``--hypothesis-seed=N`` replays a seed; ``LGIP_FUZZ_EXAMPLES`` sets how many per test) for the
``fuzz``-marked tests, which the default run deselects (see README.md, "Fuzzing").
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from helpers.coco import write_sample_coco
from helpers.paths import SHARED

settings.register_profile("ci", derandomize=True, database=None, print_blob=True, deadline=None)
settings.register_profile(
    "fuzz", derandomize=False, database=None, print_blob=True, deadline=None,
    max_examples=int(os.environ.get("LGIP_FUZZ_EXAMPLES", "2000")), suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE"):
    os.environ.setdefault(_var, "1")
# Tests never write embeddings into the user's cache (~/.cache/lgip); one folder per test session.
os.environ["LGIP_CACHE_DIR"] = tempfile.mkdtemp(prefix="lgip-test-cache-")


@pytest.fixture(scope="session")
def sample_coco_dir(tmp_path_factory) -> Path:
    """``annotations/captions_val2017.json`` and ``val2017_images/`` of the embedded sample's 50 images, written once."""
    return write_sample_coco(tmp_path_factory.mktemp("sample-coco"))


@pytest.fixture(scope="session")
def val2017_2000_build(tmp_path_factory) -> Path:
    """A core and hard build of 2,000 val2017 captions (400 images, 5 captions each, no images stored), built
    once for the tests that check a real build's hard flips (they skip without ``../shared/coco``)."""
    from lgip_dataset.writing.materialize import BuildConfig, build

    out = tmp_path_factory.mktemp("val2017-2000") / "build"
    build(BuildConfig(captions=SHARED / "coco/annotations/captions_val2017.json", out=out, num_images=400,
                      captions_per_image=5, families="core,hard"), progress=False)
    return out


# What a subprocess computes with: threads, allocator, this project's and the Hub's settings (a library may set
# others on import, e.g. KMP_DUPLICATE_LIB_OK, which change nothing a run computes).
WATCHED_ENV = ("OMP_", "MKL_", "OPENBLAS_", "BLIS_", "VECLIB_", "NUMEXPR_", "MALLOC_", "LGIP_", "HF_", "TORCH_",
               "CUDA_", "CUBLAS_", "PYTHONHASHSEED")
LIBRARIES_SET = {"HF_HUB_DISABLE_TELEMETRY"}  # gradio sets it when imported


@pytest.fixture(autouse=True)
def _environment_left_as_found():
    """A test that leaves a watched environment variable changed fails: every later subprocess would inherit the
    change (a script run in-process once set OMP_NUM_THREADS=1 for the rest of the session, and runs killed in
    subprocesses then encoded with one thread, their scores differing from in-process ones in the last bits).
    Use ``monkeypatch``."""
    before = {k: v for k, v in os.environ.items() if k.startswith(WATCHED_ENV) and k not in LIBRARIES_SET}
    yield
    after = {k: v for k, v in os.environ.items() if k.startswith(WATCHED_ENV) and k not in LIBRARIES_SET}
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"the test left environment variables changed: {', '.join(changed)}"
