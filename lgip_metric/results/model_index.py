"""A results file as ``model-index`` entries of a model card (what the Hub shows as evaluation results).

The entries are ``huggingface_hub.EvalResult`` objects, one per figure of :func:`card_metrics`: each
flat metric of the results file (``E_inv``, ``E_sens``, ``PR`` and each per-type value), the hard
flips' block (``E_sens/hard``, ``PR/hard``), and the image-bootstrap interval of each as two more
metrics, ``<name>_ci_low`` and ``<name>_ci_high`` (the model-index has no interval field; their
``args`` give the bootstrap: resamples, seed, confidence, unit). All are on the LGIP dataset's Hub id,
config and split (with ``validated`` among the dataset's arguments for results of its validated rows,
``lgip evaluate --validated``). They are merged into a card the way ``huggingface_hub.metadata_update``
merges them: a result that describes the same metric on the same data is updated, any other is kept.
A folder without a card gets :func:`new_card`: the model's name, what LGIP is, the dataset's link and
the figures.
"""
from __future__ import annotations

import math
from pathlib import Path

from huggingface_hub import EvalResult, ModelCard, ModelCardData

from lgip_dataset import schema
from lgip_dataset.errors import DataError
from lgip_metric import stats
from lgip_metric.about import HOMEPAGE, REPO_ID
from lgip_metric.results.record import Results

TASK_TYPE = "zero-shot-image-classification"  # the Hub task of CLIP-style image-text models
TASK_NAME = "Image-text matching under caption paraphrases and flips (LGIP)"
SOURCE_NAME = "lgip evaluate"
CI_BOUNDS = ("_ci_low", "_ci_high")  # an interval's two ends, appended to the figure's name
CARD_TAGS = ["lgip", "vision-language", "evaluation"]


def card_metrics(results: Results) -> dict[str, float]:
    """Every figure a model card gets, ``name: value``: the flat metrics, the hard flips' block as
    ``<metric>/hard``, and after each figure with an interval its ``<name>_ci_low`` and ``<name>_ci_high``."""
    statistics = results.statistics
    figures = dict(results.metrics)
    hard = statistics.get(stats.HARD) or {}
    figures.update({f"{metric}/{stats.HARD}": hard[metric] for metric in stats.METRICS[stats.FLIP]
                    if hard.get(metric) is not None})
    values = {}
    for name, value in figures.items():
        values[name] = value
        metric, _, part = name.partition("/")
        block = statistics if not part else hard if part == stats.HARD else statistics["per_type"].get(part, {})
        interval = (block.get("intervals") or {}).get(metric)
        if interval is not None:
            values.update({name + bound: end for bound, end in zip(CI_BOUNDS, interval)})
    return values


def _metric_name(name: str, confidence: float) -> str:
    """``PR/object_ci_low`` -> ``LGIP PR (object), 95% interval, low``."""
    figure, bound = next(((name[: -len(b)], b) for b in CI_BOUNDS if name.endswith(b)), (name, None))
    metric, _, part = figure.partition("/")
    text = f"LGIP {metric}" + (f" ({'hard flips' if part == stats.HARD else part})" if part else "")
    return text + (f", {confidence:.0%} interval, {bound.rsplit('_', 1)[-1]}" if bound else "")


def eval_results(results: Results, dataset_id: str) -> list[EvalResult]:
    """One ``EvalResult`` per figure of :func:`card_metrics`, on the Hub dataset ``dataset_id``."""
    dataset = results.data["dataset"]
    figures = card_metrics(results)
    bad = {name: value for name, value in figures.items()
           if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)}
    if bad:
        name, value = next(iter(bad.items()))
        raise DataError(f"{results.path}: metric {name!r} is {value!r}, not a finite number ({len(bad)} such metric(s)); "
                        "a model card takes numbers only: rewrite the file with `lgip evaluate`")
    bootstrap = results.statistics.get("bootstrap") or {}
    confidence = bootstrap.get("confidence", 0.95)
    return [EvalResult(
        task_type=TASK_TYPE, task_name=TASK_NAME,
        dataset_type=dataset_id, dataset_name="LGIP", dataset_config=dataset.get("config"),
        dataset_split=schema.SPLIT, dataset_args={"fingerprint": dataset["fingerprint"],
                                                  **({"validated": True} if dataset.get("validated") else {})},
        metric_type=name, metric_value=value, metric_config=results.data["averaging"],
        metric_name=_metric_name(name, confidence),
        metric_args=dict(bootstrap) if name.endswith(CI_BOUNDS) else None,
        source_name=SOURCE_NAME, source_url=HOMEPAGE,
    ) for name, value in figures.items()]


