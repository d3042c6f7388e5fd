"""LGIP, model side: scoring engine, statistics, the ``evaluate`` module and the report.

``METRIC_PATH`` is the folder of the ``evaluate`` module (``lgip_metric.py`` and the modules it
imports), so ``evaluate.load(str(METRIC_PATH))`` works from any directory once lgip is installed.
"""
from pathlib import Path

METRIC_PATH = Path(__file__).resolve().parent
