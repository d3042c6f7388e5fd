"""``lgip push-results``: write a results file's metrics into a model card's ``model-index``.

``--repo`` is a local folder (its ``README.md``) or model card file, or a Hub model repo id. The
YAML of the new entries (the metrics, the hard flips' block, every interval:
``lgip_metric.results.model_index``) is always printed; ``--dry-run`` stops there. A local card is
written in place (a folder without one gets a new card); a Hub card is updated with
``huggingface_hub.metadata_update`` (token from ``HF_TOKEN``). Results made with random weights are
never pushed to the Hub: a dry run to a Hub id prints them with that warning, and a local folder
takes them.
"""
from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

from lgip_dataset.about import REPO_ID


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", metavar="RESULTS", help="results.json (or a folder holding one) from `lgip evaluate`")
    parser.add_argument("--repo", required=True, metavar="MODEL_REPO",
                        help="model card to update: a local folder or README.md, or a Hub model repo id (ORG/NAME)")
    parser.add_argument("--dataset-id", default=None,
                        help="Hub id of the LGIP dataset the results were scored on (default: the results' dataset "
                             "source when it is a Hub id; needed when it was a local folder, e.g. the published "
                             f"{REPO_ID})")
    parser.add_argument("--dry-run", action="store_true", help="print the model-index YAML; write nothing")


def _dataset_id(results, given: str | None) -> str:
    from lgip_dataset.errors import DataError

    if given:
        return given
    source = str(results.data["dataset"].get("source") or "")
    if source.count("/") == 1 and not Path(source).exists() and not source.startswith((".", "/")):
        return source
    raise DataError(f"{results.path}: the results were scored on the local folder {source!r}; pass --dataset-id "
                    f"with the Hub id of that dataset so the model card can link to it (the published LGIP dataset: "
                    f"--dataset-id {REPO_ID})")


def run(args: argparse.Namespace) -> int:
    from huggingface_hub import metadata_update
    from huggingface_hub.repocard_data import eval_results_to_model_index

    from lgip_dataset.errors import DataError
    from lgip_metric.results.model_index import eval_results, local_card, merge, model_index_yaml, new_card
    from lgip_metric.results.record import load_results

    results = load_results(args.results)
    dataset_id = _dataset_id(results, args.dataset_id)
    entries = eval_results(results, dataset_id)
    model_name = results.data["model"]["model_id"]
    local = Path(args.repo).exists() or not re.fullmatch(r"[\w.-]+/[\w.-]+", args.repo) or args.repo.endswith(".md")
    refused = f"made with random weights ({results.label}); its numbers are meaningless and are never pushed to the " \
              "Hub: pass --repo a local folder (e.g. --repo model-card/) to write the card there"
    if results.random_weights:
        if not local and not args.dry_run:
            raise DataError(f"{results.path}: {refused}")
        print(f"!!! {results.label}: these numbers are meaningless (pipeline tests only)")
    print(f"model-index entries for {args.repo} ({len(entries)} metrics of {results.label}):\n")
    print(model_index_yaml(model_name, entries))
    if args.dry_run:
        if results.random_weights and not local:
            print(f"\n{args.repo} is a Hub id: these results were {refused}")
        print("\ndry run: nothing written")
        return 0
    if local:
        card, readme = local_card(Path(args.repo))
        readme.parent.mkdir(parents=True, exist_ok=True)
        merge(card or new_card(results, dataset_id), model_name, entries).save(readme)
        print(f"\nwrote {readme}" + ("" if card else " (a new model card)"))
        return 0
    if not os.environ.get("HF_TOKEN"):
        raise DataError("set HF_TOKEN to a Hub token with write access to the model repo (or pass --dry-run)")
    url = metadata_update(args.repo, {"model-index": eval_results_to_model_index(model_name, entries)},
                          overwrite=True, token=os.environ["HF_TOKEN"], commit_message=f"Add LGIP results of {results.label}")
    print(f"\nupdated {url}")
    return 0
