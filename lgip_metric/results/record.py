"""``results.json``: one model's LGIP statistics with the provenance they came from.

Written by ``lgip evaluate`` (atomically), read by ``lgip report``. Layout::

    format, version, created
    lgip_version, git_hash   the code that computed it (git_hash: the checkout's commit, else null)
    settings    the run's options: limit, batch_size, precision, device, num_workers, bootstrap, seed,
                confidence, pair_level, validated (a ``--limit 100`` run says so here, not only by its row count)
    metrics     flat ``name: value`` (as lm-evaluation-harness and CLIP_benchmark write them):
                ``E_inv``, ``E_sens``, ``PR`` (headline) and ``<metric>/<type>`` per variant type
    higher_is_better  ``name: bool`` for every key of ``metrics``
    model       name, model_id, backend, pretrained, random_weights, paper_row, label (a view of
                ``provenance``: ``Provenance.model_block``)
    dataset     source, config, fingerprint, seed, lexicon_version (``provenance``'s own block)
    averaging   "base_pair" | "pair_level", with averaging_description
    statistics  the dict of ``lgip_metric.stats.statistics`` (metrics, counts, intervals, per_type;
                headline over the paper's core types, n-way accuracy of the scrambles)
    blind       (optional) blind baselines of ``lgip_metric.statistics.blind.blind_report``: the n-gram LM's PR,
                the LM-balanced flip set with the model's PR on it, the text-only similarity
    groups      (optional) 2x2 text/image/group scores of ``lgip_metric.statistics.groups.group_scores``
    validated_vs_all  (``--validated`` runs) per flip type, its rows and PR on all rows and on those the
                validated rule keeps (``lgip_metric.statistics.validated.validated_vs_all``); the statistics
                and the score file are of the kept rows, the provenance's ``counts.validated`` counts the others
    scores      the score file, relative to results.json
    provenance  the scoring engine's full provenance record (``lgip_metric.results.provenance.Provenance``)

Version 1 files (no code version, settings or flat blocks) are still read; their ``metrics`` and
``higher_is_better`` are derived from ``statistics`` on load.

Two runs of the same model on the same dataset write the same file except for ``VOLATILE``: the
moment of writing, the durations, and how many embeddings came from the cache rather than the
model (a resumed run takes from the cache what the killed one encoded). ``without_volatile``
drops those fields, e.g. to compare a resumed run with an uninterrupted one.
"""
from __future__ import annotations

import json
import math
import shutil
import subprocess
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from lgip_dataset import __version__, schema
from lgip_dataset.errors import DataError
from lgip_dataset.files.atomic import atomic_write_text
from lgip_dataset.sources.statistics_captions import file_sha256
from lgip_metric import stats
from lgip_metric.results.provenance import Provenance

FORMAT, VERSION = "lgip-results", 2
READABLE_VERSIONS = (1, 2)
HIGHER_IS_BETTER = {"E_inv": False, "E_sens": True, "PR": True, stats.NWAY: True}
RESULTS_FILE = "results.json"
REPORT_DIR = "report"  # the report ``lgip evaluate`` writes beside its results.json


VOLATILE = (
    ("created",),
    ("provenance", "created"),
    ("provenance", "timing"),
    *(("provenance", "counts", name) for name in ("encoded_images", "encoded_texts", "cached_images", "cached_texts",
                                                                   "kept_pixels", "kept_tokens")),
)


def without_volatile(record: dict, prefix: tuple[str, ...] = ()) -> dict:
    """A deep copy of a results record (``prefix=("provenance",)``: a provenance record) without ``VOLATILE``."""
    record = json.loads(json.dumps(record))
    for path in VOLATILE:
        if path[: len(prefix)] != prefix or len(path) == len(prefix):
            continue
        *parents, last = path[len(prefix):]
        holder = record
        for key in parents:
            holder = holder.get(key, {}) if isinstance(holder, dict) else {}
        if isinstance(holder, dict):
            holder.pop(last, None)
    return record


def flat_metrics(statistics: dict) -> dict[str, float]:
    """The statistics as one flat ``name: value`` dict: the headline ``E_inv``, ``E_sens``, ``PR``, then
    ``<metric>/<type>`` for every variant type (``PR/object``, ``nway_accuracy/scramble_all``, ...)."""
    metrics = {metric: statistics[metric] for kind in stats.KINDS for metric in stats.METRICS[kind]}
    for type_, block in statistics["per_type"].items():
        metrics.update({f"{metric}/{type_}": block[metric] for metric in HIGHER_IS_BETTER if metric in block})
    return metrics


