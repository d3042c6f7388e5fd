"""Tiny random-weight models for the tests beyond ``lgip_metric.testing``."""
from __future__ import annotations

from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from lgip_metric.testing import make_tiny_openclip


def other_tiny_model(folder: Path) -> str:
    """The tiny open_clip architecture as a local-dir model with different (still random) weights."""
    name = make_tiny_openclip(folder)
    weights = folder / "open_clip_model.safetensors"
    generator = torch.Generator().manual_seed(1)
    state = {k: v + 0.05 * torch.randn(v.shape, generator=generator) if v.is_floating_point() else v
             for k, v in load_file(str(weights)).items()}
    save_file(state, str(weights))
    return name
