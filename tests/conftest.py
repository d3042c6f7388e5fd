"""Shared fixtures: the real COCO files in ``../shared/coco`` (skipped when absent)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
COCO_DIR = REPO.parent / "shared" / "coco"

for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE"):
    os.environ.setdefault(_var, "1")
# Tests never write embeddings into the user's cache (~/.cache/lgip); one folder per test session.
os.environ["LGIP_CACHE_DIR"] = tempfile.mkdtemp(prefix="lgip-test-cache-")


@pytest.fixture(scope="session")
def coco_dir() -> Path:
    """The shared real-COCO folder; tests that need it skip cleanly where it is absent."""
    if not (COCO_DIR / "annotations" / "captions_val2017.json").exists():
        pytest.skip(f"real COCO files not found beside the repository ({COCO_DIR.name} in ../shared)")
    return COCO_DIR
