"""An exclusive OS lock on a folder itself: no lock file is written, nothing is left behind, and the OS
releases it when the holder ends, even by ``kill -9``. ``lgip build`` holds its staging folder with it,
``lgip score``/``evaluate``/``report`` their ``--out`` (``lgip_metric.results.run_folder``) and ``lgip judge
merge`` the folder of its label store while it reads, merges and writes it."""
from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from lgip_dataset.errors import LGIPError


class FolderBusy(LGIPError):
    """Another process holds the folder's lock."""


def lock_folder(folder: Path, wait: float = 0.0) -> int:
    """An open descriptor of the existing ``folder`` holding an exclusive OS lock on it (its own inode: no
    file is created); closing it releases the lock. Waits up to ``wait`` seconds while another open of the
    folder holds one, then raises :class:`FolderBusy` (at once with the default 0); ``OSError`` when it
    cannot be opened or locked."""
    handle = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return handle
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(handle)
                raise FolderBusy(str(folder)) from None
            time.sleep(0.05)
        except OSError:
            os.close(handle)
            raise
