"""Embedding cache: model fingerprint x content hash -> float32 embedding, on disk in chunks.

Layout: ``<root>/<fingerprint>/model.json`` (what the fingerprint stands for) and
``<root>/<fingerprint>/<kind>/chunk-*.npz``, each chunk holding ``keys`` (SHA-256 of the image
bytes or the normalised text), ``emb`` and ``digest`` (SHA-256 over fingerprint, kind, keys and
embeddings). Chunks are written atomically while encoding proceeds, so an interrupted run keeps
every finished chunk and a rerun encodes only the rest. A chunk that fails to load, fails its
digest (corrupt, or copied from another model) or has the wrong width is deleted and its entries
are encoded again, never used.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import uuid
import zipfile
from pathlib import Path
from typing import Iterator

import numpy as np

from lgip_dataset.errors import LGIPError
from lgip_dataset.files.atomic import atomic_path, atomic_write_text

log = logging.getLogger(__name__)
KEY_DTYPE = "<U64"
DEFAULT_CHUNK_ROWS = 4096


class CacheError(LGIPError):
    """The cache folder cannot be used (not writable, not a folder)."""


def content_key(data: bytes | str) -> str:
    """SHA-256 hex digest of image bytes or of a normalised text (UTF-8)."""
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def default_cache_dir() -> Path:
    """``$LGIP_CACHE_DIR``, else ``$XDG_CACHE_HOME/lgip/embeddings`` (``~/.cache/lgip/embeddings``)."""
    if os.environ.get("LGIP_CACHE_DIR"):
        return Path(os.environ["LGIP_CACHE_DIR"]).expanduser()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "lgip" / "embeddings"


def check_writable(root: Path) -> None:
    """Raise :class:`CacheError` unless ``root`` is (or can be made) a writable folder."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=root):
            pass
    except OSError as err:
        raise CacheError(
            f"embedding cache folder {root} is not writable ({err.strerror or err}); "
            "pass --cache-dir with a writable folder, or --cache-dir none to run without a cache"
        ) from err


def _digest(fingerprint: str, kind: str, keys: np.ndarray, emb: np.ndarray) -> str:
    digest = hashlib.sha256(f"{fingerprint}|{kind}|{emb.shape}".encode())
    digest.update(keys.tobytes())
    digest.update(emb.tobytes())
    return digest.hexdigest()