def higher_is_better(metrics: dict) -> dict[str, bool]:
    """Whether a larger value is better, for every key of :func:`flat_metrics`."""
    return {name: HIGHER_IS_BETTER[name.split("/")[0]] for name in metrics}


def git_hash() -> str | None:
    """The commit of the checkout this code runs from, or None (an installed package, no git)."""
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent,
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def build_results(statistics: dict, provenance: Provenance, scores_file: str, *, blind: dict | None = None,
                  groups: dict | None = None, validated: dict | None = None, settings: dict | None = None) -> dict:
    """The results.json record of one scored model (``blind``/``groups``/``validated_vs_all`` blocks when computed;
    ``settings``: the run's options, see the module docstring). The ``model`` and ``dataset``
    blocks are views of ``provenance`` for readers of the file."""
    metrics = flat_metrics(statistics)
    return {
        "format": FORMAT,
        "version": VERSION,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "lgip_version": __version__,
        "git_hash": git_hash(),
        "settings": settings or {},
        "metrics": metrics,
        "higher_is_better": higher_is_better(metrics),
        "model": provenance.model_block(),
        "dataset": provenance.dataset,
        "averaging": statistics["averaging"],
        "averaging_description": stats.AVERAGING[statistics["averaging"]],
        "statistics": statistics,
        **({"blind": blind} if blind is not None else {}),
        **({"groups": groups} if groups is not None else {}),
        **({"validated_vs_all": validated} if validated is not None else {}),
        "scores": scores_file,
        "provenance": provenance.to_dict(),
    }


def write_results(path: str | Path, results: dict) -> Path:
    """Write ``results`` as JSON atomically (a reader never sees half a file)."""
    atomic_write_text(path, json.dumps(results, indent=2, allow_nan=False) + "\n")
    return Path(path)


@dataclass(frozen=True)
class Results:
    """One model's results: the results.json record at ``path`` and, for results just computed,
    its score table in memory (``frame``), so nothing reads back what a run already holds."""

    path: Path
    data: dict
    frame: pd.DataFrame | None = None

    @property
    def provenance(self) -> Provenance:
        """The scoring run's provenance record."""
        return Provenance.from_dict(self.data["provenance"])

    @property
    def label(self) -> str:
        return self.data["model"]["label"]

    @property
    def random_weights(self) -> bool:
        return bool(self.data["model"].get("random_weights"))

    @property
    def statistics(self) -> dict:
        return self.data["statistics"]

    @property
    def metrics(self) -> dict[str, float]:
        """The flat metrics (derived from ``statistics`` for a version 1 file)."""
        return self.data.get("metrics") or flat_metrics(self.statistics)

    @property
    def fingerprint(self) -> str:
        return self.data["dataset"]["fingerprint"]

    @property
    def scores_path(self) -> Path:
        return self.path.parent / self.data["scores"]

    def check_scores(self) -> None:
        """Refuse a score file that is not this record's: named outside the results file's folder, missing,
        unreadable, without the score columns, or with other bytes than the SHA-256 the record holds (another
        run's scores written over them, or a truncated file). Nothing to check when the scores are in memory."""
        if self.frame is not None:
            return
        name = Path(self.data["scores"])
        if name.is_absolute() or ".." in name.parts:
            raise DataError(f"{self.path}: its \"scores\" names {self.data['scores']!r}, outside the folder of the "
                            "results file; a results file reads the score file beside it (rerun `lgip evaluate`)")
        try:
            names = pq.read_schema(self.scores_path).names
        except FileNotFoundError:
            raise DataError(f"{self.path}: its score file {self.scores_path} is missing; keep scores.parquet "
                            "beside results.json or rerun `lgip evaluate`") from None
        except (pa.ArrowInvalid, OSError) as err:
            raise DataError(f"{self.scores_path} (named by {self.path}) is not a readable parquet file ({err}); "
                            "rerun `lgip evaluate`") from None
        missing = [c for c in schema.SCORE_COLUMNS if c not in names]
        if missing:
            raise DataError(f"{self.scores_path} (named by {self.path}) lacks the columns {missing}; "
                            "rerun `lgip evaluate`")
        recorded = self.data.get("provenance", {}).get("scores", {}).get("sha256")
        if recorded and file_sha256(self.scores_path) != recorded:
            raise DataError(f"{self.scores_path} is not the score file {self.path} was computed from (its SHA-256 "
                            "differs from the one recorded there: another run wrote its scores into this folder, or "
                            "the file was changed); rerun `lgip evaluate` for this folder")

    def read_scores(self, columns: list[str]) -> pd.DataFrame:
        """``columns`` of the score table (in memory, else read from the score file; a file damaged
        past its footer is named, not a traceback)."""
        if self.frame is not None:
            return self.frame[columns]
        try:
            return pd.read_parquet(self.scores_path, columns=columns)
        except (pa.ArrowInvalid, OSError) as err:
            raise DataError(f"{self.scores_path} (named by {self.path}) could not be read ({err}); "
                            "rerun `lgip evaluate`") from None


