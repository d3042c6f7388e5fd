"""One writer per output folder: ``lgip score``/``evaluate`` claim ``--out`` before any expensive work.

Two runs writing the same folder would overwrite each other's files while both report success, so
the second is refused at once. The lock is an OS lock (``flock``) on the folder itself, so no lock
file is written into it (nothing extra travels when the folder is uploaded or copied); the OS
releases it when the run ends, even by ``kill -9``. Holding it, a run first deletes the temporary
files a killed run left there, and the empty ``.lgip.lock`` file that lgip 0.1.0 left behind.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from lgip_dataset.errors import LGIPError
from lgip_dataset.files.atomic import remove_stale_temps
from lgip_dataset.files.hub_io import BUILD_INFO
from lgip_dataset.files.locks import FolderBusy, lock_folder

LEGACY_LOCK_FILE = ".lgip.lock"  # written into --out by lgip 0.1.0; removed by a run that holds the folder
_HELD: set[Path] = set()  # folders this process holds: a nested claim (an API call inside a command) passes


@contextmanager
def claimed_output(out: str | Path, *, lock: bool = True) -> Iterator[Path]:
    """Check that ``out`` is (or can become) a writable folder, create it and, with ``lock``, hold its lock.

    Raises :class:`LGIPError` naming ``--out`` when it is a file, lies inside an LGIP dataset folder (one
    holding ``lgip_build.json``), cannot be created, or another run holds it. Under ``torchrun`` only rank 0 writes, so the other ranks pass ``lock=False``. A claim
    of a folder this process already holds passes through.
    """
    out = Path(out)
    if out.resolve() in _HELD:
        yield out
        return
    if out.exists() and not out.is_dir():
        raise LGIPError(f"--out {out} is a file, not a folder; remove it or choose another --out")
    dataset = next((folder for folder in (out.resolve(), *out.resolve().parents) if (folder / BUILD_INFO).is_file()), None)
    if dataset is not None:
        raise LGIPError(f"--out {out} is inside the LGIP dataset {dataset} (it holds {BUILD_INFO}); writing there would "
                        "break the dataset: choose an --out outside it")
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
