"""The scoring engine: one similarity per (image, text) row of an LGIP dataset, each input encoded once.

``score_dataset`` collects the unique images and unique normalised texts of the rows, takes what
it can from the embedding cache, encodes the rest in batches (images decoded in DataLoader
workers, texts in length-sorted batches or, for causal text towers, tree packs that encode each
distinct token prefix once), shards that work across ``torchrun`` ranks, and writes
``scores.parquet`` (``schema.SCORE_COLUMNS``, float64 scores, the ``pairs`` row order) and
``provenance.json`` atomically. Rows whose image cannot be decoded are left out of the scores and
listed with their reason in ``provenance["counts"]["skipped_images"]``; with ``validated``, so are the
rows the validated rule drops (scored all the same, returned as ``ScoreRun.dropped``), counted in
``counts["validated"]``. When the dataset has a ``groups`` config (2x2 groups), its images and captions
join the same unique sets (and cache) and ``groups_scores.parquet`` (``schema.GROUP_SCORE_COLUMNS``) holds
each group's four similarities.

Memory grows with the images and captions; of each variant only its token ids are kept (about 120 MB for the
paper's 2.4 M texts: :class:`~lgip_metric.scoring.texts.TokenIds`). The image embeddings are kept, the text
embeddings stream through :class:`lgip_metric.scoring.join.ScoreJoin` (each scored as it arrives and dropped
once no row waits for it; the texts are planned window by window of ``WINDOW_IMAGES`` images, so a caption
waits for its variants within its window, not across the whole set), and under torchrun ranks
exchange the image embeddings, the caption embeddings other ranks' rows need and the per-row scores.
The rows' memory-mapped table is let go while the texts stream and read again to be written, the
score file is hashed as it is written rather than held, and blocks of 4 MiB and more are never carved
from the C heap (:mod:`lgip_metric.scoring.heap`).
"""
from __future__ import annotations

import json
import time
from contextlib import nullcontext
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import torch
from tqdm.auto import tqdm

from lgip_dataset import schema
from lgip_dataset.errors import LGIPError
from lgip_dataset.files import hub_io
from lgip_dataset.files.atomic import atomic_write_text, check_free_space
from lgip_metric.scoring import distributed, heap
from lgip_metric.scoring.cache import DEFAULT_CHUNK_ROWS, EmbeddingCache, check_writable, content_key, default_cache_dir
from lgip_metric.scoring.image_data import ImageRows, image_batch_size, image_batches
from lgip_metric.scoring.input_cache import INPUTS, PixelStore, TokenStore, evict, limit_bytes
from lgip_metric.models import Encoder, load_model, loader_workers, resolve_model, select_device
from lgip_metric.models.base import one_ahead
from lgip_metric.results.provenance import Provenance
from lgip_metric.scoring.score_inputs import (GROUP_IMAGES, folded_pairs, image_positions, keys_of_images, long_pairs,
                                              read_alike, read_groups, read_rows, split_validated, unique_texts,
                                              validated_rows)
from lgip_metric.scoring.join import Behind, ScoreJoin
from lgip_metric.scoring.run_record import run_provenance
from lgip_metric.scoring.score_files import write_table, writing
from lgip_metric.scoring.texts import KeptTokens, batch_inputs, counts_tokens, image_windows, plan_batches

SCORES_FILE, PROVENANCE_FILE, GROUP_SCORES_FILE = "scores.parquet", "provenance.json", "groups_scores.parquet"
ROUND_BATCHES = 64  # text batches per rank between two exchanges of caption embeddings under torchrun
WINDOW_IMAGES = 500  # images whose texts are planned together: the join holds at most about one window's texts
GROUP_PAIRS, GROUP_SCORES = ((0, 0), (0, 1), (1, 0), (1, 1)), ("s_a_ca", "s_a_cb", "s_b_ca", "s_b_cb")

