"""Model registry and factory: two backends (open_clip, transformers) behind one :class:`Encoder`.

The registry names are importable without torch (the CLI checks ``--model``/``--precision`` before
paying for it); ``Encoder``, ``load_model``, ``loader_workers`` and ``select_device`` import torch on first use.
"""
import importlib

from lgip_metric.models.registry import (PAPER_MODELS, PRECISIONS, REGISTRY, ModelError, ModelSpec, held_model,
                                         resolve_model)

_NEED_TORCH = {"Encoder": "base", "load_model": "factory", "loader_workers": "factory", "select_device": "factory"}

__all__ = [
    "Encoder",
    "ModelError",
    "ModelSpec",
    "PAPER_MODELS",
    "PRECISIONS",
    "REGISTRY",
    "held_model",
    "load_model",
    "loader_workers",
    "resolve_model",
    "select_device",
]


def __getattr__(name: str):
    if name in _NEED_TORCH:
        return getattr(importlib.import_module(f"lgip_metric.models.{_NEED_TORCH[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
