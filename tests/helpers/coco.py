"""A COCO folder for the tests, written from the embedded sample (every clone has it)."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from lgip_dataset import SAMPLE_DIR, schema

# The sample holds only redistributable images; these are their ids in COCO's own ``licenses`` list.
COCO_LICENSE_IDS = {"Attribution License": 4, "Attribution-ShareAlike License": 5}


def write_sample_coco(folder: Path, image_files: int | None = None) -> Path:
    """A folder in ``../shared/coco``'s layout from the embedded sample: ``annotations/captions_val2017.json``
    (the official format: the sample's 50 val2017 images and their 250 real captions) and ``val2017_images/``
    with the real JPEGs of the first ``image_files`` images in id order (all of them by default)."""
    images = sorted(_rows(schema.IMAGES), key=lambda row: row["image_id"])
    captions = sorted(_rows(schema.CAPTIONS, ["caption_id", "image_id", "caption"]), key=lambda row: int(row["caption_id"][1:]))
    licenses = {(row["license"], row["license_url"]) for row in images}
    (folder / "annotations").mkdir(parents=True)
    (folder / "annotations" / "captions_val2017.json").write_text(json.dumps({
        "licenses": [{"id": COCO_LICENSE_IDS[name], "name": name, "url": url} for name, url in sorted(licenses)],
        "images": [{"id": row["image_id"], "file_name": row["file_name"], "width": row["width"],
                    "height": row["height"], "license": COCO_LICENSE_IDS[row["license"]],
                    "flickr_url": row["flickr_url"]} for row in images],
        "annotations": [{"id": int(row["caption_id"][1:]), "image_id": row["image_id"], "caption": row["caption"]}
                        for row in captions],
    }), encoding="utf-8")
    (folder / "val2017_images").mkdir()
    for row in images[:image_files]:
        (folder / "val2017_images" / row["file_name"]).write_bytes(row["image"]["bytes"])
    return folder


def _rows(config: str, columns: list[str] | None = None) -> list[dict]:
    return [row for shard in sorted((SAMPLE_DIR / config).glob("*.parquet"))
            for row in pq.read_table(shard, columns=columns).to_pylist()]

