"""The image of every pair: an LGIP dataset's ``images`` config as a mapping from ``image_id`` to its picture.

The ``pairs`` config names each row's image by ``image_id``; the pictures live once each in the
``images`` config. ``pair_images(dataset)[image_id]`` is the RGB image the scoring engine scores for that
id, decoded the same way (:func:`lgip_dataset.files.images.decode_image`), so a harness of a user's own sees
the engine's pixels without building its own image map or loading every picture at once.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from PIL import Image

from lgip_dataset import schema
from lgip_dataset.files.hub_io import config_files
from lgip_dataset.files.image_cells import ImageCells
from lgip_dataset.files.images import decode_image


class PairImages(Mapping):
    """``image_id`` -> decoded RGB image of the ``images`` config, read on demand (nothing is decoded up front)."""

    def __init__(self, dataset: str | Path):
        self.dataset = dataset
        self.cells = ImageCells(config_files(dataset, schema.IMAGES))
        self.rows = {int(image_id): row for row, image_id in enumerate(self.cells.image_ids().tolist())}

    def _row(self, image_id) -> int | None:
        try:
            return self.rows.get(int(image_id))
        except (TypeError, ValueError):  # not an integer id: not one of the dataset's
            return None

    def __getitem__(self, image_id) -> Image.Image:
        row = self._row(image_id)
        if row is None:
            raise KeyError(f"image_id {image_id!r} is not in the images config of {self.dataset}")
        cell = self.cells.cell(row)
        return decode_image(cell.get("bytes") if cell else None)

    def __contains__(self, image_id) -> bool:
        return self._row(image_id) is not None

    def __iter__(self) -> Iterator[int]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)


def pair_images(dataset: str | Path) -> PairImages:
    """The images of ``dataset`` (a built folder such as ``SAMPLE_DIR``, or a Hub id) by ``image_id``: look up
    each ``pairs`` row's ``image_id`` in it."""
    return PairImages(dataset)
