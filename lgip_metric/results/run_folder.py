"""One writer per output folder: ``lgip score``/``evaluate`` claim ``--out`` before any expensive work.

Two runs writing the same folder would overwrite each other's files while both report success, so
the second is refused at once. The lock is an OS lock (``flock``) on the folder itself, so no lock
file is written into it (nothing extra travels when the folder is uploaded or copied); the OS
releases it when the run ends, even by ``kill -9``. Holding it, a run first deletes the temporary
files a killed run left there, and the empty ``.lgip.lock`` file that lgip 0.1.0 left behind.
"""
from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from lgip_dataset.atomic import remove_stale_temps
from lgip_dataset.errors import LGIPError

LEGACY_LOCK_FILE = ".lgip.lock"  # written into --out by lgip 0.1.0; removed by a run that holds the folder
_HELD: set[Path] = set()  # folders this process holds: a nested claim (an API call inside a command) passes


class FolderBusy(LGIPError):
    """Another process holds the folder's lock."""


def lock_folder(folder: Path) -> int:
    """An open descriptor of the existing ``folder`` holding an exclusive OS lock on it (its own inode: no
    file is created); closing it releases the lock. Raises :class:`FolderBusy` at once when another open
    of the folder holds one, ``OSError`` when it cannot be opened or locked."""
    handle = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(handle)
        raise FolderBusy(str(folder)) from None
    except OSError:
        os.close(handle)
        raise
    return handle


@contextmanager
def claimed_output(out: str | Path, *, lock: bool = True) -> Iterator[Path]:
    """Check that ``out`` is (or can become) a writable folder, create it and, with ``lock``, hold its lock.

    Raises :class:`LGIPError` naming ``--out`` when it is a file, cannot be created, or another run
    holds it. Under ``torchrun`` only rank 0 writes, so the other ranks pass ``lock=False``. A claim
    of a folder this process already holds passes through.
    """
    out = Path(out)
    if out.resolve() in _HELD:
        yield out
        return
    if out.exists() and not out.is_dir():
        raise LGIPError(f"--out {out} is a file, not a folder; remove it or choose another --out")
    try:
        out.mkdir(parents=True, exist_ok=True)
        handle = lock_folder(out) if lock else None
    except FolderBusy:
        raise LGIPError(f"--out {out} is being written by another lgip run (it holds a lock on the folder); "
                        "wait for that run to finish or choose another --out") from None
    except OSError as err:
        raise LGIPError(f"--out {out}: cannot write there ({err.strerror or err}); choose another --out") from None
    if handle is None:
        yield out
        return
    try:
        remove_stale_temps(out)  # left by a run killed mid-write; the lock says no other run writes here
        (out / LEGACY_LOCK_FILE).unlink(missing_ok=True)
        _HELD.add(out.resolve())
        yield out
    finally:
        _HELD.discard(out.resolve())
        os.close(handle)  # releases the lock
