"""builders/build_full.py: the paper's settings, with any `lgip build` option passed on and overriding them."""
from __future__ import annotations

import importlib.util
import json

from lgip_dataset.files.hub_io import BUILD_INFO
from helpers.paths import REPO


def _builder():
    spec = importlib.util.spec_from_file_location("build_full", REPO / "builders" / "build_full.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_overrides_and_flags_are_passed_on(sample_coco_dir, tmp_path):
    root = tmp_path / "coco"  # the embedded sample's val2017 files stand in for train2017
    (root / "annotations").mkdir(parents=True)
    (root / "annotations" / "captions_train2017.json").symlink_to(
        sample_coco_dir / "annotations" / "captions_val2017.json")
    (root / "train2017").symlink_to(sample_coco_dir / "val2017_images")
    out = tmp_path / "full"
    assert _builder().main(["--coco", str(root), "--out", str(out), "--num-images", "3", "--groups",
                            "--families", "core,negation"]) == 0
    info = json.loads((out / BUILD_INFO).read_text())
    assert info["num_images"] == 3 and info["counts"]["images"] == 3
    assert info["k_same"] == info["k_diff"] == 6 and info["captions_per_image"] == 5
    assert "negation" in info["families"] and "groups" in info["counts"]
