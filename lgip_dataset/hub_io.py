"""Load a config of an LGIP dataset from a local Hub-layout folder or a Hub repo id."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
from datasets.exceptions import DatasetGenerationError

from lgip_dataset import schema
from lgip_dataset.errors import DataError

BUILD_INFO = "lgip_build.json"


def load_config(dataset: str | Path, config: str = schema.PAIRS) -> datasets.Dataset:
    """Return the ``test`` split of ``config`` from a built folder or a Hub id (``org/lgip``).

    A local folder's shards are loaded as parquet files: ``datasets`` keys its cache of a folder
    by the folder's name alone, so a folder rebuilt in place would otherwise return stale rows.
    """
    known = schema.CONFIGS + schema.OPTIONAL_CONFIGS
    if config not in known:
        raise DataError(f"unknown config {config!r}: an LGIP dataset has {', '.join(known)}")
    path = Path(dataset)
    if path.exists():
        shards = _local_shards(path, config)
        try:
            return datasets.load_dataset(
                "parquet", data_files={schema.SPLIT: [str(s) for s in shards]}, split=schema.SPLIT,
                features=_features(shards[0], config),
            )
        except DatasetGenerationError as err:
            cause = err.__cause__ or err
            raise DataError(f"{path / config}: its parquet shards could not be read ({type(cause).__name__}: "
                            f"{str(cause).splitlines()[0][:300]}); rebuild the folder with `lgip build`") from None
    _check_hub_id(dataset)
    try:
        return datasets.load_dataset(str(dataset), config, split=schema.SPLIT)
    except Exception as err:  # the Hub client raises many types; name the input and the cause
        raise DataError(f"could not load config {config!r} of Hub dataset {dataset!r}: {err}") from err


def _features(shard: Path, config: str) -> datasets.Features:
    """The features ``config`` loads with: the contract's, or the shard's own where they are the contract's
    of another version (:func:`schema.loads_as_written`: a folder built before or after a column changed loads as written)."""
    stored = datasets.Features.from_arrow_schema(pq.read_schema(shard))
    return stored if schema.loads_as_written(stored, config) else schema.FEATURES[config]


def config_files(dataset: str | Path, config: str) -> list[Path]:
    """The parquet shards of ``config``, checked by their footers: a built folder's own, or a Hub
    dataset's downloaded (``huggingface_hub``'s cache) to be read in pieces rather than loaded whole."""
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
    """A content hash of a config's parquet shards (local folder) or the loaded table (Hub id)."""
    path = Path(dataset)
    digest = hashlib.sha256()
    if path.exists():
        for shard in sorted((path / config).glob("*.parquet")):
            digest.update(shard.name.encode())
            digest.update(hashlib.sha256(shard.read_bytes()).digest())
    else:
        digest.update(load_config(dataset, config)._fingerprint.encode())
    return digest.hexdigest()[:16]
