"""The Space's models: an allow-list of registry names, each loaded lazily and only once.

Only names on the allow-list are ever resolved, so a request can never make the Space download
an arbitrary repository or run remote code. ``gpu`` is ``spaces.GPU`` on a ZeroGPU Space and a
no-op decorator everywhere else.
"""
from __future__ import annotations

import threading
from typing import Iterable

import gradio as gr

from lgip_dataset.errors import LGIPError
from lgip_metric.models import PAPER_MODELS, Encoder, load_model, resolve_model

RANDOM_LABEL = "random weights: numbers are meaningless"

try:
    import spaces

    gpu = spaces.GPU
except ImportError:  # not on a ZeroGPU Space

    def gpu(fn=None, **_):
        """No-op stand-in for ``spaces.GPU`` (``@gpu`` and ``@gpu(duration=...)`` both work)."""
        return fn if fn is not None else (lambda f: f)


class ModelPool:
    """Allow-listed models, loaded on first use and kept for the life of the process.

    ``extra`` names (e.g. ``tiny-clip`` for offline use) come first, so the first is the default choice.
    """

    def __init__(self, extra: Iterable[str] = ()):
        self.allowed = list(dict.fromkeys([*extra, *PAPER_MODELS]))
        self._loaded: dict[str, Encoder] = {}
        self._lock = threading.Lock()

    def check(self, names) -> list[str]:
        """The chosen names as a list; ``gr.Error`` when none is chosen or one is not allowed."""
        names = [names] if isinstance(names, str) else list(names or [])
        if not names:
            raise gr.Error("Choose at least one model.")
        for name in names:
            if name not in self.allowed:
                raise gr.Error(f"Model {name!r} is not on this Space's allow-list; choose one of: "
                               f"{', '.join(self.allowed)}.")
        return names

    def get(self, name: str) -> Encoder:
        """The loaded model ``name`` (loading it the first time); ``gr.Error`` if not allowed or unloadable."""
        self.check([name])
        with self._lock:
            if name not in self._loaded:
                try:
                    self._loaded[name] = load_model(name)
                except (LGIPError, OSError) as err:
                    raise gr.Error(f"Model {name!r} could not be loaded: {err}") from None
            return self._loaded[name]

    def label(self, name: str) -> str:
        """A display name that says so when the model has random weights."""
        random = self._loaded[name].random_weights if name in self._loaded else resolve_model(name).random_weights
        return f"{name} ({RANDOM_LABEL})" if random else name

    def choices(self) -> list[tuple[str, str]]:
        """(label, name) pairs for a dropdown, random-weight models labelled."""
        return [(self.label(name), name) for name in self.allowed]
