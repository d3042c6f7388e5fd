"""The embedded sample's images and human captions, for the Probe tab's picker."""
from __future__ import annotations

from pathlib import Path

import datasets
from PIL import Image

from lgip_dataset import SAMPLE_DIR, schema
from lgip_dataset.files.hub_io import load_config
from lgip_dataset.files.images import decode_image

THUMBNAIL = 160


class Sample:
    """The images (JPEG bytes, license) and captions of a built LGIP folder, keyed by ``image_id``."""

    def __init__(self, folder: str | Path = SAMPLE_DIR):
        self.folder = Path(folder)
        images = load_config(self.folder, schema.IMAGES).cast_column("image", datasets.Image(decode=False))
        captions = load_config(self.folder, schema.CAPTIONS).select_columns(["image_id", "caption"])
        self._bytes = {row["image_id"]: row["image"]["bytes"] for row in images}
        self._credit = {row["image_id"]: f"{row['file_name']} · {row['license']} · {row['flickr_url']}"
                        for row in images.remove_columns("image")}
        self._captions: dict[int, list[str]] = {}
        for row in captions:
            self._captions.setdefault(row["image_id"], []).append(row["caption"])
        self.ids = [i for i in self._bytes if i in self._captions]

    def image(self, image_id: int) -> Image.Image:
        """The sample image as RGB."""
        return decode_image(self._bytes[image_id])

    def captions(self, image_id: int) -> list[str]:
        """The human COCO captions of the image."""
        return self._captions[image_id]

    def credit(self, image_id: int) -> str:
        """File name, license and Flickr source of the image."""
        return self._credit[image_id]

    def choices(self) -> list[tuple[str, int]]:
        """(label, image_id) pairs for a dropdown: file name and the first caption."""
        return [(f"{i:012d} · {self._captions[i][0][:60]}", i) for i in self.ids]

    def thumbnails(self) -> list[tuple[Image.Image, str]]:
        """Small previews with their first caption, in ``ids`` order, for a gallery."""
        thumbs = []
        for image_id in self.ids:
            image = self.image(image_id)
            image.thumbnail((THUMBNAIL, THUMBNAIL))
            thumbs.append((image, self._captions[image_id][0]))
        return thumbs
