"""Where the tests find the repository, their fixtures and the real data beside the repository."""
from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
SHARED = REPO.parent / "shared"


def needs_shared(needs: str, *names: str) -> pytest.MarkDecorator:
    """Skip the test where a folder ``../shared/<name>`` is absent (a fresh clone has no ``../shared``), saying what
    it needs from them."""
    folders = " and ".join(f"../shared/{name}" for name in names)
    return pytest.mark.skipif(not all((SHARED / name).is_dir() for name in names),
                              reason=f"needs {needs} from {folders}, not found beside the repository")