def merge(card: ModelCard, model_name: str, new: list[EvalResult]) -> ModelCard:
    """Put ``new`` into ``card``'s model-index: update a result on the same metric and data, add the rest."""
    existing = card.data.eval_results or []
    for result in new:
        same = next((old for old in existing if result.is_equal_except_value(old)), None)
        if same is None:
            existing.append(result)
        else:
            same.metric_value = result.metric_value
    card.data.eval_results = existing
    card.data.model_name = card.data.model_name or model_name
    return card


def local_card(path: Path) -> tuple[ModelCard | None, Path]:
    """The model card of a local folder or ``*.md`` file (None if there is none yet) and the file it lives in;
    a path that does not exist and does not end in ``.md`` is a folder to hold ``README.md``."""
    readme = path if path.suffix.lower() == ".md" and not path.is_dir() else path / "README.md"
    return (ModelCard.load(readme) if readme.is_file() else None), readme


def new_card(results: Results, dataset_id: str) -> ModelCard:
    """A model card for a model that has none: its name, what LGIP is, the dataset's link and the figures
    (the model-index entries are added by :func:`merge`)."""
    model_name = results.data["model"]["model_id"]
    figures = card_metrics(results)
    confidence = (results.statistics.get("bootstrap") or {}).get("confidence", 0.95)
    rows = [f"| {name} | {value:.4f} | "
            + (f"[{figures[name + CI_BOUNDS[0]]:.4f}, {figures[name + CI_BOUNDS[1]]:.4f}]"
               if name + CI_BOUNDS[0] in figures else "—") + " |"
            for name, value in figures.items() if not name.endswith(CI_BOUNDS)]
    body = "\n\n".join([
        f"# {model_name}",
        f"LGIP results of **{results.label}**, written by `lgip push-results`"
        + (" — **made with random weights: these numbers are meaningless** (pipeline tests only)."
           if results.random_weights else "."),
        "LGIP (Language-Guided Invariance Probing) measures how a vision-language model's image-text similarity "
        "reacts to caption wording with the image fixed: it should stay the same under meaning-preserving "
        "paraphrases (E_inv, lower is better) and drop when one object, color or count word changes the meaning "
        "(E_sens and PR, higher is better; the hard flips, a word that fits the caption's context, have their "
        f"own block). Dataset: [{dataset_id}](https://huggingface.co/datasets/{dataset_id}) "
        f"(`load_dataset(\"{dataset_id}\", \"pairs\")`); metric: `evaluate.load(\"{REPO_ID}\")`.",
        f"| figure | value | {confidence:.0%} image-bootstrap interval |\n|---|---:|---|\n" + "\n".join(rows),
        f"The same figures are this card's `model-index` (the Hub's evaluation results), each interval as two "
        f"metrics, `<figure>{CI_BOUNDS[0]}` and `<figure>{CI_BOUNDS[1]}`; averaging: {results.data['averaging']}.",
    ])
    data = ModelCardData(model_name=model_name, datasets=[dataset_id], tags=list(CARD_TAGS))
    return ModelCard(f"---\n{data.to_yaml()}\n---\n\n{body}\n")


def model_index_yaml(model_name: str, entries: list[EvalResult]) -> str:
    """The YAML of ``entries`` as they appear under ``model-index:`` in a card header."""
    return ModelCardData(model_name=model_name, eval_results=entries).to_yaml()
