"""Model registry and factory: two backends (open_clip, transformers) behind one :class:`Encoder`."""
from lgip_metric.models.base import Encoder, ModelError
from lgip_metric.models.factory import PRECISIONS, load_model, select_device
from lgip_metric.models.registry import PAPER_MODELS, REGISTRY, ModelSpec, resolve_model

__all__ = [
    "Encoder",
    "ModelError",
    "ModelSpec",
    "PAPER_MODELS",
    "PRECISIONS",
    "REGISTRY",
    "load_model",
    "resolve_model",
    "select_device",
]