class EmbeddingCache:
    """The cached embeddings of one model fingerprint."""

    def __init__(self, root: str | Path, fingerprint: str, meta: dict, chunk_rows: int = DEFAULT_CHUNK_ROWS):
        self.root = Path(root).expanduser()
        check_writable(self.root)
        self.fingerprint = fingerprint
        self.folder = self.root / fingerprint
        self.chunk_rows = max(1, chunk_rows)
        self.rejected_chunks: list[str] = []
        self.write_failure: str | None = None  # why chunks stopped being written (a full disk): the run goes on without
        try:
            if not (self.folder / "model.json").exists():
                atomic_write_text(self.folder / "model.json", json.dumps(meta, indent=2, sort_keys=True, default=str))
        except OSError as err:
            raise CacheError(f"cannot write to embedding cache {self.folder}: {err}") from err

    def lookup(self, kind: str, keys: list[str], dim: int) -> tuple[np.ndarray, np.ndarray]:
        """Positions of ``keys`` found in the cache and their embeddings (``float32 [found, dim]``)."""
        hits = self.find(kind, keys, dim)
        parts = list(hits.embeddings())
        if not parts:
            return np.zeros(0, np.int64), np.zeros((0, dim), np.float32)
        positions = np.concatenate([p for p, _ in parts])
        order = np.argsort(positions)
        return positions[order], np.concatenate([e for _, e in parts])[order]

    def find(self, kind: str, keys: list[str], dim: int) -> "Hits":
        """Which of ``keys`` the valid chunks hold (the first chunk in name order wins), without keeping
        their embeddings: :meth:`Hits.embeddings` reads those chunk by chunk."""
        wanted = {key: i for i, key in enumerate(keys)}
        parts: list[tuple[Path, np.ndarray, np.ndarray]] = []
        for path in sorted((self.folder / kind).glob("chunk-*.npz")):
            chunk = self._read(path, kind, dim)
            if chunk is None:
                continue
            rows, positions = [], []
            for row, key in enumerate(chunk[0].tolist()):
                position = wanted.pop(key, None)
                if position is not None:
                    rows.append(row)
                    positions.append(position)
            if rows:
                parts.append((path, np.array(rows, np.int64), np.array(positions, np.int64)))
        return Hits(self, kind, dim, parts)

    def _read(self, path: Path, kind: str, dim: int) -> tuple[np.ndarray, np.ndarray] | None:
        try:
            with np.load(path, allow_pickle=False) as data:
                keys, emb, digest = data["keys"], data["emb"], str(data["digest"])
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:
            return self._reject(path, f"unreadable ({err})")
        if emb.dtype != np.float32 or emb.ndim != 2 or emb.shape != (len(keys), dim):
            return self._reject(path, f"shape {emb.shape} {emb.dtype}, expected (n, {dim}) float32")
        if digest != _digest(self.fingerprint, kind, keys, emb):
            return self._reject(path, "digest mismatch (corrupt, or written for another model)")
        if not np.isfinite(emb).all():
            return self._reject(path, "non-finite values")
        return keys, emb

    def _reject(self, path: Path, reason: str) -> None:
        log.warning("embedding cache: discarding %s: %s", path, reason)
        self.rejected_chunks.append(f"{path.parent.name}/{path.name}: {reason}")
        path.unlink(missing_ok=True)
        return None

    def writer(self, kind: str, rank: int = 0) -> "ChunkWriter":
        """A buffered writer that adds chunks of ``kind`` as encoding proceeds."""
        return ChunkWriter(self, kind, rank)

    def write_chunk(self, kind: str, keys: list[str], emb: np.ndarray, rank: int = 0) -> Path:
        """Write one chunk atomically; returns its path."""
        key_array = np.asarray(keys, dtype=KEY_DTYPE)
        emb = np.ascontiguousarray(emb, dtype=np.float32)
        path = self.folder / kind / f"chunk-r{rank}-{uuid.uuid4().hex}.npz"
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as handle:
                np.savez(handle, keys=key_array, emb=emb, digest=np.array(_digest(self.fingerprint, kind, key_array, emb)))
        return path


class Hits:
    """The cached entries :meth:`EmbeddingCache.find` found: their positions, and their embeddings on demand."""

    def __init__(self, cache: EmbeddingCache, kind: str, dim: int, parts: list[tuple[Path, np.ndarray, np.ndarray]]):
        self.cache, self.kind, self.dim, self.parts = cache, kind, dim, parts
        self.positions = np.concatenate([p for _, _, p in parts]) if parts else np.zeros(0, np.int64)

    def embeddings(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """``(positions, float32 embeddings)`` chunk by chunk, each chunk read (and checked) again."""
        for path, rows, positions in self.parts:
            chunk = self.cache._read(path, self.kind, self.dim)
            if chunk is None:
                raise CacheError(f"embedding cache chunk {path} changed while this run used it; run again")
            yield positions, chunk[1][rows]


class ChunkWriter:
    """Buffers (key, embedding) rows and writes a chunk every ``chunk_rows``; ``close`` writes the rest."""

    def __init__(self, cache: EmbeddingCache, kind: str, rank: int):
        self.cache, self.kind, self.rank = cache, kind, rank
        self._keys: list[str] = []
        self._emb: list[np.ndarray] = []

    def add(self, keys: list[str], emb: np.ndarray) -> None:
        self._keys.extend(keys)
        self._emb.append(np.asarray(emb, dtype=np.float32))
        if len(self._keys) >= self.cache.chunk_rows:
            self.flush()

    def flush(self) -> None:
        """Write the buffered rows as a chunk. The cache is optional: when it cannot be written (a full disk),
        the run goes on without writing to it, says so once, and records why (``write_failure``)."""
        if self._keys and self.cache.write_failure is None:
            try:
                self.cache.write_chunk(self.kind, self._keys, np.concatenate(self._emb), self.rank)
            except OSError as err:
                self.cache.write_failure = f"{err.strerror or err} (from {self.kind} chunk on)"
                log.warning("embedding cache: cannot write to %s (%s); this run goes on without caching",
                            self.cache.folder, err.strerror or err)
        self._keys, self._emb = [], []

    def __enter__(self) -> "ChunkWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.flush()  # finished embeddings are valid even when the run stops (e.g. Ctrl-C)
