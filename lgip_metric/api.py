"""LGIP as a library: score a model, evaluate it, write its report.

These three functions are what ``lgip score``, ``lgip evaluate``, the Space's Run tab and the
benchmarks call. They hand objects along in memory and write each file once:
:func:`score` returns the engine's :class:`~lgip_metric.scoring.engine.ScoreRun` (score table and
:class:`~lgip_metric.results.provenance.Provenance` in memory), :func:`evaluate_model` computes the
statistics, blind baselines and group scores from that table and returns
:class:`~lgip_metric.results.record.Results` carrying it, and :func:`write_report` reads the scores from
those Results instead of from disk. Under ``torchrun`` every rank calls the same function; the
ranks other than 0 get None (rank 0 writes and returns).
"""
from __future__ import annotations

import json
import numbers
import os
from dataclasses import replace
from pathlib import Path
from typing import Sequence

import pandas as pd

from lgip_dataset import schema
from lgip_dataset.errors import DataError
from lgip_metric.results import record as results_file
from lgip_metric import stats
from lgip_metric.statistics import score_table
from lgip_metric.results.run_folder import claimed_output
from lgip_metric.results.record import Results


def is_main_rank() -> bool:
    """Whether this process writes the outputs (always, except on the ranks > 0 of ``torchrun``)."""
    return int(os.environ.get("RANK", "0")) == 0


def score(model, out: str | Path, *, dataset: str | Path | None = None, pretrained: str | None = None,
          config: str = schema.PAIRS, batch_size: int = 64, precision: str = "fp32", device: str | None = None,
          cache_dir: str | Path | None = None, num_workers: int | None = None, progress: bool = True,
          limit: int | None = None, tree_packing: bool = True, validated: bool = False,
          preprocess=None, tokenizer=None, processor=None, keep_inputs: bool = False):
    """Score every row of ``config`` of ``dataset`` (default: the embedded sample) with ``model``; ``validated``
    keeps only the rows the validated rule keeps (:func:`lgip_dataset.judging.validated`).

    ``model`` is a name or folder (:func:`~lgip_metric.models.resolve_model`), or a model object you hold: an
    open_clip model with its ``preprocess`` and ``tokenizer``, or a transformers CLIP / SigLIP / SigLIP 2 model
    with its ``processor`` (:func:`~lgip_metric.models.held_model`; it is put in eval mode on ``device``). The
    provenance's ``held`` block then says what is known of it and what is not.

    Claims ``out`` (one writer per folder), writes ``scores.parquet`` and ``provenance.json`` there
    (removing an earlier run's results.json and report that described other scores:
    :func:`~lgip_metric.results.record.remove_superseded`) and returns the
    :class:`~lgip_metric.scoring.engine.ScoreRun`: paths, ``provenance``, the score table (``frame``) and
    what it removed (``superseded``). Options are those of ``lgip score`` (see :func:`lgip_metric.scoring.engine.score_dataset`);
    ``keep_inputs`` keeps the decoded pixels and token ids in the cache for the models after this one.
    """
    from lgip_dataset import SAMPLE_DIR
    from lgip_metric.scoring.engine import score_dataset

    _check_options(model, limit, validated)
    model = _model(model, pretrained, preprocess, tokenizer, processor)
    with claimed_output(out, lock=is_main_rank()):
        run = score_dataset(model, dataset or SAMPLE_DIR, out, pretrained=pretrained, config=config,
                            batch_size=batch_size, precision=precision, device=device, cache_dir=cache_dir,
                            num_workers=num_workers, progress=progress, limit=limit, tree_packing=tree_packing,
                            validated=validated, keep_inputs=keep_inputs)
        if not is_main_rank():
            return run
        return replace(run, superseded=tuple(results_file.remove_superseded(out, run.provenance.scores["sha256"])))


def _check_options(model, limit, validated) -> None:
    """Refuse, before any work, what the CLI's own checks refuse: no model, a ``limit`` that is no whole number
    >= 1, a ``validated`` that is no bool (a string such as "no" would read as true)."""
    from lgip_metric.models import ModelError

    if model is None:
        raise ModelError("model=None: give a model name (such as 'clip-vit-b16'), a model folder, or a model object "
                         "with its preprocess= and tokenizer= (open_clip) or processor= (transformers)")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, numbers.Integral) or limit < 1):
        raise DataError(f"limit= must be a whole number at least 1 (or None for every row), got {limit!r}")
    if not isinstance(validated, bool):
        raise DataError(f"validated= must be True or False, got {validated!r}")


def _model(model, pretrained, preprocess, tokenizer, processor):
    """A model name as it is; a model object as the spec of it and the objects beside it (refused with a
    ``pretrained`` tag, which only a name takes)."""
    from lgip_metric.models import ModelError, held_model, resolve_model

    if not isinstance(model, str):
        return resolve_model(held_model(model, preprocess=preprocess, tokenizer=tokenizer, processor=processor),
                             pretrained)
    if any(part is not None for part in (preprocess, tokenizer, processor)):
        raise ModelError(f"preprocess=, tokenizer= and processor= go with a model object; the model {model!r} is a "
                         "name, which loads its own")
    return model


