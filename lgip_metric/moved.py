"""The modules of lgip_metric that moved (into its sub-packages in 0.2.0; the trigram LM into
:mod:`lgip_dataset.ngram` after it) still import by their old names.

``import lgip_metric.engine`` or ``from lgip_metric.blind import blind_report`` gives the module at its
new place (:data:`MOVED`; the same module object, so its names are the same objects) with a
``DeprecationWarning`` naming that place. :func:`install` (run by ``import lgip_metric``) adds the finder.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

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


class _OldNames(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old module name of :data:`MOVED` and loads it as the module at its new place."""

    def find_spec(self, name, path=None, target=None):
        return importlib.util.spec_from_loader(name, self) if name in MOVED else None

    def create_module(self, spec):
        warnings.warn(f"{spec.name} moved to {MOVED[spec.name]}; import it from there",
                      DeprecationWarning, stacklevel=2)
        module = importlib.import_module(MOVED[spec.name])
        spec.loader_state = module.__spec__  # the import system sets the old name's spec on it: put it back then
        return module

    def exec_module(self, module):
        module.__spec__ = module.__spec__.loader_state


def install() -> None:
    """Let the old names of :data:`MOVED` import (once per process)."""
    if not any(isinstance(finder, _OldNames) for finder in sys.meta_path):
        sys.meta_path.append(_OldNames())
