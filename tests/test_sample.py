"""The embedded sample ships inside the package, loads offline and holds only redistributable images."""
from __future__ import annotations

import json

import datasets
from PIL import Image

from lgip_dataset import SAMPLE_DIR, schema
from lgip_dataset.files.hub_io import BUILD_INFO
from lgip_dataset.perturb import LEXICON_VERSION

REDISTRIBUTABLE = {"Attribution License", "Attribution-ShareAlike License"}


def test_sample_is_small_and_complete():
    size = sum(p.stat().st_size for p in SAMPLE_DIR.rglob("*") if p.is_file())
    assert size <= 10 * 1024 * 1024
    info = json.loads((SAMPLE_DIR / BUILD_INFO).read_text())
    assert info["configs"][:len(schema.CONFIGS)] == list(schema.CONFIGS)
    assert set(info["configs"][len(schema.CONFIGS):]) <= set(schema.OPTIONAL_CONFIGS)
    hard = [name for name in info["families"] if name.startswith("hard_")]
    assert (schema.PLAUSIBILITY in info["configs"]) == bool(hard)  # a build with hard flips records their figures
    assert info["lexicon_version"] == LEXICON_VERSION, "rebuild the sample: python builders/build_sample.py --coco ../shared/coco"
    assert info["counts"]["images"] >= 40 and info["counts"]["captions"] >= 200
    assert set(info["counts"]["flips"]) >= {"total", *schema.CORE_FLIP_TYPES}


def test_sample_loads_offline_with_every_config():
    images = datasets.load_dataset(str(SAMPLE_DIR), "images", split="test")
    assert set(images["license"]) <= REDISTRIBUTABLE
    assert isinstance(images[0]["image"], Image.Image)
    captions = datasets.load_dataset(str(SAMPLE_DIR), "captions", split="test")
    pairs = datasets.load_dataset(str(SAMPLE_DIR), "pairs", split="test")
    assert set(captions["image_id"]) == set(images["image_id"])
    assert set(pairs["kind"]) == set(schema.KINDS)
    card = (SAMPLE_DIR / "README.md").read_text()
    # each image's credit is in its row, which the card points to: license, its URL and the Flickr source
    assert all(images["license"]) and all(images["license_url"]) and all(images["flickr_url"])
    assert "`license`, `license_url`" in card and "(`flickr_url`)" in card and "About this sample" in card
    body = card.split("\n---\n", 1)[1]  # below the YAML header (configs, dataset_info) push_to_hub writes
    assert len(body.strip("\n").splitlines()) <= 200
