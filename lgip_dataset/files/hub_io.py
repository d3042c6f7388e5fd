"""Load a config of an LGIP dataset from a local Hub-layout folder or a Hub repo id."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from lgip_dataset import schema
from lgip_dataset.errors import DataError

if TYPE_CHECKING:
    import datasets

BUILD_INFO = "lgip_build.json"


def load_config(dataset: str | Path, config: str = schema.PAIRS) -> datasets.Dataset:
    """Return the ``test`` split of ``config`` from a built folder or a Hub id (``org/lgip``): its
    parquet shards (:func:`config_files`; a Hub dataset's are downloaded) loaded as parquet files.

    ``datasets`` keys its cache of a folder by the folder's name alone, so a folder rebuilt in place
    would otherwise return stale rows.
    """
    return load_shards(config_files(dataset, config), config)


def load_shards(shards: list[Path], config: str) -> datasets.Dataset:
    """The ``test`` split of ``config`` from its parquet ``shards`` (memory-mapped, not copied); DataError
    for shards without a row (an empty build)."""
    import datasets
    from datasets.exceptions import DatasetGenerationError

    _check_rows(shards, config)
    try:
        return datasets.load_dataset("parquet", data_files={schema.SPLIT: [str(s) for s in shards]},
                                     split=schema.SPLIT, features=_features(shards[0], config))
    except DatasetGenerationError as err:
        raise _unreadable(shards, err.__cause__ or err) from None


def read_table(shards: list[Path], config: str, columns: list[str] | None = None) -> pa.Table:
    """The ``columns`` (all when None) of ``config``'s parquet ``shards`` as one Arrow table, in shard order, read
    by pyarrow alone: the rows :func:`load_shards` gives, without importing ``datasets`` nor writing its cache
    (the scoring engine's reader); DataError for shards without a row or that cannot be read."""
    _check_rows(shards, config)
    try:
        return pa.concat_tables([pq.read_table(shard, columns=columns, memory_map=True) for shard in shards])
    except (pa.ArrowException, OSError) as err:
        raise _unreadable(shards, err) from None


def _check_rows(shards: list[Path], config: str) -> None:
    """DataError for a config whose shards hold no row (an empty build); unreadable shards pass (the read names them)."""
    try:
        rows = sum(pq.read_metadata(shard).num_rows for shard in shards)
    except (OSError, ValueError):
        return
    if rows == 0:
        raise DataError(f"{shards[0].parent}: the {config!r} config has no rows (an empty build); rebuild it with "
                        "`lgip build` and families that produce variants of its captions (e.g. --families core)")


def _unreadable(shards: list[Path], cause: BaseException) -> DataError:
    return DataError(f"{shards[0].parent}: its parquet shards could not be read ({type(cause).__name__}: "
                     f"{str(cause).splitlines()[0][:300]}); rebuild the folder with `lgip build`")


class DatasetFiles:
    """An LGIP dataset resolved once for a run, so nothing on the way reads a fact twice: each config's
    shards found and checked when first asked for (:func:`config_files`), a config's fingerprint hashed
    once, the build record read once, and a stamp of a config's shards (name, size, times, inode) that
    tells cheaply whether they were rewritten since."""

    def __init__(self, dataset: str | Path):
        self.dataset = dataset
        self._shards: dict[str, list[Path]] = {}
        self._fingerprints: dict[str, str] = {}
        self._build_info: dict | None = None

    def shards(self, config: str) -> list[Path]:
        """The parquet shards of ``config`` (DataError naming the dataset and config when it has none)."""
        if config not in self._shards:
            self._shards[config] = config_files(self.dataset, config)
        return self._shards[config]

    def has(self, config: str) -> bool:
        """Whether the dataset holds ``config`` (the optional configs are written only when not empty)."""
        try:
            self.shards(config)
        except DataError:
            return False
        return True

    def load(self, config: str) -> datasets.Dataset:
        """The ``test`` split of ``config`` (:func:`load_shards`)."""
        return load_shards(self.shards(config), config)

    def table(self, config: str, columns: list[str] | None = None) -> pa.Table:
        """The ``columns`` of ``config`` as an Arrow table (:func:`read_table`)."""
        return read_table(self.shards(config), config, columns)

    def column_names(self, config: str) -> list[str]:
        """The columns of ``config`` (its first shard's schema)."""
        return pq.read_schema(self.shards(config)[0]).names

    def fingerprint(self, config: str = schema.PAIRS) -> str:
        """A content hash of ``config``'s shards (:func:`shards_fingerprint`), computed once."""
        if config not in self._fingerprints:
            self._fingerprints[config] = shards_fingerprint(self.shards(config))
        return self._fingerprints[config]

    def stamp(self, config: str) -> tuple:
        """What the files of ``config``'s folder are now: equal stamps, unchanged shards."""
        folder = self.shards(config)[0].parent
        return tuple((p.name, s.st_size, s.st_mtime_ns, s.st_ctime_ns, s.st_ino)
                     for p in sorted(folder.glob("*.parquet")) for s in [p.stat()])

    def build_info(self) -> dict:
        """The build record (:func:`build_info`), read once."""
        if self._build_info is None:
            self._build_info = build_info(self.dataset)
        return self._build_info


def _features(shard: Path, config: str) -> datasets.Features:
    """The features ``config`` loads with: the contract's, or the shard's own where they are the contract's
    of another version (:func:`schema.loads_as_written`: a folder built before or after a column changed loads as written)."""
    import datasets

    stored = datasets.Features.from_arrow_schema(pq.read_schema(shard))
    return stored if schema.loads_as_written(stored, config) else schema.FEATURES[config]


def config_files(dataset: str | Path, config: str) -> list[Path]:
    """The parquet shards of ``config``, checked by their footers: a built folder's own, or a Hub
    dataset's downloaded (``huggingface_hub``'s cache) to be read in pieces rather than loaded whole."""
    known = schema.CONFIGS + schema.OPTIONAL_CONFIGS
    if config not in known:
        raise DataError(f"unknown config {config!r}: an LGIP dataset has {', '.join(known)}")
    path = Path(dataset)
    if path.exists():
        return _local_shards(path, config)
    _check_hub_id(dataset)
    from huggingface_hub import snapshot_download

    try:
        folder = snapshot_download(str(dataset), repo_type="dataset", allow_patterns=[f"{config}/*.parquet"])
    except Exception as err:  # the Hub client raises many types; name the input and the cause
        raise DataError(f"could not download config {config!r} of Hub dataset {dataset!r}: {err}") from err
    return _local_shards(Path(folder), config)


def _check_hub_id(dataset: str | Path) -> None:
    """A dataset that is not an existing folder must be a Hub id (``org/name``)."""
    if "/" not in str(dataset):
        raise DataError(f"dataset {str(dataset)!r} is neither an existing folder nor a Hub id like 'org/lgip'")


def _local_shards(path: Path, config: str) -> list[Path]:
    shards = sorted((path / config).glob("*.parquet"))
    if not shards:
        raise DataError(
            f"{path} has no parquet files for config {config!r} (expected {path / config}/test-*.parquet); "
            "build it with `lgip build` or point --dataset at a folder made by it"
        )
    for shard in shards:
        _check_shard(shard)
    return shards


def _check_shard(shard: Path) -> None:
    """Refuse a truncated or foreign parquet file by its footer (cheap), naming the file."""
    try:
        pq.read_metadata(shard)
    except (pa.ArrowInvalid, OSError) as err:
        raise DataError(f"{shard}: not a readable parquet file ({err}); it may be truncated or corrupt: "
                        "rebuild the folder with `lgip build`") from None


def build_info(dataset: str | Path) -> dict:
    """The build record of a local folder (seed, lexicon version, counts); ``{}`` for a Hub id."""
    path = Path(dataset) / BUILD_INFO
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def fingerprint(dataset: str | Path, config: str = schema.PAIRS) -> str:
    """A content hash of a config's parquet shards (a Hub dataset's downloaded ones)."""
    return shards_fingerprint(config_files(dataset, config))


def shards_fingerprint(shards: list[Path]) -> str:
    """The first 16 hex digits of SHA-256 over each shard's name and SHA-256."""
    digest = hashlib.sha256()
    for shard in shards:
        digest.update(shard.name.encode())
        digest.update(hashlib.sha256(shard.read_bytes()).digest())
    return digest.hexdigest()[:16]
