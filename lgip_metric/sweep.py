"""Model sweeps: several models evaluated on one dataset, one run folder each, one leaderboard across them.

:func:`evaluate_models` is what ``lgip evaluate --model A,B,C`` (or ``--models-file``) calls. It writes::

    OUT/<slug>/          one run per model: what ``lgip evaluate`` writes (results.json, scores.parquet,
                         provenance.json, report/)
    OUT/leaderboard.md   every run that finished, best PR first, beside the paper's quoted rows, with intervals
    OUT/leaderboard.csv  the same rows as CSV (:mod:`lgip_metric.report.leaderboard`)

``<slug>`` is :func:`model_slug` of the name as given. A model that fails (it cannot be loaded, or its
run is refused) is recorded with its error and the others still run; :attr:`Sweep.failed` names them.
With ``skip_existing`` a model whose run folder already holds a complete results.json of the same model,
dataset fingerprint and options (:data:`SAME_RESULTS`) is read instead of scored again. The models of a sweep
share their inputs through the cache: each image is decoded once per distinct image preprocessing and each
text tokenised once per distinct tokenizer (:mod:`lgip_metric.scoring.input_cache`).
"""
from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from lgip_dataset.errors import DataError, LGIPError
from lgip_metric import api
from lgip_metric.models import resolve_model
from lgip_metric.report.leaderboard import write_leaderboard
from lgip_metric.results.record import RESULTS_FILE, Results, check_comparable, load_results
from lgip_metric.results.run_folder import claimed_output

# the options of evaluate_model that change a run's numbers, as results.json's settings record them
# (batch size, device, workers and tree packing change how fast, not what is computed)
SAME_RESULTS = ("limit", "precision", "bootstrap", "seed", "confidence", "pair_level", "validated")
EVALUATED, SKIPPED, FAILED = "evaluated", "skipped", "failed"


@dataclass(frozen=True)
class SweepRun:
    """One model of a sweep: its run folder, what happened (evaluated, skipped, failed), its results or error."""

    model: str
    folder: Path
    status: str
    results: Results | None = None
    error: str | None = None


@dataclass(frozen=True)
class Sweep:
    """A sweep's runs in the order given, and the leaderboard's paths (empty when no run finished)."""

    runs: tuple[SweepRun, ...]
    leaderboard: dict[str, Path] = field(default_factory=dict)

    @property
    def failed(self) -> list[SweepRun]:
        return [run for run in self.runs if run.status == FAILED]


def model_slug(model: str) -> str:
    """The run folder's name of ``model``: the name with every run of characters outside ``[A-Za-z0-9._-]``
    made one ``-``; a local model folder by its own name (``local-dir:/models/mine`` -> ``local-dir-mine``)."""
    prefix, _, rest = model.rpartition(":")
    if rest and Path(rest).exists():
        model = f"{prefix}:{Path(rest).resolve().name}" if prefix else Path(rest).resolve().name
    return re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-.") or "model"


def read_models_file(path: str | Path) -> list[str]:
    """The model names of a file, one a line; blank lines and lines starting with ``#`` are skipped."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise DataError(f"--models-file {path}: cannot read it ({getattr(err, 'strerror', None) or err})") from None
    models = [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]
    if not models:
        raise DataError(f"--models-file {path}: names no model (one name a line; '#' starts a comment)")
    return models


def run_folders(models: Sequence[str], out: str | Path) -> dict[str, Path]:
    """Each model's run folder under ``out``; refused when a model is listed twice or two share a folder."""
    folders: dict[str, Path] = {}
    for model in models:
        folder = Path(out) / model_slug(model)
        clash = next((other for other, taken in folders.items() if taken == folder), None)
        if clash is not None:
            what = "is listed twice" if clash == model else f"and {clash!r} would share the run folder {folder}"
            raise DataError(f"model {model!r} {what}; list each model once, and rename a local model folder whose "
                            "name another model's folder takes")
        folders[model] = folder
    return folders


def results_paths(paths: Sequence[str | Path]) -> list[Path]:
    """Results files of ``paths``: a results file or a run folder as given, a sweep's ``--out`` (a folder of run
    folders) as the results.json of each of its runs, by folder name (a folder holding neither as given: its
    reader names the missing file)."""
    found = []
    for path in map(Path, paths):
        runs = [] if not path.is_dir() or (path / RESULTS_FILE).exists() else sorted(
            p / RESULTS_FILE for p in path.iterdir() if (p / RESULTS_FILE).is_file())
        found += runs or [path]
    return found


