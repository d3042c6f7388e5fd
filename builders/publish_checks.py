"""Checks ``publish.py`` runs before anything leaves the machine: cards, shards, results.

Each ``check_*`` function returns the lines it verified (printed by ``--dry-run``) and raises
:class:`PublishError` listing every problem it found, so one run shows all that must be fixed.
"""
from __future__ import annotations

import fnmatch
import json
import re
from importlib.metadata import version
from pathlib import Path

import pyarrow.parquet as pq
from huggingface_hub import DatasetCard, SpaceCard
from packaging.requirements import InvalidRequirement, Requirement

from lgip_dataset import schema
from lgip_dataset.errors import LGIPError
from lgip_dataset.files.hub_io import BUILD_INFO
from lgip_metric.results.record import load_comparable, load_results

HUB_COLORS = {"red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray"}
SPACE_KEYS = ("title", "emoji", "colorFrom", "colorTo", "sdk", "sdk_version", "python_version", "app_file",
              "license", "models", "datasets", "tags")
METRIC_KEYS = ("title", "emoji", "colorFrom", "colorTo", "sdk", "sdk_version", "python_version", "app_file", "tags",
               "description")
# The pinned requirements (numpy 2.4, pandas 3.1, scipy 1.17, torch, transformers) need at least this
# Python; the Hub's default is older, so a Space header must name it.
MIN_PYTHON = (3, 11)
METRIC_TAGS = {"evaluate", "metric"}
UNFINISHED = ("*.tmp", "build_key.json")  # left only by an interrupted `lgip build`
GRADIO_VERSION = version("gradio")  # the installed gradio the apps are tested with (read without importing it)


class PublishError(LGIPError):
    """Something would be published wrong; the message lists every problem found."""


class _Problems(list):
    def raise_if_any(self, what: str) -> None:
        if self:
            raise PublishError(f"refusing to publish {what}:\n" + "\n".join(f"  - {p}" for p in self))


# --------------------------------------------------------------------------------------------
# Dataset


def check_dataset(folder: Path) -> list[str]:
    """A built LGIP folder: card configs match the shards, images embedded, nothing skipped away."""
    problems, notes = _Problems(), []
    card_path = folder / "README.md"
    if not card_path.is_file():
        raise PublishError(f"refusing to publish dataset {folder}: no README.md dataset card (build it with `lgip build`)")
    data = _card_data(DatasetCard, card_path, problems)
    shards = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.parquet"))
    configs = {c.get("config_name"): c for c in data.get("configs") or []}
    missing = [name for name in schema.CONFIGS if name not in configs]
    if schema.IMAGES in missing:
        problems.append("no `images` config: a text-only build (no --images) cannot be published; rebuild with the images")
    if missing:
        problems.append(f"the card's `configs:` lack {', '.join(missing)} (expected {', '.join(schema.CONFIGS)})")
    files = _match_shards(folder, configs, shards, problems)
    rows = {name: sum(pq.ParquetFile(p).metadata.num_rows for p in paths) for name, paths in files.items()}
    for info in _as_list(data.get("dataset_info")):
        declared = sum(s.get("num_examples", 0) for s in info.get("splits") or [])
        if info.get("config_name") in rows and declared != rows[info["config_name"]]:
            problems.append(f"config {info['config_name']!r}: the card says {declared:,} rows, the shards hold "
                            f"{rows[info['config_name']]:,}")
    if not data.get("license"):
        problems.append("the card has no `license`")
    for pattern in UNFINISHED:
        for leftover in folder.rglob(pattern):
            problems.append(f"{leftover.relative_to(folder)} is left from an interrupted build; rerun `lgip build`")
    build = _build_info(folder, problems)
    if schema.IMAGES in configs:
        _check_images(files, rows, build, problems)
    problems.raise_if_any(f"dataset {folder}")
    notes.append(f"card YAML parses; configs {', '.join(configs)} match {len(shards)} parquet shard(s), "
                 "row counts equal the card's dataset_info")
    notes.append(f"{rows.get(schema.IMAGES, 0):,} images embedded; every pairs row's image is present; "
                 f"{build.get('counts', {}).get('skipped', 0):,} input rows skipped at build time (listed in the card)")
    return notes


