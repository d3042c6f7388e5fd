"""An exclusive OS lock on a folder itself: no lock file is written, nothing is left behind, and the OS
releases it when the holder ends, even by ``kill -9``. ``lgip build`` holds its staging folder with it
and ``lgip score``/``evaluate``/``report`` their ``--out`` (``lgip_metric.results.run_folder``)."""
from __future__ import annotations

import fcntl
import os
from pathlib import Path

from lgip_dataset.errors import LGIPError


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
