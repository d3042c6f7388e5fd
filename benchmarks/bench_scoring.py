"""Benchmark the scoring engine against a naive per-triple reference and the forward-pass floors.

    python benchmarks/bench_scoring.py [--model random:clip-vit-b16] [--dataset DIR] [--rows N]
                                       [--naive-rows 24] [--batch-size 32] [--device cpu] [--drift bf16 fp16]
                                       [--quick] [--repeat 3]

On one model and workload, in one process, it times
  (a) the engine (``score_dataset``: unique images/texts, batched, workers; encode + score time), with
      tree packing (each distinct token prefix of a causal text tower encoded once; the default) and
      without it (``--no-tree-packing``: every unique text encoded whole, the engine before packing),
  (b) a naive reference that decodes/preprocesses the image and tokenises and encodes the image
      and both captions for every (image, caption, variant) row, one row at a time
      (on ``--naive-rows`` rows; its rate does not depend on how many), and
  (c) the floors: pure forward time of the engine's unique encodes in the engine's batches and under its
      heap settings (``scoring_heap``), inputs already decoded, tokenised and packed in memory: the old
      floor (every unique text whole, in length-sorted batches) and the new one (the engine's tree-packed
      batches),
and prints pairs/s of each with the ratios engine/naive and engine/floor, the text tokens each floor
computes per token of the unique texts, the text phase of both engines and floors side by side, the
engine's images/s and texts/s, the time a paper-scale run (40,000 images, this workload's texts per
image) would take at those rates, and how far the packed engine's scores are from the unpacked one's
(largest difference, decisions that differ). ``--drift`` re-runs the engine under autocast and prints the
change of E_inv, E_sens and PR against fp32, the same comparison of scores, the same projection at that
precision, and the new floor at it. ``--quick`` keeps only the packed engine and the new floor (with
``--drift``): minutes less on a ViT-L. The floors' inputs are prepared once and shared by every precision.
``--repeat N`` runs the engines and the text floors N times, packed and unpacked alternating, and prints
the medians beside every round's time (a loaded machine moves one run by 15% and more).

Default workload: the embedded sample with a real-size open_clip ViT-B/16 with random weights.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from lgip_dataset import SAMPLE_DIR, schema
from lgip_dataset.files.hub_io import DatasetFiles
from lgip_dataset.files.images import ImageError
from lgip_metric import api
from lgip_metric.statistics import score_table
from lgip_metric.scoring.heap import scoring_heap
from lgip_metric.scoring.image_data import cell_image, collate, image_batch_size
from lgip_metric.models import load_model
from lgip_metric.models.base import one_ahead
from lgip_metric.models.factory import loader_workers
from lgip_metric.scoring.score_inputs import image_positions, read_rows, unique_texts
from lgip_metric.scoring.distributed import Context
from lgip_metric.scoring.texts import batch_inputs, plan_batches
from script_args import folder_or_hub_id, non_negative, positive, run

PAPER_IMAGES = 40_000


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="random:clip-vit-b16", help="any lgip model name (default: %(default)s)")
    parser.add_argument("--pretrained", default=None)
    parser.add_argument("--dataset", type=folder_or_hub_id, default=str(SAMPLE_DIR),
                        help="LGIP folder or Hub id (default: embedded sample)")
    parser.add_argument("--rows", type=positive, default=None, help="score only the first N rows (default: all)")
    parser.add_argument("--naive-rows", type=non_negative, default=24,
                        help="rows timed for the naive reference (0: no naive reference)")
    parser.add_argument("--batch-size", type=positive, default=32)
    parser.add_argument("--device", default=None)
    parser.add_argument("--num-workers", type=non_negative, default=None)
    parser.add_argument("--drift", nargs="*", default=[], choices=["fp16", "bf16"], help="autocast precisions to compare")
    parser.add_argument("--repeat", type=positive, default=1,
                        help="rounds of the engines and text floors, packed and unpacked alternating in each; the "
                             "medians are printed (the machine's load moves one run's time by 15%% and more)")
    parser.add_argument("--quick", action="store_true",
                        help="only the tree-packed engine and the new floor (and --drift): no unpacked engine, naive "
                             "loop or old floor; what fits a short GPU lease")
    args = parser.parse_args()
    from lgip_metric.models import resolve_model
    from lgip_metric.models.factory import select_device

    resolve_model(args.model, args.pretrained)  # an unknown model or device: refused before the work
    select_device(args.device)
    return args


def engine(args, out: Path, precision: str = "fp32", tree_packing: bool = True):
    """Run the engine without a cache; return the run and its encode+score seconds."""
    run = api.score(args.model, out, dataset=args.dataset, pretrained=args.pretrained, batch_size=args.batch_size,
                    precision=precision, device=args.device, cache_dir="none", num_workers=args.num_workers,
                    progress=False, limit=args.rows, tree_packing=tree_packing)
    timing = run.provenance.timing
    return run, timing["images_s"] + timing["texts_s"] + timing["score_s"]


def inputs(args):
    """Rows and the undecoded image cells by id, read with the engine's own input helpers."""
    files = DatasetFiles(args.dataset)
    rows = read_rows(files, schema.PAIRS, args.rows)
    image_ids = np.unique(rows.column("image_id").to_numpy())
    source, positions = image_positions(files, image_ids)
    return rows, {int(i): source.cell(p) for i, p in zip(image_ids, positions) if p >= 0}