def _match_shards(folder: Path, configs: dict, shards: list[str], problems: list) -> dict[str, list[Path]]:
    """The shards each config's ``data_files`` patterns match; unmatched patterns and orphan shards are problems."""
    files: dict[str, list[Path]] = {}
    for name, config in configs.items():
        for pattern in _data_file_patterns(config):
            hits = [s for s in shards if fnmatch.fnmatchcase(s, pattern)]
            if not hits:
                problems.append(f"config {name!r}: data_files {pattern!r} matches no parquet shard in {folder}")
            files.setdefault(name, []).extend(folder / hit for hit in hits)
    covered = {p.relative_to(folder).as_posix() for paths in files.values() for p in paths}
    problems.extend(f"{orphan} is not covered by any config's data_files" for orphan in sorted(set(shards) - covered))
    return files


def _check_images(files: dict[str, list[Path]], rows: dict, build: dict, problems: list) -> None:
    if not rows.get(schema.IMAGES):
        problems.append("the images config holds no image: every image was skipped at build time "
                        f"({', '.join(build.get('skips', {})) or 'see lgip_build.json'})")
        return
    expected = build.get("counts", {}).get("images")
    if expected is not None and expected != rows[schema.IMAGES]:
        problems.append(f"{BUILD_INFO} counts {expected:,} images, the images config holds {rows[schema.IMAGES]:,}")
    if schema.PAIRS in rows:
        images = set(_column(files[schema.IMAGES], "image_id"))
        lost = set(_column(files[schema.PAIRS], "image_id")) - images
        if lost:
            problems.append(f"{len(lost):,} image id(s) used by pairs rows are missing from the images config "
                            f"(e.g. {sorted(lost)[:3]})")


def _build_info(folder: Path, problems: list) -> dict:
    path = folder / BUILD_INFO
    if not path.is_file():
        problems.append(f"no {BUILD_INFO}: the folder was not made by `lgip build` (no seed, lexicon version, counts)")
        return {}
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        problems.append(f"{BUILD_INFO} is not valid JSON: {err}")
        return {}
    for key in ("lexicon_version", "seed", "source", "counts"):
        if key not in info:
            problems.append(f"{BUILD_INFO} lacks {key!r}")
    return info


def _data_file_patterns(config: dict) -> list[str]:
    patterns = []
    for entry in _as_list(config.get("data_files")):
        paths = entry.get("path") if isinstance(entry, dict) else entry
        patterns += _as_list(paths)
    return patterns


def _column(paths: list[Path], column: str) -> list:
    return [v for p in paths for v in pq.read_table(p, columns=[column]).column(column).to_pylist()]


def _as_list(value) -> list:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


# --------------------------------------------------------------------------------------------
# Space cards (the demo and the metric module)


def _card_data(card_type, path: Path, problems: list) -> dict:
    try:
        return card_type.load(path).data.to_dict()
    except Exception as err:  # the YAML parser raises several types; report the file and the cause
        problems.append(f"{path.name}: the YAML header does not parse: {err}")
        return {}


def check_space_card(folder: Path, required: tuple[str, ...], problems: list) -> dict:
    """The Space YAML header of ``folder/README.md``: required keys, Hub colors, Gradio version, app file."""
    path = folder / "README.md"
    if not path.is_file():
        problems.append(f"{folder}: no README.md with the Space YAML header")
        return {}
    data = _card_data(SpaceCard, path, problems)
    for key in required:
        if data.get(key) in (None, "", []):
            problems.append(f"{path}: the YAML header lacks `{key}`")
    if data.get("sdk") not in (None, "gradio"):
        problems.append(f"{path}: sdk is {data['sdk']!r}, expected 'gradio'")
    if data.get("sdk_version") and str(data["sdk_version"]) != GRADIO_VERSION:
        problems.append(f"{path}: sdk_version {data['sdk_version']} differs from the installed gradio "
                        f"{GRADIO_VERSION} the app is tested with")
    for key in ("colorFrom", "colorTo"):
        if data.get(key) and data[key] not in HUB_COLORS:
            problems.append(f"{path}: {key} {data[key]!r} is not a Hub color ({', '.join(sorted(HUB_COLORS))})")
    _check_python_version(path, data.get("python_version"), problems)
    if data.get("app_file") and not (folder / data["app_file"]).is_file():
        problems.append(f"{path}: app_file {data['app_file']!r} is not in the upload")
    return data


