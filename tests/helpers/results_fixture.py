"""A copy of the results fixture with its results.json edited, as another run would have written it."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "results-v1"


def edited_fixture(folder: Path, edit) -> Path:
    """``FIXTURE`` copied to ``folder`` with ``edit(data)`` applied to its results.json."""
    shutil.copytree(FIXTURE, folder)
    data = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    edit(data)
    (folder / "results.json").write_text(json.dumps(data), encoding="utf-8")
    return folder