def naive(encoder, rows, cells, n_rows: int) -> float:
    """Seconds per row: decode + preprocess + encode the image, tokenise + encode both texts, one row at a time."""
    sample = rows.slice(0, n_rows + 1).to_pylist()
    _naive_row(encoder, sample[0], cells)  # warm-up, untimed
    start = time.perf_counter()
    done = sum(_naive_row(encoder, row, cells) for row in sample[1:])
    return (time.perf_counter() - start) / max(done, 1)


def _naive_row(encoder, row, cells) -> int:
    try:
        pixels = encoder.image_transform(cell_image(cells.get(row["image_id"])))
    except ImageError:
        return 0
    image = encoder.encode_images({k: v[None] for k, v in pixels.items()})
    for text in (row["caption"], row["variant"]):
        text_emb = encoder.encode_texts(encoder.text_batch(encoder.tokenize([encoder.normalize_text(text)])))
        float((image * text_emb).sum())
    return 1


def image_batches(encoder, cells, batch_size: int) -> list:
    """The unique images decoded and preprocessed, in the engine's image batches (undecodable ones left out)."""
    items = []
    for image_id, cell in cells.items():
        try:
            items.append((image_id, encoder.image_transform(cell_image(cell)), "", False))
        except ImageError:
            continue
    size = image_batch_size(encoder, batch_size)
    return [collate(items[s : s + size])[1] for s in range(0, len(items), size)]


def text_batches(encoder, texts: list[str], batch_size: int) -> tuple[list, int]:
    """``texts`` in the engine's batches (tree packs where the encoder packs), tokenised, and the tokens of the
    texts themselves."""
    plan, tokens = plan_batches(encoder, texts, np.arange(len(texts)), batch_size, Context(), False,
                                loader_workers(None, encoder.device))
    return list(batch_inputs(encoder, texts, plan, 0, tokens)), len(tokens.flat)


def floor_seconds(start, batches: list, device: torch.device) -> float:
    """Seconds of the forward passes alone over ``batches`` (inputs ready in memory), launched by ``start``
    (``Encoder.start_texts`` or ``start_images``) one batch ahead as the engine launches them, under the engine's
    heap settings for ``device``; the first and the last batch run once untimed first."""
    with scoring_heap(device):
        start(batches[0]).result()
        start(batches[-1]).result()
        began = time.perf_counter()
        for _ in one_ahead((None, start(batch)) for batch in batches):
            pass
        return time.perf_counter() - began


def text_floor(encoder, batches: tuple[list, int]) -> tuple[float, int, int]:
    """Forward seconds over prepared text batches, the tokens they compute (padding included) and the texts' tokens."""
    prepared, tokens = batches
    computed = sum(b["input_ids"].numel() for b in prepared)
    return floor_seconds(encoder.start_texts, prepared, encoder.device), computed, tokens