def remove_superseded(folder: str | Path, scores_sha256: str) -> list[str]:
    """Remove the results.json of ``folder`` and the report made from it when they describe other scores than
    those whose SHA-256 is ``scores_sha256`` (an earlier run's, before new scores were written there);
    returns the names removed."""
    folder = Path(folder)
    path = folder / RESULTS_FILE
    try:
        recorded = json.loads(path.read_text(encoding="utf-8")).get("provenance", {}).get("scores", {}).get("sha256")
    except (OSError, ValueError, AttributeError):
        recorded = None  # no results file, or one no reader accepts: nothing it says can be taken for these scores
    if not path.exists() or recorded == scores_sha256:
        return []
    path.unlink()
    removed = [RESULTS_FILE]
    if (folder / REPORT_DIR).is_dir():
        shutil.rmtree(folder / REPORT_DIR)
        removed.append(REPORT_DIR + "/")
    return removed


def with_scores(results: Results) -> Results:
    """``results`` holding its score table, read from the score file once (unless already held)."""
    return results if results.frame is not None else replace(results, frame=results.read_scores(list(schema.SCORE_COLUMNS)))


def load_results(path: str | Path) -> Results:
    """Read and check one results file; errors name the file."""
    path = Path(path)
    if path.is_dir():
        path = path / RESULTS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: no such results file (make one with `lgip evaluate`)") from None
    except json.JSONDecodeError as err:
        raise DataError(f"{path}: not valid JSON ({err})") from None
    except UnicodeDecodeError as err:
        raise DataError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start}); rewrite the file with `lgip evaluate`") from None
    except IsADirectoryError:
        raise DataError(f"{path}: a folder, not a results file") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise DataError(f"{path}: not an LGIP results file (expected \"format\": \"{FORMAT}\")")
    if data.get("version") not in READABLE_VERSIONS:
        raise DataError(f"{path}: results version {data.get('version')!r}; this lgip reads versions "
                        f"{', '.join(map(str, READABLE_VERSIONS))}")
    _check_layout(path, data)
    return Results(path, data)


# What a report reads from a results file: top-level keys with their JSON types, and nested keys.
_LAYOUT = {"model": dict, "dataset": dict, "statistics": dict, "averaging": str, "scores": str}
_NESTED = {"model": ("label",), "dataset": ("fingerprint",),
           "statistics": ("E_inv", "E_sens", "PR", "counts", "per_type", "bootstrap")}


def _check_layout(path: Path, data: dict) -> None:
    """Refuse a results file that lacks what reports read, naming the key (before any table is written)."""
    for key, kind in _LAYOUT.items():
        value = data.get(key)
        if not isinstance(value, kind):
            state = "missing" if key not in data else f"{json.dumps(value)[:40]}"
            raise DataError(f"{path}: key {key!r} is {state}, expected a JSON {'object' if kind is dict else 'string'}; "
                            "rewrite the file with `lgip evaluate`")
        missing = [name for name in _NESTED.get(key, ()) if value.get(name) is None]
        if missing:
            raise DataError(f"{path}: {key!r} lacks {missing}; rewrite the file with `lgip evaluate`")
    if data["averaging"] not in stats.AVERAGING:
        raise DataError(f"{path}: averaging {data['averaging']!r} is none of {', '.join(stats.AVERAGING)}; rewrite the "
                        "file with `lgip evaluate`")
    statistics = data["statistics"]
    for metric in ("E_inv", "E_sens", "PR"):
        value = statistics[metric]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise DataError(f"{path}: statistics {metric!r} is {json.dumps(value)[:40]}, not a number; rewrite the file "
                            "with `lgip evaluate`")
    for key, kind in (("counts", dict), ("per_type", dict), ("bootstrap", dict)):
        if not isinstance(statistics[key], kind):
            raise DataError(f"{path}: statistics {key!r} is {json.dumps(statistics[key])[:40]}, not a JSON object; "
                            "rewrite the file with `lgip evaluate`")
    if data.get("blind") is not None and not isinstance(data["blind"], dict):
        raise DataError(f"{path}: key 'blind' is {json.dumps(data['blind'])[:40]}, expected a JSON object or null; "
                        "rewrite the file with `lgip evaluate`")
    blocks = [("statistics", statistics), *((("statistics.hard", statistics["hard"]),) if "hard" in statistics else ()),
              *((f"statistics.per_type.{t}", b) for t, b in statistics["per_type"].items())]
    for where, block in blocks:
        _check_figures(path, where, block)