def _check_python_version(path: Path, value, problems: list) -> None:
    """``python_version`` is a quoted "3.N" string (an unquoted 3.10 reads as 3.1) of at least ``MIN_PYTHON``."""
    if value in (None, ""):
        return  # reported as a missing key
    minimum = ".".join(map(str, MIN_PYTHON))
    if not isinstance(value, str) or not re.fullmatch(r"3\.\d+", value):
        problems.append(f"{path}: python_version must be a quoted \"3.N\" string, e.g. \"{minimum}\"; got {value!r}")
    elif tuple(int(x) for x in value.split(".")) < MIN_PYTHON:
        problems.append(f"{path}: python_version {value} is older than the {minimum} the pinned requirements need")


def check_requirements(path: Path, problems: list) -> list[Requirement]:
    """Every line of a Space ``requirements.txt`` is a requirement; gradio, if named, matches the SDK."""
    if not path.is_file():
        problems.append(f"{path.parent}: no requirements.txt")
        return []
    requirements = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            requirements.append(Requirement(line))
        except InvalidRequirement as err:
            problems.append(f"{path}:{number}: {err}")
    for req in requirements:
        if req.name == "gradio" and not req.specifier.contains(GRADIO_VERSION):
            problems.append(f"{path}: gradio{req.specifier} conflicts with sdk_version {GRADIO_VERSION}")
    return requirements


def check_metric(folder: Path, script: str, repo_id: str) -> list[str]:
    """The staged metric Space ``repo_id``: card header, the card's ``evaluate.load("repo_id")``,
    requirements, and the module loads with ``evaluate``."""
    import evaluate

    problems = _Problems()
    data = check_space_card(folder, METRIC_KEYS, problems)
    if data and not METRIC_TAGS <= set(data.get("tags") or []):
        problems.append(f"{folder / 'README.md'}: tags must include {', '.join(sorted(METRIC_TAGS))} "
                        "(that is how the Hub lists evaluate modules)")
    if data and f'evaluate.load("{repo_id}")' not in (folder / "README.md").read_text(encoding="utf-8"):
        problems.append(f'{folder / "README.md"}: the card does not show evaluate.load("{repo_id}"), the line that '
                        "loads the module once it is published")
    check_requirements(folder / "requirements.txt", problems)
    if not problems:
        try:
            evaluate.load(str(folder / script))
        except Exception as err:  # whatever evaluate raises, the module would be broken on the Hub
            problems.append(f"evaluate.load({script!r}) fails on the staged files: {err}")
    problems.raise_if_any(f"metric module {folder}")
    return [f"README.md header has {', '.join(METRIC_KEYS)}; sdk_version = gradio {GRADIO_VERSION}; "
            f"python_version = {data['python_version']}; the card shows evaluate.load(\"{repo_id}\")",
            f"evaluate.load loads the staged {script} with its local imports"]


def check_space(folder: Path, model_ids: set[str]) -> list[str]:
    """The staged demo Space: card header (models = the registry's Hub ids), requirements, results."""
    problems = _Problems()
    data = check_space_card(folder, SPACE_KEYS, problems)
    listed = set(data.get("models") or [])
    if data and listed != model_ids:
        problems.append(f"{folder / 'README.md'}: `models:` must list the registry's Hub ids; missing "
                        f"{sorted(model_ids - listed)}, unknown {sorted(listed - model_ids)}")
    check_requirements(folder / "requirements.txt", problems)
    results = sorted((folder / "results").glob("*.json"))
    check_results(results, problems)
    problems.raise_if_any(f"Space {folder}")
    return [f"README.md header has {', '.join(SPACE_KEYS)}; sdk_version = gradio {GRADIO_VERSION}; "
            f"python_version = {data['python_version']}; models = the {len(model_ids)} registry Hub ids",
            f"{len(results)} results file(s), none made with random weights, all on one dataset"]


def check_results(paths: list[Path], problems: list) -> None:
    """Shipped leaderboard results: real weights only, and comparable by the leaderboard's own rule
    (``results.load_comparable``: same dataset, same rows, same averaging)."""
    loaded = []
    for path in paths:
        try:
            results = load_results(path)
        except LGIPError as err:
            problems.append(f"results/{path.name}: {err}")
            continue
        if results.random_weights:
            problems.append(f"results/{path.name}: made with random weights ({results.label}); its numbers are "
                            "meaningless and must not be published")
        loaded.append(results)
    if len(loaded) == len(paths) > 1:
        try:
            load_comparable(paths)
        except LGIPError as err:
            problems.append(f"results/ cannot share one leaderboard: {err}")
