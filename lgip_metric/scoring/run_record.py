"""The provenance record of one scoring run: the model and its settings, the dataset, the counts, the caches, the
timing and the files written (``provenance.json``: :class:`~lgip_metric.results.provenance.Provenance`)."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from importlib.metadata import version

import numpy as np

from lgip_dataset.files.hub_io import DatasetFiles
from lgip_metric.models import Encoder
from lgip_metric.models.registry import ModelSpec
from lgip_metric.results.provenance import RANDOM_NOTE, Provenance


def run_provenance(spec: ModelSpec, files: DatasetFiles, config: str, fingerprint: str | None, validated: bool,
                   world: int, encoder: Encoder, cache, counts: dict, timing: dict, outputs: dict) -> Provenance:
    """The record of a run of ``encoder`` (made from ``spec``) on ``config`` of ``files`` over ``world`` ranks, with
    its ``counts``, embedding ``cache`` (or None), ``timing`` and ``outputs`` (``{"scores": {"file", "sha256"}, …}``)."""
    info = files.build_info()
    encoder_record = encoder.provenance()
    record = {
        "model": spec.name,
        "model_id": spec.model_id,
        "backend": spec.backend,
        "pretrained": None if spec.random_weights else spec.pretrained,
        "random_weights": spec.random_weights,
        "paper_row": spec.paper_row,
        **({"note": RANDOM_NOTE} if spec.random_weights else {}),
        "precision": encoder.precision,
        "device": str(encoder.device),
        "world_size": world,
        "text": encoder_record["text"],
        "image": encoder_record["image"],
        "weights_sha256": encoder_record["weights_sha256"],
        **({"model_type": encoder_record["model_type"]} if "model_type" in encoder_record else {}),
        **({"held": encoder_record["held"]} if "held" in encoder_record else {}),
        "libraries": {**encoder_record["libraries"], "datasets": version("datasets"), "numpy": np.__version__},
        "dataset": {
            "source": str(files.dataset),
            "config": config,
            "fingerprint": fingerprint,
            "seed": info.get("seed"),
            "lexicon_version": info.get("lexicon_version"),
            **({"validated": True} if validated else {}),
        },
        "counts": counts,
        "cache": {
            "dir": str(cache.folder) if cache else None,
            "fingerprint": encoder.fingerprint(),
            "rejected_chunks": cache.rejected_chunks if cache else [],
            **({"write_failure": cache.write_failure} if cache and cache.write_failure else {}),
        },
        "timing": timing,
        **outputs,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    return Provenance.from_dict(json.loads(json.dumps(record, default=str)))  # JSON types, as provenance.json holds them