# The range of each figure a report prints (an interval's ends lie in it too).
_RANGES = {"E_inv": (0.0, math.inf), "E_sens": (-math.inf, math.inf), "PR": (0.0, 1.0), stats.NWAY: (0.0, 1.0)}


def _check_figures(path: Path, where: str, block) -> None:
    """Every figure of a statistics block a finite number in its range, every interval [low, high] too,
    with low <= high (DataError naming the figure otherwise: a report would print it as it is)."""
    if not isinstance(block, dict) or not isinstance(block.get("intervals") or {}, dict):
        raise DataError(f"{path}: {where} is {json.dumps(block)[:40]}, not a statistics block with an 'intervals' "
                        "object; rewrite the file with `lgip evaluate`")
    intervals = block.get("intervals") or {}
    for metric, (low, high) in _RANGES.items():
        if block.get(metric) is not None:
            _check_number(path, f"{where} {metric}", block[metric], low, high)
        interval = intervals.get(metric)
        if interval is None:
            continue
        if not isinstance(interval, list) or len(interval) != 2:
            raise DataError(f"{path}: {where} {metric} interval is {json.dumps(interval)[:40]}, not [low, high]; "
                            "rewrite the file with `lgip evaluate`")
        for end in interval:
            _check_number(path, f"{where} {metric} interval", end, low, high)
        if interval[0] > interval[1]:
            raise DataError(f"{path}: {where} {metric} interval {json.dumps(interval)} runs backwards (low > high); "
                            "rewrite the file with `lgip evaluate`")


def _check_number(path: Path, what: str, value, low: float, high: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not low <= value <= high:
        raise DataError(f"{path}: {what} is {json.dumps(value)[:40]}, not a finite number from {low} to {high}; "
                        "rewrite the file with `lgip evaluate`")


def load_comparable(paths) -> list[Results]:
    """Load results files and refuse to put results from different datasets side by side."""
    return check_comparable([load_results(p) for p in paths])


def check_comparable(loaded: list[Results]) -> list[Results]:
    """``loaded``, once it is sure they were scored on the same rows of the same dataset with the same averaging."""
    first = loaded[0]
    for other in loaded[1:]:
        if other.fingerprint != first.fingerprint:
            raise DataError(
                f"cannot compare {first.path} and {other.path}: they were scored on different datasets "
                f"(fingerprint {first.fingerprint} of {first.data['dataset'].get('source')} vs "
                f"{other.fingerprint} of {other.data['dataset'].get('source')}); LGIP numbers are only "
                "comparable on the same rows"
            )
        rows = [r.data.get("provenance", {}).get("counts", {}).get("rows") for r in (first, other)]
        if None not in rows and rows[0] != rows[1]:
            raise DataError(
                f"cannot compare {first.path} and {other.path}: they scored different rows of the dataset "
                f"({rows[0]} vs {rows[1]} rows, e.g. different --limit); LGIP numbers are only comparable on the same rows"
            )
    validated = {bool(r.data["dataset"].get("validated")) for r in loaded}
    if len(validated) > 1:
        raise DataError("cannot compare results of the validated rows (`--validated`) with results of all rows: "
                        + ", ".join(f"{r.path} {'validated' if r.data['dataset'].get('validated') else 'all rows'}"
                                    for r in loaded) + "; evaluate them alike")
    averaging = {r.data["averaging"] for r in loaded}
    if len(averaging) > 1:
        raise DataError(
            "cannot compare results with different averaging: "
            + ", ".join(f"{r.path} uses {r.data['averaging']}" for r in loaded)
        )
    return loaded
