"""Decoded pixels and token ids kept on disk beside the embedding cache, for every later model that preprocesses
or tokenises the same way (the models of a sweep).

Layout, under ``<cache root>/inputs/``::

    pixels/<settings hash>/settings.json       what the hash stands for (:class:`~lgip_metric.models.pixel_stages.PixelStages`)
    pixels/<settings hash>/<ab>/<key>.px      one image: a digest, its shape and its uint8 pixels (``prefix``'s output)
    tokens/<settings hash>/settings.json       the tokenizer's settings and vocabulary digest
    tokens/<settings hash>/chunk-*.npz        texts' token ids: keys (SHA-256 bytes), flat ids, lengths, a digest

``<key>`` is the image's content hash (the embedding cache's), a text's key the SHA-256 of its normalised
text. Every file is written to a temporary name and renamed, so concurrent runs never see half a file and two
runs writing the same image write the same bytes; a file that fails to load or fails its digest is deleted and
its input made afresh. The folder is bounded: after a run has written to it, the least recently used files
(by modification time, which a read renews) are deleted until the whole of ``inputs/`` is within
``LGIP_INPUT_CACHE_GB`` (default :data:`DEFAULT_LIMIT_GB`) gigabytes.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
import uuid
import zipfile
from pathlib import Path

import numpy as np

from lgip_dataset.errors import DataError
from lgip_dataset.files.atomic import atomic_path, atomic_write_text

log = logging.getLogger(__name__)
INPUTS = "inputs"
DEFAULT_LIMIT_GB = 20.0  # the paper's 40,000 images at 224 px are 6 GB per distinct preprocessing
LOAD_ERRORS = (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile)


def limit_bytes() -> int:
    """The bound on ``inputs/``: ``$LGIP_INPUT_CACHE_GB`` gigabytes, else :data:`DEFAULT_LIMIT_GB`."""
    raw = os.environ.get("LGIP_INPUT_CACHE_GB", "")
    try:
        value = float(raw) if raw.strip() else DEFAULT_LIMIT_GB
    except ValueError:
        raise DataError(f"LGIP_INPUT_CACHE_GB={raw!r} is not a number of gigabytes (e.g. 20 or 0.5)") from None
    if value < 0:
        raise DataError(f"LGIP_INPUT_CACHE_GB={raw!r} is negative; give a number of gigabytes (0 keeps nothing)")
    return int(value * 1e9)


def settings_hash(settings: dict) -> str:
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:24]


def _folder(root: Path, kind: str, settings: dict, write: bool) -> Path:
    """The folder of ``kind`` inputs made with ``settings`` (its ``settings.json`` written first by a store that writes)."""
    folder = Path(root).expanduser() / INPUTS / kind / settings_hash(settings)
    if write and not (folder / "settings.json").exists():
        atomic_write_text(folder / "settings.json", json.dumps(settings, indent=2, sort_keys=True, default=str))
    return folder


def _digest(*parts: bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part)
    return digest.hexdigest()


def _reject(path: Path, reason: str) -> None:
    log.warning("input cache: discarding %s: %s", path, reason)
    path.unlink(missing_ok=True)


class PixelStore:
    """Kept pixels of one preprocessing, one file an image (picklable: DataLoader workers read and write it).

    A file is the SHA-256 (32 bytes) of the image key, the shape and the pixels, the number of dimensions (one
    byte), the shape (``uint32`` each) and the ``uint8`` pixels: read with one ``read``, no archive to open."""

    def __init__(self, root: str | Path, settings: dict, write: bool):
        self.folder = _folder(Path(root), "pixels", settings, write)
        self.write_new = write

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.px"

    def read(self, key: str) -> np.ndarray | None:
        """The kept pixels of image ``key``, or None (absent, or unusable and now deleted)."""
        path = self._path(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as err:
            return _reject(path, f"unreadable ({err})")
        ndim = data[32] if len(data) > 32 else 0
        head = 33 + 4 * ndim
        shape = tuple(np.frombuffer(data[33:head], "<u4").tolist()) if ndim and len(data) >= head else ()
        if not shape or len(data) != head + int(np.prod(shape)) or data[:32] != _pixel_digest(key, data[32:]):
            return _reject(path, "digest mismatch (corrupt)")
        try:
            os.utime(path)  # recently used: the last to be evicted
        except OSError:
            pass
        return np.frombuffer(data, np.uint8, offset=head).reshape(shape)

    def write(self, key: str, pixels: np.ndarray) -> None:
        """Keep ``pixels`` of image ``key`` (when this store writes); a failure to write (a full disk) is logged."""
        if not self.write_new:
            return
        pixels = np.ascontiguousarray(pixels, dtype=np.uint8)
        body = bytes([pixels.ndim]) + np.asarray(pixels.shape, "<u4").tobytes() + pixels.tobytes()
        try:
            _replace(self._path(key), _pixel_digest(key, body) + body)
        except OSError as err:
            self.write_new = False
            log.warning("input cache: cannot write pixels to %s (%s); going on without", self.folder, err.strerror or err)


def _pixel_digest(key: str, body: bytes) -> bytes:
    return hashlib.sha256(key.encode() + body).digest()


def _replace(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path`` and rename it there: readers see all of it or none. No
    fsync: a file a crash leaves short or zeroed fails its digest and is made again."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


class TokenStore:
    """Kept token ids of one tokenizer, in chunks of many texts; new ones written only when ``write``."""

    def __init__(self, root: str | Path, settings: dict, write: bool):
        self.folder = _folder(Path(root), "tokens", settings, write)
        self.write_new = write

    def lookup(self, keys: list[str]) -> dict[int, np.ndarray]:
        """The kept ids of ``keys`` by position in ``keys`` (int64 arrays); unusable chunks are deleted."""
        wanted = {bytes.fromhex(key): i for i, key in enumerate(keys)}
        found: dict[int, np.ndarray] = {}
        for path in sorted(self.folder.glob("chunk-*.npz")):
            chunk = self._read(path)
            if chunk is None:
                continue
            raw, flat, lengths = chunk
            bounds = np.concatenate([[0], np.cumsum(lengths)])
            used = False
            blob = raw.tobytes()
            for row in range(len(raw)):
                key = blob[32 * row : 32 * row + 32]
                position = wanted.pop(key, None)
                if position is not None:
                    found[position] = flat[bounds[row] : bounds[row + 1]].astype(np.int64)
                    used = True
            if used:
                try:
                    os.utime(path)
                except OSError:
                    pass
        return found

    def _read(self, path: Path):
        try:
            with np.load(path, allow_pickle=False) as data:
                raw, flat, lengths, digest = data["keys"], data["ids"], data["lengths"], str(data["digest"])
        except LOAD_ERRORS as err:
            return _reject(path, f"unreadable ({err})")
        if (raw.dtype != np.uint8 or raw.ndim != 2 or raw.shape[1] != 32 or len(raw) != len(lengths)
                or int(lengths.sum()) != len(flat) or digest != _token_digest(raw, flat, lengths)):
            return _reject(path, "digest mismatch (corrupt)")
        return raw, flat, lengths

    def write(self, keys: list[str], ids: list[np.ndarray]) -> None:
        """Keep the token ids of ``keys`` as one chunk (when this store writes); a failure to write is logged."""
        if not keys or not self.write_new:
            return
        raw = np.frombuffer(b"".join(bytes.fromhex(key) for key in keys), np.uint8).reshape(len(keys), 32)  # not "S32": it drops trailing zero bytes
        flat = np.concatenate(ids).astype(np.int32) if ids else np.zeros(0, np.int32)
        lengths = np.array([len(row) for row in ids], np.int64)
        try:
            with atomic_path(self.folder / f"chunk-{uuid.uuid4().hex}.npz") as tmp:
                with open(tmp, "wb") as handle:
                    np.savez(handle, keys=raw, ids=flat, lengths=lengths, digest=np.array(_token_digest(raw, flat, lengths)))
        except OSError as err:
            self.write_new = False
            log.warning("input cache: cannot write token ids to %s (%s); going on without", self.folder, err.strerror or err)


def _token_digest(raw: np.ndarray, flat: np.ndarray, lengths: np.ndarray) -> str:
    return _digest(raw.tobytes(), np.asarray(flat, np.int32).tobytes(), np.asarray(lengths, np.int64).tobytes())


def evict(root: str | Path, limit: int | None = None) -> int:
    """Delete the least recently used files of ``<root>/inputs`` until it holds at most ``limit`` bytes
    (default :func:`limit_bytes`); returns how many were deleted. Files another run deletes meanwhile are
    skipped; ``settings.json`` files stay."""
    limit = limit_bytes() if limit is None else limit
    files = []
    for path in (Path(root).expanduser() / INPUTS).rglob("*"):
        if path.name == "settings.json" or path.name.startswith("."):
            continue
        try:
            info = path.stat()
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            files.append((info.st_mtime_ns, info.st_size, path))
    total = sum(size for _, size, _ in files)
    deleted = 0
    for _, size, path in sorted(files, key=lambda item: (item[0], str(item[2]))):
        if total <= limit:
            break
        path.unlink(missing_ok=True)
        total -= size
        deleted += 1
    return deleted