def projection(run) -> str:
    """Images/s and texts/s of the engine's phases, and the encode time of a paper-scale run at those rates."""
    counts, timing = run.provenance.counts, run.provenance.timing
    image_rate = counts["encoded_images"] / timing["images_s"]
    text_rate = counts["encoded_texts"] / timing["texts_s"]
    texts = PAPER_IMAGES * counts["unique_texts"] / counts["unique_images"]
    minutes = (PAPER_IMAGES / image_rate + texts / text_rate + timing["score_s"] * PAPER_IMAGES / counts["unique_images"]) / 60
    return (f"{image_rate:,.1f} images/s, {text_rate:,.1f} texts/s; {PAPER_IMAGES:,} images with {texts:,.0f} texts "
            f"would take {minutes:.1f} min")


def agreement(run, other) -> str:
    """How far ``other``'s scores are from ``run``'s (row by row) and on how many rows the decision differs."""
    a, b = run.scores(), other.scores()
    delta = max(np.abs(a[c].to_numpy() - b[c].to_numpy()).max() for c in ("s_original", "s_variant"))
    flipped = int(((a["s_original"] > a["s_variant"]) != (b["s_original"] > b["s_variant"])).sum())
    return f"max|Δs|={delta:.2e}, decisions differing on {flipped:,} of {len(a):,} rows"


def metrics(run) -> dict:
    result = score_table.statistics(run.scores(), bootstrap=0)
    return {m: result[m] for m in ("E_inv", "E_sens", "PR")}


