"""Atomic file writes: write a temporary file beside the target, fsync, then ``os.replace``; and the check
that an output's disk can hold what a command is about to write there."""
from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from lgip_dataset.errors import DataError

TEMP_SUFFIX = ".tmp"
_UMASK = os.umask(0)
os.umask(_UMASK)


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path to write; on success it replaces ``path`` in one step, else it is removed.

    A reader never sees a half-written ``path``: it is either the old file, absent, or complete.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    os.close(fd)
    tmp_path = Path(tmp)
    tmp_path.chmod(0o666 & ~_UMASK)  # mkstemp makes 0600; the final file gets ordinary permissions
    try:
        yield tmp_path
        with open(tmp_path, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp_path, path)
    finally:
        tmp_path.unlink(missing_ok=True)


def check_output_file(path: str | Path, option: str) -> None:
    """Refuse, before any work, an output file that names a folder or lies under a file (DataError naming
    ``option``); missing parent folders are made when it is written."""
    path = Path(path)
    if path.is_dir():
        raise DataError(f"{option} {path} is a folder; name a file to write")
    blocking = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise DataError(f"{option} {path}: {blocking} is a file, not a folder; choose another {option}")


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def remove_stale_temps(folder: str | Path) -> list[Path]:
    """Delete the temporary files a killed writer left under ``folder`` (``.<name>.*.tmp``); return them.

    Call it only while no other process writes there (a build's own staging folder, a locked ``--out``).
    """
    stale = sorted(Path(folder).rglob(f".*{TEMP_SUFFIX}"))
    for path in stale:
        path.unlink(missing_ok=True)
    return stale


def check_free_space(out: Path, need: int, what: str) -> None:
    """Refuse, before the work, an ``--out`` whose disk has less than ``need`` bytes free (``out`` may not
    exist yet: its nearest existing folder is asked); ``what`` names what needs the space."""
    folder = next(f for f in (out, *out.parents) if f.exists())
    free = shutil.disk_usage(folder).free
    if free < need:
        raise DataError(f"--out {out}: its disk has {free / 2**20:,.1f} MiB free and {what} need about "
                        f"{need / 2**20:,.1f} MiB; free space there or choose another --out")
