"""LGIP, model side: scoring engine, statistics, the ``evaluate`` module and the report.

The library API is :func:`score`, :func:`evaluate_model` and :func:`write_report` (see
:mod:`lgip_metric.api`), with :func:`metric_inputs` (a score table as the ``evaluate`` module's inputs),
imported on first use so that ``import lgip_metric`` stays light.

``METRIC_PATH`` is the folder of the ``evaluate`` module (``lgip_metric.py`` and the modules it
imports), so ``evaluate.load(str(METRIC_PATH))`` works from any directory once lgip is installed.
"""
import importlib
from pathlib import Path

from lgip_dataset import old_names
from lgip_metric import moved

METRIC_PATH = Path(__file__).resolve().parent
_API = {"score": "api", "evaluate_model": "api", "write_report": "api", "Results": "results.record",
        "load_results": "results.record", "Provenance": "results.provenance", "metric_inputs": "statistics.score_table",
        "evaluate_models": "sweep"}
old_names.install(moved.MOVED)  # modules that moved into sub-packages in 0.2.0 still import by their old names

__all__ = ["METRIC_PATH", *_API]


def __getattr__(name: str):
    if name in _API:
        return getattr(importlib.import_module(f"lgip_metric.{_API[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
