"""The text-side subcommands of ``lgip`` (one module each; ``lgip_metric.cli`` registers them) and the argument
types they share.

It may import every other room of :mod:`lgip_dataset`; nothing of the package imports it.
"""
from __future__ import annotations

import argparse


def at_least_one(value: str) -> int:
    """A whole number >= 1; argparse reports anything else as an error of the option it was given to."""
    if not value.isdecimal() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value!r}")
    return int(value)