@dataclass(frozen=True)
class ScoreRun:
    """Where a run wrote its outputs, its provenance record and (on the rank that wrote them) its
    score tables in memory, equal to the files."""

    scores_path: Path
    provenance_path: Path
    provenance: Provenance
    groups_path: Path | None = None  # groups_scores.parquet, when the dataset has groups
    table: pa.Table | None = None  # scores.parquet's table; None on torchrun ranks > 0
    groups_table: pa.Table | None = None  # groups_scores.parquet's table, when written
    superseded: tuple[str, ...] = ()  # an earlier run's files of the folder these scores replaced (removed)
    dropped: pa.Table | None = None  # with ``validated``: the scored rows the rule drops (not written), on rank 0

    @cached_property
    def frame(self) -> pd.DataFrame | None:
        """The score table as a DataFrame, made on first use (``lgip score`` never pays for it)."""
        return None if self.table is None else self.table.to_pandas()

    @cached_property
    def groups_frame(self) -> pd.DataFrame | None:
        """The 2x2 group score table as a DataFrame, when written."""
        return None if self.groups_table is None else self.groups_table.to_pandas()

    def scores(self) -> pd.DataFrame:
        """The score table as a DataFrame (read from ``scores_path`` only on a rank that did not write it)."""
        return self.frame if self.frame is not None else pd.read_parquet(self.scores_path)


def score_dataset(
    model: str,
    dataset: str | Path,
    out_dir: str | Path,
    *,
    pretrained: str | None = None,
    config: str = schema.PAIRS,
    batch_size: int = 64,
    precision: str = "fp32",
    device: str | None = None,
    cache_dir: str | Path | None = None,
    num_workers: int | None = None,
    progress: bool = True,
    limit: int | None = None,
    cache_chunk_rows: int = DEFAULT_CHUNK_ROWS,
    tree_packing: bool = True,
    validated: bool = False,
    keep_inputs: bool = False,
) -> ScoreRun:
    """Score every row of ``config`` of ``dataset`` with ``model``; write scores and provenance to ``out_dir``.

    ``cache_dir`` defaults to :func:`lgip_metric.scoring.cache.default_cache_dir`; ``"none"`` disables the
    cache (and with it resuming). ``limit`` scores only the first rows. ``tree_packing=False`` encodes every
    text whole even where the text tower allows encoding each distinct token prefix once (recorded in
    the provenance's ``text.tree_packing`` either way). ``validated`` writes only the rows the validated rule
    keeps (the others are scored too, and returned as ``ScoreRun.dropped``). With a cache, images whose pixels and
    texts whose token ids a model of the same preprocessing or tokenizer kept there are not decoded or tokenised
    again (:mod:`lgip_metric.scoring.input_cache`); ``keep_inputs`` keeps this run's for the models after it (a
    sweep sets it). Under ``torchrun`` every rank
    calls this; rank 0 writes the files and every rank returns the same :class:`ScoreRun`.
    """
    started = time.perf_counter()
    if batch_size < 1:
        raise LGIPError(f"--batch-size must be at least 1, got {batch_size}")
    spec = resolve_model(model, pretrained)
    if keep_inputs:
        limit_bytes()  # a bad LGIP_INPUT_CACHE_GB is refused now, not after the scoring
    disabled = cache_dir is not None and str(cache_dir).lower() == "none"
    cache_root = None if disabled else Path(cache_dir or default_cache_dir()).expanduser()
    if cache_root is not None:
        check_writable(cache_root)
    chosen = select_device(device)
    with heap.scoring_heap(chosen):
        ctx = distributed.setup(chosen)
        try:
            job = _Job(spec, dataset, Path(out_dir), config, batch_size, ctx, progress and ctx.is_main, started, validated)
            return job.run(precision, chosen, cache_root, cache_chunk_rows, limit, loader_workers(num_workers, chosen), tree_packing,
                           keep_inputs)
        finally:
            ctx.close()


