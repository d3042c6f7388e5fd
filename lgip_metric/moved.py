"""The modules of lgip_metric that moved (into its sub-packages in 0.2.0; the trigram LM into
:mod:`lgip_dataset.ngram` after it) still import by their old names.

``import lgip_metric.engine`` or ``from lgip_metric.blind import blind_report`` gives the module at its
new place (:data:`MOVED`; the same module object, so its names are the same objects) with a
``DeprecationWarning`` naming that place (:mod:`lgip_dataset.old_names`, installed by ``import lgip_metric``).
"""
from __future__ import annotations

MOVED = {
    **{f"lgip_metric.{name}": f"lgip_metric.scoring.{name}"
       for name in ("engine", "join", "texts", "image_data", "score_inputs", "cache", "distributed", "heap")},
    **{f"lgip_metric.{name}": f"lgip_metric.statistics.{name}"
       for name in ("score_table", "blind", "groups", "analysis", "reference")},
    **dict.fromkeys(("lgip_metric.trigram", "lgip_metric.statistics.trigram"), "lgip_dataset.ngram"),  # beside the bigram
    "lgip_metric.provenance": "lgip_metric.results.provenance",
    "lgip_metric.model_index": "lgip_metric.results.model_index",
    "lgip_metric.output_lock": "lgip_metric.results.run_folder",
    "lgip_metric.audit_extended": "lgip_metric.audit.extended",
}

