"""A results file as ``model-index`` entries of a model card (what the Hub shows as evaluation results).

The entries are ``huggingface_hub.EvalResult`` objects: one per flat metric of the results file
(``E_inv``, ``E_sens``, ``PR`` and each per-type value), on the LGIP dataset's Hub id, config and
split (with ``validated`` among the dataset's arguments for results of its validated rows, ``lgip evaluate
--validated``). They are merged into a card the way ``huggingface_hub.metadata_update`` merges them: a
result that describes the same metric on the same data is updated, any other is kept.
"""
from __future__ import annotations

import math
from pathlib import Path

from huggingface_hub import EvalResult, ModelCard, ModelCardData

from lgip_dataset import schema
from lgip_dataset.errors import DataError
from lgip_metric.about import HOMEPAGE
from lgip_metric.results.record import Results

TASK_TYPE = "zero-shot-image-classification"  # the Hub task of CLIP-style image-text models
TASK_NAME = "Image-text matching under caption paraphrases and flips (LGIP)"
SOURCE_NAME = "lgip evaluate"


def eval_results(results: Results, dataset_id: str) -> list[EvalResult]:
    """One ``EvalResult`` per flat metric of ``results``, on the Hub dataset ``dataset_id``."""
    dataset = results.data["dataset"]
    bad = {name: value for name, value in results.metrics.items()
           if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)}
    if bad:
        name, value = next(iter(bad.items()))
        raise DataError(f"{results.path}: metric {name!r} is {value!r}, not a finite number ({len(bad)} such metric(s)); "
                        "a model card takes numbers only: rewrite the file with `lgip evaluate`")
    entries = []
    for name, value in results.metrics.items():
        metric, _, type_ = name.partition("/")
        entries.append(EvalResult(
            task_type=TASK_TYPE, task_name=TASK_NAME,
            dataset_type=dataset_id, dataset_name="LGIP", dataset_config=dataset.get("config"),
            dataset_split=schema.SPLIT, dataset_args={"fingerprint": dataset["fingerprint"],
                                                      **({"validated": True} if dataset.get("validated") else {})},
            metric_type=name, metric_value=value, metric_config=results.data["averaging"],
            metric_name=f"LGIP {metric}" + (f" ({type_})" if type_ else ""),
            source_name=SOURCE_NAME, source_url=HOMEPAGE,
        ))
    return entries


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


def local_card(path: Path) -> tuple[ModelCard, Path]:
    """The model card of a local folder or README.md (a new one from the template if there is none)."""
    readme = path / "README.md" if path.is_dir() else path
    card = ModelCard.load(readme) if readme.is_file() else ModelCard.from_template(ModelCardData())
    return card, readme


def model_index_yaml(model_name: str, entries: list[EvalResult]) -> str:
    """The YAML of ``entries`` as they appear under ``model-index:`` in a card header."""
    return ModelCardData(model_name=model_name, eval_results=entries).to_yaml()