class _Job:
    """One scoring run; methods are its steps, ``timing`` collects their durations."""

    def __init__(self, spec, dataset, out_dir, config, batch_size, ctx, show, started, validated):
        self.spec, self.out_dir, self.config, self.validated = spec, out_dir, config, validated
        self.files = hub_io.DatasetFiles(dataset)  # each fact of the dataset read once (its fingerprint, build record)
        self.batch_size, self.ctx, self.show, self.started = batch_size, ctx, show, started
        self.timing: dict[str, float] = {}
        self.fingerprint: str | None = None  # the scored config's content hash, taken when its rows are first read

    def _tick(self, name: str, since: float) -> float:
        now = time.perf_counter()
        self.timing[f"{name}_s"] = round(now - since, 4)
        return now

    def run(self, precision, device, cache_root, chunk_rows, limit, workers, tree_packing, keep_inputs) -> ScoreRun:
        t = time.perf_counter()
        stamp = self.files.stamp(self.config)  # the shards as they are when first read: checked before writing
        rows = read_rows(self.files, self.config, limit)
        kept = validated_rows(self.files, self.config, rows) if self.validated else None
        groups = read_groups(self.files)
        id_columns = [rows.column("image_id")]
        id_columns += [groups.column(c) for c in GROUP_IMAGES] if groups is not None else []
        all_idx, image_ids = pd.factorize(pd.Series(np.concatenate([c.to_numpy() for c in id_columns])), sort=True)
        image_ids = image_ids.to_numpy()
        image_idx, *group_image_idx = np.split(all_idx, np.cumsum([len(c) for c in id_columns])[:-1])
        image_source, positions = image_positions(self.files, image_ids)
        self.fingerprint = self.files.fingerprint(self.config)
        if self.ctx.is_main:
            self._check_space(rows.num_rows)
        t = self._tick("load_data", t)

        encoder = load_model(self.spec, device=device, precision=precision, tree_packing=tree_packing)
        dim = _embed_dim(encoder)
        cache = pixels = tokens_kept = None
        if cache_root is not None:
            cache = EmbeddingCache(cache_root, encoder.fingerprint(), encoder.provenance(), chunk_rows)
            pixels, tokens_kept = _input_stores(encoder, cache_root, keep_inputs)
        elif encoder.device.type != "cpu":  # on a CPU the hash would take the forward passes' cores
            encoder.identify_in_background()
        t = self._tick("load_model", t)

        image_keys = keys_of_images(image_source, positions, image_ids) if cache is not None else None
        image_emb, image_stats = self._embed_images(encoder, image_source, positions, workers, image_keys, dim, cache, pixels)
        t = self._tick("images", t)
        failed = {i: reason for i, reason in image_stats["failures"]}
        keep = ~np.isin(image_idx, list(failed))
        texts, caption_idx, variant_idx, *group_text_idx = unique_texts(rows, encoder.normalize_text, groups)
        candidates = np.union1d(long_pairs(encoder, rows, caption_idx, variant_idx),
                                folded_pairs(rows, caption_idx, variant_idx))
        # Let the rows go while the texts stream (rank 0 reads them again to write the scores), and hand back
        # the pages Arrow's pool keeps from them and from the hashing and case folding above: else they stay
        # resident under the text phase's peak (27 and 65 MB at 1,000 and 3,000 images in bench_scale.py).
        del rows, id_columns
        pa.default_memory_pool().release_unused()
        scored = keep if not keep.all() else slice(None)  # a view, not copies, where every image decoded
        image_columns = {"s_original": (image_idx[scored], caption_idx[scored]),
                         "s_variant": (image_idx[scored], variant_idx[scored])}
        group_keep = None
        if groups is not None:
            group_keep = ~(np.isin(group_image_idx[0], list(failed)) | np.isin(group_image_idx[1], list(failed)))
            for (i, j), name in zip(GROUP_PAIRS, GROUP_SCORES):
                image_columns[name] = (group_image_idx[i][group_keep], group_text_idx[j][group_keep])
        values, text_stats, tokens = self._score_texts(encoder, texts, cache, image_emb, image_columns,
                                                       (caption_idx[scored], variant_idx[scored]), workers, tokens_kept)
        alike = read_alike(encoder, texts, caption_idx, variant_idx, candidates, tokens) & keep
        n_texts = len(texts)
        del image_emb, texts, image_columns, tokens  # let go before the rows are read again and written
        heap.end_passes(encoder.device)
        t = self._tick("texts", t)
        scores_path, provenance_path = self.out_dir / SCORES_FILE, self.out_dir / PROVENANCE_FILE
        groups_path = self.out_dir / GROUP_SCORES_FILE if groups is not None else None
        if not self.ctx.is_main:  # rank 0 writes the files; the others wait for its record
            return ScoreRun(scores_path, provenance_path, self.ctx.broadcast(None), groups_path)

        group_table = None
        if groups is not None:
            group_table = groups.filter(pa.array(group_keep))
            for name in GROUP_SCORES:
                group_table = group_table.append_column(name, pa.array(values[name], pa.float64()))
        self._tick("score", t)
        skipped = [
            {"image_id": int(image_ids[i]), "reason": reason, "rows": int((image_idx == i).sum())}
            for i, reason in sorted(failed.items())
        ]
        rows = read_rows(self.files, self.config, limit)
        if self.files.stamp(self.config) != stamp:
            raise LGIPError(f"config {self.config!r} of {self.files.dataset} changed while it was scored; score it again")
        counts = {
            "rows": rows.num_rows,
            "scored_rows": int(keep.sum()),
            "read_alike_rows": int(alike.sum()),  # caption and variant reach the model as the same tokens
            "skipped_rows": int((~keep).sum()),
            "unique_images": len(image_ids),
            "unique_texts": n_texts,
            "skipped_images": skipped,
            "encoded_images": image_stats["encoded"],
            "encoded_texts": text_stats["encoded"],
            "cached_images": image_stats["cached"],
            "cached_texts": text_stats["cached"],
            "kept_pixels": image_stats["kept"],  # images read as pixels an earlier model of the same preprocessing kept
            "kept_tokens": text_stats["kept"],  # texts whose token ids an earlier model of the same tokenizer kept
            **({"groups": groups.num_rows, "scored_groups": group_table.num_rows} if groups is not None else {}),
        }
        tied = alike[keep] & (caption_idx[keep] != variant_idx[keep])  # the same tokens: one text, an exact tie
        values["s_variant"][tied] = values["s_original"][tied]
        table = (rows if keep.all() else rows.filter(pa.array(keep))).append_column("s_original", pa.array(values["s_original"], pa.float64()))
        table = table.append_column("s_variant", pa.array(values["s_variant"], pa.float64()))
        table = table.append_column("t_sim", pa.array(values["t_sim"], pa.float64()))
        dropped = None
        if kept is not None:  # the rows the validated rule drops were scored (for comparison), not written
            table, dropped, counts["validated"] = split_validated(table, kept[keep])
            counts["scored_rows"] = table.num_rows
        digests = {}
        written, digests["scores"] = write_table(table, scores_path, schema.SCORE_COLUMNS)
        groups_written = None
        if groups_path is not None:
            groups_written, digests["groups"] = write_table(group_table, groups_path, schema.GROUP_SCORE_COLUMNS)
        else:  # a folder reused for a dataset without groups keeps no stale group scores
            (self.out_dir / GROUP_SCORES_FILE).unlink(missing_ok=True)
        self.timing["total_s"] = round(time.perf_counter() - self.started, 4)
        outputs = {"scores": {"file": SCORES_FILE, "sha256": digests["scores"]},
                   **({"groups_scores": {"file": GROUP_SCORES_FILE, "sha256": digests["groups"]}} if "groups" in digests else {})}
        provenance = run_provenance(self.spec, self.files, self.config, self.fingerprint, self.validated, self.ctx.world,
                                    encoder, cache, counts, self.timing, outputs)
        with writing(provenance_path):
            atomic_write_text(provenance_path, json.dumps(provenance.to_dict(), indent=2, sort_keys=False, default=str))
        if keep_inputs and cache_root is not None:
            evict(cache_root)
        provenance = self.ctx.broadcast(provenance)
        return ScoreRun(scores_path, provenance_path, provenance, groups_path, written, groups_written, dropped=dropped)

    def _check_space(self, n_rows: int) -> None:
        """Refuse, before any model is loaded, an --out whose disk cannot hold the scores: about the size of
        the scored config's shards plus three float64 columns (scores computed and then lost help no one)."""
        need = sum(p.stat().st_size for p in self.files.shards(self.config)) + 3 * 8 * n_rows
        check_free_space(self.out_dir, need, "the scores")

    def _embed_images(self, encoder: Encoder, source, positions, workers, keys, dim, cache, pixels):
        """Every image's embedding on every rank: cached ones read, the rest encoded in dataset-order
        batches (each rank its share, decoded by ``workers`` DataLoader processes, or read from the kept
        ``pixels`` of this preprocessing), cached as they finish and shared between ranks. ``keys`` (content
        hashes) exist only when there is a cache. The time spent waiting for decoded batches is ``timing["image_inputs_s"]``."""
        ctx, count = self.ctx, len(positions)
        hit_positions, hit_emb = np.zeros(0, np.int64), np.zeros((0, dim), np.float32)
        if cache is not None and ctx.is_main:
            hit_positions, hit_emb = cache.lookup("image", keys, dim)
        hit_positions, hit_emb = ctx.broadcast((hit_positions, hit_emb))
        missing = np.setdiff1d(np.arange(count), hit_positions)
        size = image_batch_size(encoder, self.batch_size)
        batches = [missing[start : start + size] for start in range(0, len(missing), size)]
        owned = [np.concatenate(ctx.shard(batches, rank) or [np.zeros(0, np.int64)]) for rank in range(ctx.world)]
        row_of = {int(p): i for i, p in enumerate(owned[ctx.rank])}
        local = torch.zeros(len(row_of), dim)
        failures: list[tuple[int, str]] = []
        rows = ImageRows(source, positions, encoder.image_transform,
                         (encoder.pixel_stages, pixels, keys) if pixels is not None else None)
        waited = [0.0]
        loader = _timed(image_batches(rows, [b.tolist() for b in ctx.shard(batches)], workers, encoder.device), waited)
        kept = 0
        writer = cache.writer("image", ctx.rank) if cache is not None else nullcontext()
        with writer, tqdm(total=len(row_of), desc="images", unit="image", disable=not self.show or None) as bar:
            started = (((done, failed, read), encoder.start_images(batch) if done else None) for done, batch, failed, read in loader)
            for (done, failed, read), emb in one_ahead(started):
                failures.extend(failed)
                kept += read
                if done:
                    local[[row_of[p] for p in done]] = emb
                    if cache is not None:
                        writer.add([keys[p] for p in done], emb.numpy())
                bar.update(len(done) + len(failed))
        full = torch.zeros(count, dim)
        full[torch.as_tensor(hit_positions, dtype=torch.long)] = torch.from_numpy(hit_emb)
        for part, rows_of_part in zip(owned, ctx.all_gather_rows(local, [len(o) for o in owned], encoder.device)):
            full[torch.as_tensor(part, dtype=torch.long)] = rows_of_part
        all_failures = sorted(f for part in ctx.all_gather(failures) for f in part)
        self.timing["image_inputs_s"] = round(waited[0], 4)
        stats = {"cached": len(hit_positions), "encoded": len(missing) - len(all_failures), "failures": all_failures,
                 "kept": sum(ctx.all_gather(kept))}
        return full, stats

    def _score_texts(self, encoder: Encoder, texts: list[str], cache, images: torch.Tensor, image_columns, text_column,
                     workers: int, tokens_kept: TokenStore | None):
        """The values of ``image_columns`` and of the caption-variant column ``t_sim`` (on rank 0), the counts
        of cached and encoded texts and the plan's token ids (or None), streaming the text embeddings: cached
        ones chunk by chunk (rank 0), the rest in the batches of :func:`~lgip_metric.scoring.texts.plan_batches`
        (each rank its share; ``workers`` processes tokenise each text once, then pad or pack), through a
        :class:`~lgip_metric.scoring.join.ScoreJoin` (in a thread beside the model on a GPU). Under torchrun a rank scores
        the image columns of its own texts and the ``t_sim`` of rows whose variant it owns; the caption
        embeddings those rows need travel at the end of each round of batches. Token ids that ``tokens_kept`` holds
        are read, not tokenised again."""
        ctx, count = self.ctx, len(texts)
        keys = [content_key(x) for x in texts] if cache is not None else None
        hits = cache.find("text", keys, images.shape[1]) if cache and ctx.is_main else None
        cached = ctx.broadcast(np.sort(hits.positions) if hits is not None else np.zeros(0, np.int64))
        missing = np.setdiff1d(np.arange(count), cached)
        # Run them shortest first within each window (same batches, so the same embeddings): variants are mostly
        # as long as their caption or longer, so a caption waits for its variants rather than many variants for it.
        windows = image_windows(count, image_columns.values(), WINDOW_IMAGES)
        kept = KeptTokens(tokens_kept, keys) if tokens_kept is not None else None
        plan, tokens = plan_batches(encoder, texts, missing, self.batch_size, self.ctx, self.show, workers, windows, kept)
        plan = plan[::-1]
        batches = [np.concatenate(item) if isinstance(item, list) else item for item in plan]  # text positions
        left, right = text_column
        exported = np.zeros(count, bool)  # captions whose variant another rank owns
        if ctx.world == 1:  # one rank scores every entry: the columns as they are, no copies held while texts stream
            whose = None
            join = ScoreJoin(images, count, image_columns, text_column)
        else:
            owner = np.zeros(count, np.int64)  # the rank that brings each text: 0 for cached ones
            for b, batch in enumerate(batches):
                owner[batch] = b % ctx.world
            whose = {name: owner[txt] for name, (_, txt) in image_columns.items()}  # the rank that scores each entry
            whose["t_sim"] = owner[right]
            mine = {name: ranks == ctx.rank for name, ranks in whose.items()}
            join = ScoreJoin(images, count, {name: (img[mine[name]], txt[mine[name]]) for name, (img, txt) in image_columns.items()},
                             (left[mine["t_sim"]], right[mine["t_sim"]]))
            exported[left[owner[left] != owner[right]]] = True
            del owner, mine
        step = ROUND_BATCHES * ctx.world
        rounds = [list(range(start, min(start + step, len(batches)))) for start in range(0, len(batches), step)]
        writer = cache.writer("text", ctx.rank) if cache is not None else nullcontext()
        inputs = batch_inputs(encoder, texts, [plan[b] for round_ in rounds for b in ctx.shard(round_)], workers, tokens)
        with writer, Behind(inline=encoder.device.type == "cpu") as behind, tqdm(total=count, desc="texts", unit="text", disable=not self.show or None) as bar:
            outbox = []
            for positions, emb in hits.embeddings() if hits is not None else []:
                join.add(positions, torch.from_numpy(emb))
                outbox.append((positions[exported[positions]], emb[exported[positions]]))
                bar.update(len(positions))
            self._exchange(join, outbox)
            for round_ in rounds:
                outbox = []
                started = ((batches[b], encoder.start_texts(next(inputs))) for b in ctx.shard(round_))
                for batch, emb in one_ahead(started):
                    behind.submit(join.add, batch, emb)
                    if cache is not None:
                        writer.add([keys[p] for p in batch], emb.numpy())
                    outbox.append((batch[exported[batch]], emb[torch.from_numpy(exported[batch])].numpy()))
                behind.settle()
                self._exchange(join, outbox)
                bar.update(sum(len(batches[b]) for b in round_))
        values = {name: join.values[name] for name in image_columns}
        values["t_sim"] = join.values["text"]
        stats = {"cached": len(cached), "encoded": len(missing), "kept": kept.read if kept is not None else 0}
        return self._collect(values, whose), stats, tokens

    def _exchange(self, join: ScoreJoin, outbox: list[tuple[np.ndarray, np.ndarray]]) -> None:
        """Send this rank's exported caption embeddings to all; take those this rank's rows wait for."""
        if self.ctx.world == 1:
            return
        sent = (np.concatenate([p for p, _ in outbox]), np.concatenate([e for _, e in outbox])) if outbox else None
        for rank, part in enumerate(self.ctx.all_gather(sent)):
            if rank == self.ctx.rank or part is None:
                continue
            positions, emb = part
            wanted = join.waiting[positions] > 0
            join.add(positions[wanted], torch.from_numpy(emb[wanted]))

    def _collect(self, values: dict[str, np.ndarray], whose: dict[str, np.ndarray] | None) -> dict[str, np.ndarray]:
        """Every column assembled on rank 0 from each rank's values of its own entries ({} on the other ranks);
        ``values`` themselves on a single rank (``whose`` None)."""
        if whose is None:
            return values
        parts = self.ctx.gather_to_main(values)
        out = {}
        for name in values if parts else ():
            out[name] = np.empty(len(whose[name]))
            for rank, part in enumerate(parts):
                out[name][whose[name] == rank] = part[name]
        return out


