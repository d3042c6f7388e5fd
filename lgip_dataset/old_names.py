"""Modules that moved still import by their old names, for one release: a meta-path finder over a table.

A package lists its moved modules in a table, old name to new name (:data:`lgip_dataset.moved.MOVED`,
:data:`lgip_metric.moved.MOVED`), and :func:`install` s it when the package is imported. ``import old.name`` or
``from old import name`` then gives the module at its new place (the same module object, so its names are the same
objects) with a ``DeprecationWarning`` naming that place. The finder lives here because lgip_dataset imports nothing
of lgip_metric, and both packages use it.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from collections.abc import Mapping


class OldNames(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old module name of ``moved`` and loads it as the module at its new place."""

    def __init__(self, moved: Mapping[str, str]):
        self.moved = moved

    def find_spec(self, name, path=None, target=None):
        return importlib.util.spec_from_loader(name, self) if name in self.moved else None

    def create_module(self, spec):
        warnings.warn(f"{spec.name} moved to {self.moved[spec.name]}; import it from there",
                      DeprecationWarning, stacklevel=2)
        module = importlib.import_module(self.moved[spec.name])
        spec.loader_state = module.__spec__  # the import system sets the old name's spec on it: put it back then
        return module

    def exec_module(self, module):
        module.__spec__ = module.__spec__.loader_state


def install(moved: Mapping[str, str]) -> None:
    """Let the old names of ``moved`` import (once per process and table). The finder goes first: an old name is
    the module at its new place even where a finder of an earlier install still knows a file by that name."""
    if not any(isinstance(finder, OldNames) and finder.moved is moved for finder in sys.meta_path):
        sys.meta_path.insert(0, OldNames(moved))
