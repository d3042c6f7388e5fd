"""One writer per output folder: ``lgip score``/``evaluate`` claim ``--out`` before any expensive work.

Two runs writing the same folder would overwrite each other's files while both report success, so
the second is refused at once. The lock is ``filelock``'s (an OS lock on ``--out/.lgip.lock``): it
is released when the run ends, even by ``kill -9``; the empty lock file stays in the folder. Holding
it, a run first deletes the temporary files a killed run left there, so a rerun leaves none.
"""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from filelock import FileLock, Timeout

from lgip_dataset.atomic import remove_stale_temps
from lgip_dataset.errors import LGIPError

LOCK_FILE = ".lgip.lock"
_HELD: set[Path] = set()  # folders this process holds: a nested claim (an API call inside a command) passes


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
    held = FileLock(out / LOCK_FILE)
    try:
        out.mkdir(parents=True, exist_ok=True)
        if lock:
            held.acquire(timeout=0)
    except Timeout:
        raise LGIPError(f"--out {out} is being written by another lgip run (it holds {out / LOCK_FILE}); "
                        "wait for that run to finish or choose another --out") from None
    except OSError as err:
        raise LGIPError(f"--out {out}: cannot write there ({err.strerror or err}); choose another --out") from None
    if lock:
        remove_stale_temps(out)  # left by a run killed mid-write; the lock says no other run writes here
        _HELD.add(out.resolve())
    try:
        yield out
    finally:
        if lock:
            _HELD.discard(out.resolve())
            held.release()