def _options(options: dict) -> dict:
    """``options`` over evaluate_model's defaults: every option a run records."""
    defaults = {name: p.default for name, p in inspect.signature(api.evaluate_model).parameters.items()
                if p.default is not inspect.Parameter.empty}
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        raise TypeError(f"evaluate_models got options evaluate_model does not take: {', '.join(unknown)}")
    return {**defaults, **options}


def existing_run(model: str, folder: str | Path, **options) -> Results | None:
    """The results in ``folder`` when they are a complete run of ``model`` with these evaluate_model
    ``options`` on the same dataset (same fingerprint and config): a results.json every reader accepts,
    its score file there and unchanged, the same model id and weights and the same :data:`SAME_RESULTS`
    settings. None otherwise (no such file, or one of another run: it is scored again)."""
    from lgip_dataset import SAMPLE_DIR
    from lgip_dataset.files.hub_io import fingerprint

    options = _options(options)
    if not (Path(folder) / RESULTS_FILE).is_file():
        return None
    try:
        results = load_results(folder)
        results.check_scores()
    except LGIPError:
        return None
    spec = resolve_model(model, pretrained=options["pretrained"])
    recorded = results.data["model"]
    settings = results.data.get("settings", {})
    extra = sorted(options["extra_types"] or ())
    same = (recorded.get("model_id") == spec.model_id and bool(recorded.get("random_weights")) == spec.random_weights
            and results.data["dataset"].get("config") == options["config"]
            and all(settings.get(name) == options[name] for name in SAME_RESULTS)
            and settings.get("extra_types", []) == extra)
    if not same or results.fingerprint != fingerprint(options["dataset"] or SAMPLE_DIR, options["config"]):
        return None
    return results


def evaluate_models(models: Sequence[str], out: str | Path, *, skip_existing: bool = False, paper: bool = True,
                    on_run: Callable[[SweepRun], None] | None = None, **options) -> Sweep:
    """Evaluate each of ``models`` into ``out/<model_slug>`` (:func:`lgip_metric.api.evaluate_model` with
    ``options``, then its report, with the paper's quoted rows when ``paper``), then write ``out/leaderboard.md``
    and ``out/leaderboard.csv`` over every run that finished.

    A model that fails is recorded with its error (an :class:`~lgip_dataset.errors.LGIPError`, e.g. weights
    that cannot be loaded) and the next one runs. ``skip_existing``: a model whose folder holds a complete run
    with the same options (:func:`existing_run`) is read, not scored again. ``on_run`` is called with each
    :class:`SweepRun` as it ends. Under ``torchrun`` every rank scores and rank 0 writes (the others get no runs).
    Every name is resolved, and ``out`` claimed, before any model runs: an unknown name stops the sweep at once.
    """
    folders = run_folders(models, out)
    pretrained = _options(options)["pretrained"]
    for model in folders:
        resolve_model(model, pretrained=pretrained)  # a ModelError naming the model, before any scoring
    main = api.is_main_rank()
    runs = []
    if len(folders) > 1:  # each image decoded and each text tokenised once per distinct preprocessing and tokenizer
        options = {**options, "keep_inputs": True}
    with claimed_output(out, lock=main):
        for model, folder in folders.items():
            run = _run_one(model, folder, skip_existing, paper, options)
            if run is None:  # a rank > 0 of torchrun: rank 0 writes
                continue
            runs.append(run)
            if on_run is not None:
                on_run(run)
        finished = [run.results for run in runs if run.results is not None]
        if not finished or not main:
            return Sweep(tuple(runs))
        return Sweep(tuple(runs), write_leaderboard(check_comparable(finished), out))


def _run_one(model: str, folder: Path, skip_existing: bool, paper: bool, options: dict) -> SweepRun | None:
    """One model of a sweep: read from its folder, or evaluated and reported there, or failed with its error."""
    results = existing_run(model, folder, **options) if skip_existing else None
    if results is not None:
        return SweepRun(model, folder, SKIPPED, results)
    try:
        with claimed_output(folder, lock=api.is_main_rank()):  # held until the report is written
            results = api.evaluate_model(model, folder, **options)
            if results is None:
                return None
            api.write_report(results, folder / "report", paper=paper)
    except LGIPError as err:
        return SweepRun(model, folder, FAILED, error=str(err))
    return SweepRun(model, folder, EVALUATED, results)
