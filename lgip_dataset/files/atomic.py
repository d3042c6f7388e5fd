"""Atomic file writes: write a temporary file beside the target, fsync, then ``os.replace``; and the checks
that an output can be written and that its disk can hold what a command is about to write there.

Only a regular file (or a name not there yet) is replaced: a device (``/dev/stdout``, ``/dev/full``), a named
pipe or a symlink to one is written to directly, and a symlink to a regular file has its target replaced,
so nothing that is not a file is ever turned into one.
"""
from __future__ import annotations

import errno
import os
import stat
import shutil
import sys
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

    A reader never sees a half-written ``path``: it is either the old file, absent, or complete. A ``path``
    that is (or links to) a device or a pipe is yielded itself, to be written directly.
    """
    path = Path(path)
    target = replaceable(path)
    if target is None:
        with _direct(path) as tmp:
            yield tmp
        return
    path = target
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


@contextmanager
def _direct(path: Path) -> Iterator[Path]:
    """Yield a temporary path to write; on success its bytes are written to ``path`` itself (a device, a pipe,
    ``/dev/stdout``): through the process's own descriptor where ``path`` names one (``/dev/stdout``,
    ``/dev/fd/N``, ``/proc/self/fd/N``), after what it printed, so nothing is truncated or written over."""
    fd, tmp = tempfile.mkstemp(prefix="lgip-", suffix=TEMP_SUFFIX)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        descriptor = _descriptor(path)
        sys.stdout.flush()
        sys.stderr.flush()
        with (os.fdopen(os.dup(descriptor), "wb") if descriptor is not None else open(path, "wb")) as out, \
                open(tmp_path, "rb") as source:
            shutil.copyfileobj(source, out)
    finally:
        tmp_path.unlink(missing_ok=True)


def _descriptor(path: Path) -> int | None:
    """The descriptor of this process that ``path`` (or a link on its way) names, else None."""
    for _ in range(40):
        names = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
        text = os.path.abspath(path)
        if text in names:
            return names[text]
        for prefix in ("/dev/fd/", "/proc/self/fd/", f"/proc/{os.getpid()}/fd/"):
            if text.startswith(prefix) and text[len(prefix):].isdigit():
                return int(text[len(prefix):])
        if not path.is_symlink():
            return None
        link = Path(os.readlink(path))
        path = link if link.is_absolute() else path.parent / link
    return None


def is_special(path: str | Path) -> bool:
    """Whether ``path`` is (or links to) something that is neither a regular file nor a folder: a device, a
    named pipe, a socket. Such an output is written to directly, never replaced."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def replaceable(path: Path) -> Path | None:
    """The file to replace atomically for the output ``path``: ``path`` itself, or the file a symlink leads
    to; None where ``path`` is to be written directly: a device or pipe, or a link through ``/proc`` or
    ``/dev`` (``/dev/stdout`` redirected to a file is the shell's file, not one to replace)."""
    if is_special(path):
        return None
    hops = 0
    while path.is_symlink() and hops < 40:
        link = Path(os.readlink(path))
        path = link if link.is_absolute() else path.parent / link
        if path.parts[1:2] in (("proc",), ("dev",)):
            return None
        hops += 1
    return Path(os.path.abspath(path))


def check_output_file(path: str | Path, option: str) -> None:
    """Refuse, before any work, an output file that cannot be written (DataError naming ``option``): it
    names a folder, lies under a file, or its folder (the nearest one there, when missing folders are to be
    made) or the file itself is not writable. A device or a pipe is accepted as it is."""
    path = Path(path)
    if path.is_dir():
        raise DataError(f"{option} {path} is a folder; name a file to write")
    target = replaceable(path)
    if target is None:  # written directly
        if not os.access(path, os.W_OK):
            raise DataError(f"{option} {path}: not writable; choose another {option}")
        return
    blocking = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise DataError(f"{option} {path}: {blocking} is a file, not a folder; choose another {option}")
    folder = next(f for f in (*target.parents, Path(".")) if f.exists())
    if not os.access(folder, os.W_OK | os.X_OK):
        raise DataError(f"{option} {path}: the folder {folder} is not writable; choose another {option}")
    if target.exists() and not os.access(target, os.W_OK):
        raise DataError(f"{option} {path}: the file is not writable; choose another {option} or make it writable")


def atomic_write_text(path: str | Path, text: str, option: str = "output") -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically; a failed write (a full disk, a device that takes
    nothing) is a DataError naming ``option`` and the file, with nothing half-written left behind."""
    try:
        with atomic_path(path) as tmp:
            tmp.write_text(text, encoding="utf-8")
    except OSError as err:
        raise DataError(write_failure(path, option, err)) from None


def write_failure(path: str | Path, option: str, err: OSError) -> str:
    """The message of a failed write of the output ``path``: what went wrong and what to do."""
    if err.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"{option} {path}: no space left on its device; free space there or choose another {option}"
    return f"{option} {path}: cannot write it ({err.strerror or err}); choose another {option}"


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