def evaluate_model(model, out: str | Path, *, dataset: str | Path | None = None, pretrained: str | None = None,
                   config: str = schema.PAIRS, batch_size: int = 64, precision: str = "fp32",
                   device: str | None = None, cache_dir: str | Path | None = None, num_workers: int | None = None,
                   progress: bool = True, limit: int | None = None, tree_packing: bool = True, bootstrap: int = 1000, seed: int = 0,
                   confidence: float = 0.95, pair_level: bool = False, extra_types: Sequence[str] = (),
                   validated: bool = False, preprocess=None, tokenizer=None, processor=None,
                   keep_inputs: bool = False) -> Results | None:
    """Score ``model`` (:func:`score`, same options: a name, or a model object with its ``preprocess`` and
    ``tokenizer`` or its ``processor``), compute the LGIP statistics, blind baselines and
    (when the dataset has groups) 2x2 group scores, write ``results.json`` into ``out`` once and
    return it as :class:`Results` holding the score table.

    ``bootstrap`` image resamples (0: no intervals) seeded by ``seed`` (also the seed of the
    LM-balanced flip set) at ``confidence``; ``pair_level`` weighs every row equally instead of every
    base pair; ``extra_types``: variant types of your own perturbations (every other type must be one
    LGIP declares). ``validated``: the statistics of the rows the validated rule keeps (the score file holds
    those), with results.json's ``validated_vs_all`` giving each flip type's rows and PR on all rows and on them.
    """
    _check_options(model, limit, validated)
    try:  # before any scoring: a bad option would otherwise surface only at the statistics
        stats.check_options(bootstrap, confidence)
    except stats.LGIPInputError as err:
        raise DataError(f"--bootstrap/--confidence: {err}") from None
    with claimed_output(out, lock=is_main_rank()):
        scored = score(model, out, dataset=dataset, pretrained=pretrained, config=config, batch_size=batch_size,
                       precision=precision, device=device, cache_dir=cache_dir, num_workers=num_workers,
                       progress=progress, limit=limit, tree_packing=tree_packing, validated=validated,
                       preprocess=preprocess, tokenizer=tokenizer, processor=processor, keep_inputs=keep_inputs)
        return _results(scored, out, limit=limit, batch_size=batch_size, precision=precision, device=device,
                        num_workers=num_workers, bootstrap=bootstrap, seed=seed, confidence=confidence,
                        pair_level=pair_level, extra_types=extra_types, validated=validated) if is_main_rank() else None


def _results(scored, out: str | Path, *, bootstrap: int, seed: int, confidence: float, pair_level: bool,
             extra_types: Sequence[str], **settings) -> Results:
    """The statistics, blind baselines and group scores of a :class:`~lgip_metric.scoring.engine.ScoreRun`'s
    table (and, with rows the validated rule dropped, the comparison of all rows with the kept ones), written
    to ``out``'s results.json (``settings``: the scoring options to record)."""
    from lgip_metric.statistics.blind import blind_report
    from lgip_metric.statistics.groups import group_scores
    from lgip_metric.statistics.validated import validated_vs_all

    options = dict(bootstrap=bootstrap, seed=seed, confidence=confidence, pair_level=pair_level)
    extra = {"extra_types": sorted(extra_types)} if extra_types else {}
    frame = scored.frame
    try:
        statistics = score_table.statistics(frame, **extra, **options)
        blind = blind_report(frame, balance_seed=seed, **extra, **options)
        compared = (validated_vs_all(pd.concat([frame, scored.dropped.to_pandas()], ignore_index=True), frame,
                                     pair_level=pair_level, **extra) if scored.dropped is not None else None)
    except stats.LGIPInputError as err:
        raise DataError(f"{scored.scores_path}: {err}") from None
    groups = group_scores(scored.groups_frame) if scored.groups_frame is not None else None
    out = Path(out)
    settings = {**settings, **options, **extra}
    record = results_file.build_results(statistics, scored.provenance, os.path.relpath(scored.scores_path, out),
                                        blind=blind, groups=groups, validated=compared, settings=settings)
    path = results_file.write_results(out / results_file.RESULTS_FILE, record)
    return Results(path, json.loads(json.dumps(record)), frame)


def write_report(results: Results | Sequence[Results], out: str | Path, *, paper: bool = False) -> dict[str, Path]:
    """Tables, frontier plot and qualitative page of one or more :class:`Results` (the first is model A
    of the paired comparisons; all must come from the same rows) into ``out``; returns the paths.
    ``paper=True`` adds the paper's quoted rows. Scores held by the Results are not read again."""
    from lgip_metric.report import write_report as write

    loaded = [results] if isinstance(results, Results) else list(results)
    if not loaded or not all(isinstance(one, Results) for one in loaded):
        raise DataError(f"write_report: give one Results or a non-empty list of them (what evaluate_model returns), "
                        f"got {results!r:.80}")
    results_file.check_comparable(loaded)
    for one in loaded:
        one.check_scores()
    return write(loaded, out, paper=paper)
