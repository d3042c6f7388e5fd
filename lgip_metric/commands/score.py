"""``lgip score``: score every (image, text) row of an LGIP dataset with one model.

Runs under ``torchrun`` too (``torchrun --nproc_per_node=N -m lgip_metric.commands.score ...``):
each rank encodes a shard of the unique images and texts; rank 0 writes the files.
"""
from __future__ import annotations

import argparse
import sys

from lgip_dataset import schema


def add_arguments(parser: argparse.ArgumentParser,
                  out_help: str = "output folder for scores.parquet and provenance.json") -> None:
    from lgip_metric.models import PRECISIONS, REGISTRY

    parser.add_argument(
        "--model", required=True, type=_model_name,
        help=f"registry name ({', '.join(REGISTRY)}), any open_clip name (NAME/TAG, hf-hub:..., local-dir:...), "
        "or a transformers CLIP/SigLIP/SigLIP 2 id or folder; prefix random: for random weights",
    )
    parser.add_argument("--pretrained", help="open_clip pretrained tag or checkpoint file; 'none' = random weights")
    parser.add_argument("--dataset", default=None, help="LGIP dataset folder or Hub id (default: the embedded sample)")
    parser.add_argument("--config", default=schema.PAIRS, help="dataset config to score (default: %(default)s)")
    parser.add_argument("--out", required=True, help=out_help)
    parser.add_argument("--batch-size", type=int, default=64, help="images/texts per forward pass (default: %(default)s)")
    parser.add_argument("--precision", choices=PRECISIONS, default="fp32",
                        help="fp32 (default) or autocast fp16/bf16 (drift measured in benchmarks/bench_scoring.py)")
    parser.add_argument("--device", default=None, help="cpu, cuda, cuda:1 ... (default: CUDA when available)")
    parser.add_argument("--cache-dir", default=None,
                        help="embedding cache folder (default: $LGIP_CACHE_DIR or ~/.cache/lgip/embeddings); 'none' disables it")
    parser.add_argument("--num-workers", type=int, default=None, help="processes that decode images and tokenise texts (default: on a GPU, CPUs - 1; on the CPU, the CPUs torch's threads leave free; at most 16)")
    parser.add_argument("--limit", type=positive_int, default=None, help="score only the first N rows (N >= 1)")
    parser.add_argument("--no-tree-packing", dest="tree_packing", action="store_false",
                        help="encode every text whole; by default causal text towers (CLIP, OpenCLIP, EVA02) encode each "
                        "distinct token prefix once, with the same embeddings (recorded in provenance.json)")
    parser.add_argument("--validated", action="store_true",
                        help="keep only the validated rows: every paraphrase, the flips most of their blind judges "
                             "found valid (`lgip build --judged`), and the unlabelled core and hard flips; the other "
                             "flips are scored too and counted in provenance.json, not written (docs/judging.md)")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


def _model_name(value: str) -> str:
    """``--model`` as typed, once the registry knows how to resolve it (checked before torch is imported)."""
    from lgip_metric.models import ModelError, resolve_model

    try:
        resolve_model(value, pretrained="none")  # the name only: --pretrained is checked when the model loads
    except ModelError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return value


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1 (argparse names the argument when it is not)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def run(args: argparse.Namespace) -> int:
    from lgip_metric import api

    run = api.score(args.model, args.out, dataset=args.dataset, pretrained=args.pretrained, config=args.config,
                    batch_size=args.batch_size, precision=args.precision, device=args.device, cache_dir=args.cache_dir,
                    num_workers=args.num_workers, progress=not args.no_progress, limit=args.limit,
                    tree_packing=args.tree_packing, validated=args.validated)
    if api.is_main_rank():  # under torchrun only rank 0 reports
        print(run.provenance.summary(run.scores_path))
        if run.superseded:
            print(f"removed {', '.join(run.superseded)} of an earlier run in {args.out}: they described other scores")
    return 0


if __name__ == "__main__":
    from lgip_metric.cli import main

    sys.exit(main(["score", *sys.argv[1:]]))
