"""An image preprocessing cut in two where its values are still whole pixels, so the first half can be kept.

``prefix`` turns a decoded image into the ``uint8`` array (height x width x channels) the preprocessing has
made by the moment it turns pixels into floats: resized, cropped, converted, nothing scaled or normalised.
``finish`` takes such an array the rest of the way, to the model inputs. ``finish(prefix(image))`` equals
the whole preprocessing of ``image`` bit for bit (checked for every architecture of the registry by
tests/test_input_cache.py), so a run that reads kept arrays scores exactly as one that decodes afresh.
``settings`` is everything the two halves depend on (the preprocessing's every setting and the libraries
that do it); two models share kept pixels only when their settings are equal.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
from PIL import Image

from lgip_metric.models.base import Batch


@dataclass(frozen=True)
class PixelStages:
    """The two halves of one preprocessing (picklable: DataLoader workers run them)."""

    prefix: Callable[[Image.Image], np.ndarray]
    finish: Callable[[np.ndarray], Batch]
    settings: dict


class _ComposePrefix:
    def __init__(self, steps):
        self.steps = steps

    def __call__(self, image: Image.Image) -> np.ndarray:
        for step in self.steps:
            image = step(image)
        return np.array(image, dtype=np.uint8)


class _ComposeFinish:
    def __init__(self, steps):
        self.steps = steps

    def __call__(self, pixels: np.ndarray) -> Batch:
        value = Image.fromarray(pixels)
        for step in self.steps:
            value = step(value)
        return {"pixel_values": value}


def torchvision_stages(transform, settings: dict) -> PixelStages | None:
    """The halves of a torchvision ``Compose`` that turns an RGB image into a tensor at a ``…ToTensor`` step
    (open_clip's transforms), cut just before that step; None for any other transform. ``settings``: the
    preprocessing's own record and the libraries' versions."""
    steps = list(getattr(transform, "transforms", ()))
    cut = next((i for i, step in enumerate(steps) if type(step).__name__.endswith("ToTensor")), None)
    if cut is None:
        return None
    return PixelStages(_ComposePrefix(steps[:cut]), _ComposeFinish(steps[cut:]),
                       {**settings, "transform": repr(transform)})


class _ProcessorPrefix:
    def __init__(self, processor):
        self.processor = processor

    def __call__(self, image: Image.Image) -> np.ndarray:
        out = self.processor(images=[image], do_rescale=False, do_normalize=False, return_tensors="pt")
        pixels = out["pixel_values"][0]
        if pixels.dtype != torch.uint8:  # a processor that resizes in floats: its values are not whole pixels
            raise ValueError(f"{type(self.processor).__name__} resized to {pixels.dtype}, not uint8")
        return pixels.permute(1, 2, 0).contiguous().numpy()


class _ProcessorFinish:
    def __init__(self, processor):
        self.processor = processor

    def __call__(self, pixels: np.ndarray) -> Batch:
        out = self.processor(images=[pixels], do_resize=False, do_center_crop=False, return_tensors="pt")
        return {key: value[0] for key, value in out.items()}


def processor_stages(processor, libraries: dict) -> PixelStages | None:
    """The halves of a transformers image processor that resizes and crops whole pixels and gives only
    ``pixel_values`` (CLIP's, SigLIP's); None for one that does not (NaFlex patches) or whose first half
    is not ``uint8`` on a probe image. ``libraries``: the versions of the libraries that preprocess."""
    prefix = _ProcessorPrefix(processor)
    try:
        probe = Image.new("RGB", (48, 40), (200, 30, 90))
        if set(processor(images=[probe], return_tensors="pt")) != {"pixel_values"}:
            return None
        prefix(probe)
    except (ValueError, TypeError):
        return None
    settings = {"processor": type(processor).__name__, "config": processor.to_dict(), "libraries": libraries}
    return PixelStages(prefix, _ProcessorFinish(processor), settings)