def middle(results: list[tuple]) -> tuple:
    """The result whose first field (seconds) is the median of ``results`` (of an even number, the upper one)."""
    return sorted(results, key=lambda r: r[0])[len(results) // 2]


def seconds_list(results: list[tuple]) -> str:
    return " / ".join(f"{r[0]:.2f}" for r in results)


def engine_seconds(results: list[tuple]) -> str:
    """The engine's encode+score seconds: the one run's, or the median of several with each run's."""
    if len(results) == 1:
        return f"{results[0][0]:.2f} s"
    return f"median of {len(results)}: {seconds_list(results)} s"


def engine_rounds(args, tmp: Path) -> tuple[list, list, float]:
    """``--repeat`` rounds of the packed engine and (without ``--quick``) the unpacked one, alternating so that the
    machine's drift touches both alike: ``(seconds, run)`` of each, and the first packed run's end-to-end seconds."""
    packed, plain = [], []
    for k in range(args.repeat):
        began = time.perf_counter()
        run, seconds = engine(args, tmp / f"fp32-{k}")
        packed.append((seconds, run))
        if k == 0:
            wall = time.perf_counter() - began
        if not args.quick:
            plain_run, seconds = engine(args, tmp / f"plain-{k}", tree_packing=False)
            plain.append((seconds, plain_run))
    return packed, plain, wall


def main() -> None:
    args = parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        packed_runs, plain_runs, wall = engine_rounds(args, Path(tmp))
        engine_s, run = middle(packed_runs)
        p = run.provenance
        counts, n = p.counts, p.counts["scored_rows"]
        weights = "RANDOM weights" if p.random_weights else f"weights {p.pretrained}"
        print(f"model     {p.model} = {p.model_id} ({weights}), {p.device}, {p.precision}, "
              f"batch {args.batch_size}, {torch.get_num_threads()} torch threads")
        print(f"workload  {args.dataset}: {counts['rows']:,} rows ({n:,} scored), {counts['unique_images']} unique images, "
              f"{counts['unique_texts']:,} unique texts")
        print(f"packing   {p.text['tree_packing']}")
        print(f"engine    {n / engine_s:10.1f} pairs/s   encode+score {engine_seconds(packed_runs)} (end to end incl. loading {wall:.2f} s, "
              "the first run)")
        print(f"phases    {projection(run)}")
        encoder = load_model(args.model, pretrained=args.pretrained, device=args.device)
        rows, cells = inputs(args)
        images = image_batches(encoder, cells, args.batch_size)
        texts = unique_texts(rows, encoder.normalize_text)[0]
        packed = text_batches(encoder, texts, args.batch_size)
        images_s = floor_seconds(encoder.start_images, images, encoder.device)
        if not args.quick:
            plain_s, plain_run = middle(plain_runs)
            print(f"unpacked  {n / plain_s:10.1f} pairs/s   encode+score {engine_seconds(plain_runs)}; {projection(plain_run)}")
            print(f"exact     packed against unpacked: {agreement(run, plain_run)}")
            naive_s = naive(encoder, rows, cells, args.naive_rows) if args.naive_rows else None
            print(f"naive     {1 / naive_s:10.1f} pairs/s   {naive_s * 1000:.1f} ms per row over {args.naive_rows} rows"
                  if naive_s else "naive     not timed (--naive-rows 0)")
            plain = load_model(args.model, pretrained=args.pretrained, device=args.device, tree_packing=False)
            unpacked = text_batches(plain, texts, args.batch_size)
        timed = {"old": [], "new": []}
        for _ in range(args.repeat):
            if not args.quick:
                timed["old"].append(text_floor(plain, unpacked))
            timed["new"].append(text_floor(encoder, packed))
        floors = {name: middle(results) for name, results in timed.items() if results}
        for name, (seconds, computed, tokens) in floors.items():
            rounds = f", median of {seconds_list(timed[name])} s" if args.repeat > 1 else ""
            print(f"floor {name} {n / (images_s + seconds):10.1f} pairs/s   forward only {images_s + seconds:.2f} s (images "
                  f"{images_s:.2f} s, texts {seconds:.2f} s = {len(texts) / seconds:,.1f} texts/s{rounds}); text tokens "
                  f"computed {computed:,} = {computed / tokens:.3f} per token of the unique texts")
        floor = n / (images_s + floors["new"][0])
        if not args.quick:
            (old_s, old_tokens, _), (new_s, new_tokens, _) = floors["old"], floors["new"]
            text_s = {name: middle([(r.provenance.timing["texts_s"],) for _, r in results])[0]
                      for name, results in (("packed", packed_runs), ("plain", plain_runs))}
            each = ""
            if args.repeat > 1:
                each = "; each round " + " / ".join(
                    f"{b.provenance.timing['texts_s'] / a.provenance.timing['texts_s']:.2f}x"
                    for (_, a), (_, b) in zip(packed_runs, plain_runs))
            print(f"texts     tokens computed new/old floor = {new_tokens / old_tokens:.3f}; text phase old/new: floor "
                  f"{old_s / new_s:.2f}x, engine {text_s['plain'] / text_s['packed']:.2f}x ({text_s['plain']:.2f} s -> "
                  f"{text_s['packed']:.2f} s{', medians' if args.repeat > 1 else ''}{each})")
            naive_ratio = f"engine/naive = {n / engine_s * naive_s:.1f}x   " if naive_s else ""
            print(f"ratios    {naive_ratio}engine/floor = {n / engine_s / floor:.2f}   (floor: the new one)")
        else:
            print(f"ratios    engine/floor = {n / engine_s / floor:.2f}   (floor: the new one)")
        if args.drift:
            base = metrics(run)
            print("metrics   fp32 " + "  ".join(f"{k}={v:.5f}" for k, v in base.items()))
            for precision in args.drift:
                other, seconds = engine(args, Path(tmp) / precision, precision)
                drift = metrics(other)
                print(f"drift     {precision} ({seconds:.2f} s) " + "  ".join(
                    f"{k}={drift[k]:.5f} (Δ {drift[k] - base[k]:+.5f})" for k in base) + f"; {agreement(run, other)}")
                print(f"phases    {precision}: {projection(other)}")
                autocast = load_model(args.model, pretrained=args.pretrained, device=args.device, precision=precision)
                floor_s = floor_seconds(autocast.start_images, images, autocast.device) + text_floor(autocast, packed)[0]
                print(f"floor new {precision}: {n / floor_s:,.1f} pairs/s   forward only {floor_s:.2f} s   "
                      f"engine/floor = {floor_s / seconds:.2f}")


if __name__ == "__main__":
    run(main)
