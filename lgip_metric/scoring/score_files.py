"""Writing the engine's output files: a score table as parquet, atomically and hashed as it is written, and a
failed write of any output turned into a message that says what to do."""
from __future__ import annotations

import hashlib
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from lgip_dataset.errors import LGIPError
from lgip_dataset.files.atomic import atomic_path


class _HashingFile:
    """A binary file that hashes (SHA-256) every byte written to it on the way."""

    def __init__(self, handle):
        self.handle, self.digest = handle, hashlib.sha256()

    def write(self, data) -> int:
        self.digest.update(data)
        return self.handle.write(data)

    def __getattr__(self, name):
        return getattr(self.handle, name)


def write_table(table: pa.Table, path: Path, columns) -> tuple[pa.Table, str]:
    """Write ``columns`` of a score table as parquet atomically; return them (what reading the file
    gives) and the file's SHA-256, hashed from the bytes as they are written (the file is never read
    back, nor held whole in memory)."""
    table = table.select(list(columns))
    with writing(path), atomic_path(path) as tmp, open(tmp, "wb") as handle:
        sink = _HashingFile(handle)
        pq.write_table(table, sink)
    return table, sink.digest.hexdigest()


@contextmanager
def writing(path: Path) -> Iterator[None]:
    """Turn a failed write of the output ``path`` (a full disk; the half-written file is gone: atomic_path)
    into a message that says what to do."""
    try:
        yield
    except OSError as err:
        raise LGIPError(f"cannot write {path} ({err.strerror or err}); free space there or choose another --out, then "
                        "run again (embeddings cached so far are reused unless --cache-dir none)") from None
