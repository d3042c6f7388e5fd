"""Shared by the Space tests: import ``space/app.py`` and serve it on localhost with tiny models."""
from __future__ import annotations

import importlib.util
import os
import sys
from types import SimpleNamespace

import pytest

from lgip_dataset import SAMPLE_DIR
from lgip_dataset.files.hub_io import load_config
from lgip_metric.testing import make_tiny_siglip
from helpers.paths import REPO

SPACE_DIR = REPO / "space"
TINY = "tiny-clip"  # the registry's tiny open_clip architecture, always with random weights


def import_space_app():
    """``space/app.py`` as a module (imported, not launched)."""
    if "lgip_space_app" not in sys.modules:
        spec = importlib.util.spec_from_file_location("lgip_space_app", SPACE_DIR / "app.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["lgip_space_app"] = module
        spec.loader.exec_module(module)
    return sys.modules["lgip_space_app"]


@pytest.fixture(scope="session")
def space(tmp_path_factory):
    """The Space on 127.0.0.1: tiny random-weight open_clip and SigLIP models allowed, a fresh embedding cache."""
    root = tmp_path_factory.mktemp("space")
    previous = os.environ.get("LGIP_CACHE_DIR")
    os.environ["LGIP_CACHE_DIR"] = str(root / "cache")
    results_dir = root / "results"
    results_dir.mkdir()
    app = import_space_app()
    sample = SAMPLE_DIR
    captions = load_config(sample, "captions")["caption"]
    siglip = f"random:{make_tiny_siglip(root / 'siglip', captions=captions)}"  # the transformers backend too
    demo = app.build_demo(extra_models=[TINY, siglip], sample_dir=sample, results_dir=results_dir)
    demo.queue(default_concurrency_limit=app.CONCURRENCY).launch(
        prevent_thread_lock=True, server_name="127.0.0.1", quiet=True)
    yield SimpleNamespace(app=app, demo=demo, url=demo.local_url, results_dir=results_dir, root=root, siglip=siglip,
                          sample_dir=sample)
    demo.close()
    if previous is None:
        os.environ.pop("LGIP_CACHE_DIR", None)
    else:
        os.environ["LGIP_CACHE_DIR"] = previous
