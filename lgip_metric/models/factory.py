"""``load_model``: a resolved spec (or a name) to a ready :class:`Encoder` on a device."""
from __future__ import annotations

import importlib
import os

import torch

from lgip_metric.models.base import Encoder, ModelError
from lgip_metric.models.registry import OPEN_CLIP, PRECISIONS, TRANSFORMERS, ModelSpec, resolve_model

# backend -> (module, Encoder class), imported on first use: open_clip and transformers load slowly
ENCODERS = {
    OPEN_CLIP: ("lgip_metric.models.openclip_backend", "OpenClipEncoder"),
    TRANSFORMERS: ("lgip_metric.models.hf_backend", "TransformersEncoder"),
}


# Default DataLoader workers at most. A GPU run is bound by decoding and tokenising: on an H200 with 16 CPUs, 15
# workers against 8 took a random ViT-L/14's bf16 text phase on 2,000 val2017 images from 13.6 s to 11.0 s.
MAX_WORKERS = 16


def loader_workers(num_workers: int | None, device: torch.device) -> int:
    """DataLoader processes that decode images and tokenise texts beside a model on ``device``: ``num_workers`` if
    given; for a GPU model every CPU but one, for a CPU model only the CPUs its torch threads leave free (a worker
    beside its forward passes takes their time: on 2 cores one made the sample's run 39.5 s against 32.9 s); at most
    ``MAX_WORKERS``, and a ``num_workers`` above it is refused (ModelError naming ``--num-workers``)."""
    if num_workers is not None:
        if num_workers > MAX_WORKERS:
            raise ModelError(f"--num-workers {num_workers}: at most {MAX_WORKERS} worker processes (more only compete for "
                             f"the {os.cpu_count() or 1} CPUs); give {MAX_WORKERS} or fewer, or leave it out for the default")
        return max(0, num_workers)
    busy = torch.get_num_threads() if device.type == "cpu" else 1
    return min(MAX_WORKERS, max(0, (os.cpu_count() or 1) - busy))


def select_device(device: str | torch.device | None = None) -> torch.device:
    """The requested device, else CUDA when available, else the CPU; a bare ``cuda`` means
    ``cuda:<LOCAL_RANK>`` so that each ``torchrun`` process gets its own GPU."""
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if device is None:
        return torch.device("cuda", local_rank) if torch.cuda.is_available() else torch.device("cpu")
    try:
        chosen = torch.device(device)
    except RuntimeError as err:
        raise ModelError(f"invalid device {device!r}: {err}") from err
    if chosen.type == "cuda":
        if not torch.cuda.is_available():
            raise ModelError(f"device {device!r} requested but CUDA is not available here")
        return chosen if chosen.index is not None else torch.device("cuda", local_rank)
    return chosen


def load_model(
    model: str | ModelSpec,
    *,
    pretrained: str | None = None,
    device: str | torch.device | None = None,
    precision: str = "fp32",
    tree_packing: bool = True,
) -> Encoder:
    """Load ``model`` (a name, see :func:`resolve_model`, or a spec) ready to encode on ``device``.

    ``precision`` ``fp16``/``bf16`` runs the forward passes under autocast (weights stay fp32).
    ``tree_packing`` lets the engine encode each distinct token prefix once where the text tower
    allows it exactly (:attr:`Encoder.tree_packing`; recorded in the provenance either way).
    """
    if precision not in PRECISIONS:
        raise ModelError(f"unknown precision {precision!r}: choose {', '.join(PRECISIONS)}")
    spec = model if isinstance(model, ModelSpec) else resolve_model(model, pretrained)
    if spec.backend not in ENCODERS:
        raise ModelError(f"model {spec.name!r} names an unknown backend {spec.backend!r}: "
                         f"the backends are {', '.join(ENCODERS)}")
    chosen = select_device(device)
    module, cls = ENCODERS[spec.backend]
    return getattr(importlib.import_module(module), cls)(spec, chosen, precision, tree_packing)