def _input_stores(encoder: Encoder, cache_root: Path, keep: bool) -> tuple[PixelStore | None, TokenStore | None]:
    """The stores of kept pixels and token ids this run reads, and fills when it ``keep``s its inputs: none where the
    encoder's inputs cannot be kept, or where nothing was kept and this run keeps nothing (a single run in a
    fresh cache pays neither the per-image lookups nor the tokenizer's digest)."""
    pixels = tokens = None
    if encoder.pixel_stages is not None:
        pixels = PixelStore(cache_root, encoder.pixel_stages.settings, keep)
        pixels = pixels if keep or pixels.folder.is_dir() else None
    kept_tokens = keep or (cache_root / INPUTS / "tokens").is_dir()
    if counts_tokens(encoder) and kept_tokens and encoder.token_settings is not None:
        tokens = TokenStore(cache_root, encoder.token_settings, keep)
    return pixels, tokens


def _timed(items, waited: list[float]):
    """``items`` as they come, adding the seconds spent waiting for each to ``waited[0]``."""
    iterator = iter(items)
    while True:
        started = time.perf_counter()
        try:
            item = next(iterator)
        except StopIteration:
            return
        finally:
            waited[0] += time.perf_counter() - started
        yield item


def _embed_dim(encoder: Encoder) -> int:
    return int(encoder.encode_texts(encoder.text_batch(encoder.tokenize(["a"]))).shape[1])
