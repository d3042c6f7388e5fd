"""The provenance record of one scoring run: built once by the engine, carried by ``Results``.

The engine makes one :class:`Provenance` per run (``lgip_metric.scoring.engine``); ``provenance.json`` is its
:meth:`Provenance.to_dict`, and ``results.json`` holds the same record under ``"provenance"`` with its
``model`` and ``dataset`` blocks (:meth:`Provenance.model_block`, :attr:`Provenance.dataset`) derived
from it. Plain data: importing this module needs no torch.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path

RANDOM_MARK = "random weights"
RANDOM_NOTE = "RANDOM WEIGHTS: this model was not trained; its scores are meaningless (tests and timing only)."
_OPTIONAL = ("note", "model_type", "held", "groups_scores")  # keys a record holds only when they apply


@dataclass(frozen=True)
class Provenance:
    """Which model (weights, settings, libraries) scored which dataset rows, when and how fast.

    The fields are the keys of ``provenance.json`` in the order it writes them; ``note``,
    ``model_type``, ``held`` and ``groups_scores`` are left out of the record when None. ``held`` says what is
    known of a model the user passed as an object (``score(model_object, ...)``): that it was user-supplied,
    its class, parameters, config or preprocessing, and what is unknown. Only ``model`` is
    required, so a record written by an older version (or a test's partial one) still loads.
    """

    model: str
    model_id: str | None = None
    backend: str | None = None
    pretrained: str | None = None
    random_weights: bool = False
    paper_row: str | None = None
    note: str | None = None
    precision: str | None = None
    device: str | None = None
    world_size: int = 1
    text: dict = field(default_factory=dict)
    image: dict = field(default_factory=dict)
    weights_sha256: str | None = None
    model_type: str | None = None
    held: dict | None = None  # a model passed as an object: what is known of it, and what is not
    libraries: dict = field(default_factory=dict)
    dataset: dict = field(default_factory=dict)  # source, config, fingerprint, seed, lexicon_version
    counts: dict = field(default_factory=dict)
    cache: dict = field(default_factory=dict)
    timing: dict = field(default_factory=dict)
    scores: dict = field(default_factory=dict)  # {"file", "sha256"} of scores.parquet
    groups_scores: dict | None = None
    created: str | None = None

    @classmethod
    def from_dict(cls, record: dict) -> "Provenance":
        """The record of a ``provenance.json`` (or of results.json's ``"provenance"``), any version."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in record.items() if k in names})

    def to_dict(self) -> dict:
        """The JSON record, exactly as ``provenance.json`` holds it (JSON types only)."""
        record = {f.name: getattr(self, f.name) for f in fields(self)}
        record = {k: v for k, v in record.items() if not (k in _OPTIONAL and v is None)}
        return json.loads(json.dumps(record, default=str))

    @property
    def label(self) -> str:
        """How tables and plots name the model (:func:`model_label`)."""
        return model_label(self.to_dict())

    def model_block(self) -> dict:
        """results.json's ``model`` block: name, model_id, backend, pretrained, random_weights, paper_row, label."""
        return {"name": self.model, "model_id": self.model_id, "backend": self.backend, "pretrained": self.pretrained,
                "random_weights": self.random_weights, "paper_row": self.paper_row, "label": self.label}

    def summary(self, scores_path) -> str:
        """Human-readable lines about the finished run (loud about random weights and skipped images)."""
        counts, timing = self.counts, self.timing
        lines = [f"!!! {self.note}"] if self.random_weights else []
        if self.held:
            lines.append(f"model: a user-supplied {self.held['class']} object; unknown: {'; '.join(self.held['unknown'])}")
        lines += [
            f"model {self.model_id} ({self.backend}, {self.precision}, {self.device}, "
            f"text normalisation: {self.text['normalisation']})",
            f"scored {counts['scored_rows']:,} of {counts['rows']:,} rows -> {scores_path}",
            f"images: {counts['encoded_images']:,} encoded, {counts['cached_images']:,} from cache; "
            f"texts: {counts['encoded_texts']:,} encoded, {counts['cached_texts']:,} from cache; "
            f"{timing['total_s']:.1f}s",
        ]
        if validated := counts.get("validated"):
            dropped = ", ".join(f"{t} {n:,}" for t, n in validated["dropped_per_type"].items()) or "none"
            lines.append(f"validated rows only: {validated['dropped_rows']:,} scored row(s) the validated rule drops are "
                         f"not written ({dropped})")
        if counts.get("read_alike_rows"):
            lines.append(f"warning: {counts['read_alike_rows']:,} row(s) reach the model as the same tokens for caption "
                         f"and variant: an edit past its {self.text.get('context_length', '')}-token context, or a "
                         "difference its tokenizer drops (such as case); they score alike, so a flip of them is never "
                         "preferred and a paraphrase costs nothing")
        lines += [f"skipped image {s['image_id']} ({s['rows']} rows): {s['reason']}" for s in counts["skipped_images"]]
        return "\n".join(lines)


def model_label(record: dict) -> str:
    """How tables and plots name a model, from a provenance record or results.json's ``model`` block:
    the paper's row name when it is one (local folders by their name, not their full path), marked
    when its weights are random."""
    name = record.get("paper_row") or record.get("model_id") or record["model"]
    name = ":".join(Path(part).name if part.startswith("/") else part for part in name.split(":"))
    return f"{name} [{RANDOM_MARK}]" if record.get("random_weights") else name
