"""Materialise an LGIP dataset as a Hub-layout folder: parquet shards per config + dataset card.

The build is staged in a hidden sibling folder (``.<name>.partial``) and moved into place only
when complete, so an interrupted build never leaves a folder that looks finished. Image shards
(the slow part) are written one by one, atomically; a rerun with the same arguments keeps the
finished ones and resumes.
"""
from __future__ import annotations

import errno
import json
import math
import os
import re
import shutil
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from datasets.features.features import require_decoding
from tqdm.auto import tqdm

from lgip_dataset import schema
from lgip_dataset.errors import DataError
from lgip_dataset.files.atomic import atomic_path, atomic_write_text, check_free_space, remove_stale_temps
from lgip_dataset.files.hub_io import BUILD_INFO
from lgip_dataset.files.images import ImageCheck, check_images, image_path_inside
from lgip_dataset.files.locks import FolderBusy, lock_folder
from lgip_dataset.judging import LabelStores, default_stores, validated_mask
from lgip_dataset.judging.validated_choice import choose_validated
from lgip_dataset.perturb import LEXICON_VERSION, Perturber, PerturbResult, Variant
from lgip_dataset.perturb.context import CaptionContext
from lgip_dataset.perturb.families.colors import person_color_words
from lgip_dataset.perturb.families.hard import POOLS, hard_flip_provenance
from lgip_dataset.perturb.lexicon import load_lexicon
from lgip_dataset.perturb.plausibility import FoldedCounts, count_captions, image_fold, shipped_counts, shipped_image_ids
from lgip_dataset.perturb.registry import FAMILIES, IMPORTED_TYPES, STATISTICAL
from lgip_dataset.selection import balance
from lgip_dataset.selection.groups import mine_groups
from lgip_dataset.sources import imagefolder, saved_dataset, sugarcrepe
from lgip_dataset.sources.coco import Caption, ImageEntry, read_captions, select_images
from lgip_dataset.sources.skips import SkipLog
from lgip_dataset.sources.statistics_captions import (OPTION, StatisticsFile, file_sha256, read_statistics_files,
                                                     statistics_captions)
from lgip_dataset.writing.card import write_card
from lgip_dataset.writing.parallel import map_chunks

IMAGES_PER_SHARD = 1000
PAIRS_PER_SHARD = 500_000
CAPTIONS_PER_SHARD = 100_000
CAPTIONS_PER_TASK = 100  # a worker's task in the perturbing passes
COUNTED_PER_TASK = 1000  # a worker's task in the plausibility counts
_KEY_FILE = "build_key.json"
CONVERTED = "image stored as its 8-bit rendering (lgip_dataset.files.images.rendered)"
PERSON_COLOR = "colour word describing a person"  # a site no family flips (colors.person_color_words)
COLOR_FAMILIES = ("color", "hard_color", "binding")  # the families that write colour words


@dataclass
class BuildConfig:
    """What ``lgip build`` was asked for; every field goes into the card and ``lgip_build.json``."""

    captions: Path  # a COCO/Karpathy captions file, or the folder of a ``source`` probe set
    out: Path
    images: Path | None = None
    num_images: int | None = None
    captions_per_image: int | None = 5  # None: every caption
    source: str = "coco"  # or ``sugarcrepe.FORMAT``: each instance's negative is imported as a flip
    seed: int = 0
    k_same: int = 6
    k_diff: int = 6
    license_ids: tuple[int, ...] | None = None
    image_ids: tuple[int, ...] | None = None
    families: tuple[str, ...] | str | None = None  # None: the paper's core set; see Perturber
    groups: bool = False  # mine EqBen-style 2x2 groups into the ``groups`` config
    statistics_captions: tuple[Path, ...] = ()  # captions files added to the hard flips' statistics
    judged: tuple[Path, ...] = field(default_factory=default_stores)  # label stores applied to the flips (judging)
    caption_column: str | None = None  # ``imagefolder``/``dataset``: the captions' column (None: text, else caption)
    title: str = "LGIP: Language-Guided Invariance Probing"
    extra_card_sections: list = field(default_factory=list)  # Markdown, or functions of the build record giving it


@dataclass
class BuildSummary:
    out: Path
    counts: dict
    skips: SkipLog
    cleaned: SkipLog  # the captions kept whose text the build cleaned (sources.coco.caption_cleanings)
    judged: dict  # the label stores applied and the flips they labelled (:meth:`LabelStores.apply`)


def build(config: BuildConfig, *, overwrite: bool = False, progress: bool = True, workers: int = 1) -> BuildSummary:
    """Build the folder ``config.out``; return its counts and the recorded skips. ``workers`` processes
    perturb the captions (1: this process); the folder is the same for any number."""
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise DataError(f"workers must be a whole number >= 1, got {workers!r}")
    out = Path(config.out)
    if out.is_symlink():  # replacing it would rename the link, not the folder it names
        target = os.readlink(out)
        raise DataError(f"--out {out} is a symbolic link to {target}{'' if out.exists() else ', which does not exist'}; "
                        "name the folder itself (a link to it stays valid) or another --out")
    if out.exists() and not out.is_dir():
        raise DataError(f"--out {out} is a file, not a folder; remove it or choose another --out")
    if out.exists() and not overwrite:
        raise DataError(f"output folder {out} already exists; pass --overwrite to replace it")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise DataError(f"--out {out}: cannot create {out.parent} ({err.strerror or err}); choose another --out") from None
    if config.images is not None and not Path(config.images).is_dir():
        raise DataError(f"--images {config.images} is not a folder")
    perturber = Perturber(k_same=config.k_same, k_diff=config.k_diff, families=config.families)
    hard = any(name in STATISTICAL for name in perturber.families)
    if config.statistics_captions and not hard:
        raise DataError(f"{OPTION} feeds only the statistics of the families that ask them ({', '.join(STATISTICAL)}), "
                        "and none is built; add one (--families core,hard) or leave the option out")
    statistics = read_statistics_files(config.statistics_captions)
    labels = LabelStores(config.judged)
    skips, cleaned = SkipLog(), SkipLog()
    entries, imported, captions_sha256 = _read_source(config, skips, cleaned)
    license_ids = set(config.license_ids) if config.license_ids else None
    selected = select_images(
        entries,
        num_images=config.num_images,
        captions_per_image=config.captions_per_image,
        seed=config.seed,
        license_ids=license_ids,
        image_ids=set(config.image_ids) if config.image_ids else None,
        skips=skips,
    )
    staging = out.parent / f".{out.name}.partial"
    held = _hold(staging, out)
    try:
        _prepare_staging(staging, _build_key(config, captions_sha256, statistics, labels))
        counts, judged = _write_staging(staging, config, captions_sha256, perturber, selected, imported, skips, cleaned,
                                        progress, statistics, workers, labels)
        publish_folder(staging, out, overwrite)
    except DataError:
        shutil.rmtree(staging, ignore_errors=True)  # nothing to resume: the same inputs fail the same way
        raise
    except OSError as err:
        if err.errno in (errno.ENOSPC, errno.EDQUOT):  # a full disk: give the space back, keep nothing half-made
            shutil.rmtree(staging, ignore_errors=True)
            raise DataError(f"build failed: the disk of {out.parent} is full ({err.strerror}); nothing was kept. Free "
                            "space there or choose another --out, then build again") from None
        raise DataError(f"build failed while writing {staging}: {err}; its finished image shards are kept and a "
                        "rerun with the same arguments resumes from them (delete that folder to start over)") from err
    finally:
        os.close(held)
    return BuildSummary(out=out, counts=counts, skips=skips, cleaned=cleaned, judged=judged)


def _write_staging(staging: Path, config: BuildConfig, captions_sha256: str, perturber: Perturber,
                   selected: list[ImageEntry], imported: dict[str, list[Variant]], skips: SkipLog,
                   cleaned: SkipLog, progress: bool, statistics: list[StatisticsFile], workers: int,
                   labels: LabelStores) -> tuple[dict, dict]:
    """Write every shard, the build record and the card into ``staging``; return the counts and what the label
    stores ``labels`` gave the flips."""
    if config.images is not None:
        _check_space(staging, selected, Path(config.images))
        kept = _write_image_shards(staging, selected, Path(config.images), skips, cleaned, progress)
        kept_ids = {e.image_id for e in kept}
        _count_lost_imports([e for e in selected if e.image_id not in kept_ids], imported, skips)
        selected = kept
    if not selected:
        raise DataError(f"no usable images left from {config.captions} ({'; '.join(skips.lines()) or 'none selected'})")
    records = None
    if any(name in STATISTICAL for name in perturber.families):
        extra, records = statistics_captions(statistics, {e.image_id for e in selected} | shipped_image_ids())
        own = [(e.image_id, c.text, False) for e in selected for c in e.captions]  # no trigram (count_captions)
        perturber.plausibility = _build_counts([*own, *((i, text, True) for i, text in extra)], progress, workers)
    not_flipped = SkipLog() if any(name in COLOR_FAMILIES for name in perturber.families) else None
    counts, balance_report, judged = _write_text_shards(staging, selected, perturber, config.seed, progress,
                                                        imported, workers, labels, not_flipped)
    if config.groups:
        counts["groups"] = _write_groups(staging, selected, config.seed)
    counts["skipped"] = skips.total
    info = _build_info(config, captions_sha256, perturber.families, counts, skips, cleaned, records, balance_report,
                       judged, not_flipped)
    atomic_write_text(staging / BUILD_INFO, json.dumps(info, indent=2, sort_keys=True) + "\n")
    write_card(staging, info, selected if config.images is not None else None, config)
    (staging / _KEY_FILE).unlink()
    return counts, judged


def _read_source(config: BuildConfig, skips: SkipLog,
                 cleaned: SkipLog) -> tuple[list[ImageEntry], dict[str, list[Variant]], str]:
    """The images with their captions, the imported flips per caption id, and the source's SHA-256."""
    if config.source == sugarcrepe.FORMAT:
        if config.images is None:
            raise DataError("--from sugarcrepe needs --images: instances whose image is missing are skipped")
        entries, imported = sugarcrepe.read_sugarcrepe(config.captions, config.images, skips, cleaned)
        return entries, imported, sugarcrepe.sha256(config.captions)
    if config.source == imagefolder.FORMAT:
        entries, config.caption_column = imagefolder.read_imagefolder(config.captions, config.caption_column, skips,
                                                                      cleaned)  # the column read, recorded
        return entries, {}, imagefolder.sha256(config.captions)
    if config.source == saved_dataset.FORMAT:  # its images written into config.images, where the build reads them
        entries, config.caption_column = saved_dataset.read_saved(config.captions, config.caption_column, config.images,
                                                                  skips, cleaned)
        return entries, {}, saved_dataset.sha256(config.captions)
    return read_captions(config.captions, skips, cleaned), {}, file_sha256(Path(config.captions))


def _count_lost_imports(dropped: list[ImageEntry], imported: dict[str, list[Variant]], skips: SkipLog) -> None:
    """Count the imported flips (probe-set instances) of images the build had to skip."""
    for entry in dropped:
        lost = sum(len(imported.get(c.caption_id, ())) for c in entry.captions)
        if lost:
            skips.add("imported instance of a skipped image", f"image_id {entry.image_id}", count=lost)


def _build_key(config: BuildConfig, captions_sha256: str, statistics: list[StatisticsFile],
               labels: LabelStores) -> dict:
    """What a staging folder's finished shards were made from: a rerun resumes them only when it is equal
    (the lgip version too: the layout of a shard may change between versions)."""
    from lgip_dataset import __version__

    return {
        "config": {k: str(v) for k, v in asdict(config).items()},
        "captions_sha256": captions_sha256,
        "statistics_sha256": [f.sha256 for f in statistics],
        "judged_sha256": labels.sha256,
        "lexicon_version": LEXICON_VERSION,
        "lgip_version": __version__,
    }


def _hold(staging: Path, out: Path) -> int:
    """Create the staging folder and hold its lock (:func:`lgip_dataset.files.locks.lock_folder`; released when the
    build ends, even by kill -9): a second build into the same ``--out`` is refused, not interleaved."""
    try:
        staging.mkdir(exist_ok=True)
        return lock_folder(staging)
    except FolderBusy:
        raise DataError(f"--out {out} is being built by another lgip build (it holds {staging}); wait for it to finish "
                        "or choose another --out") from None
    except OSError as err:
        raise DataError(f"--out {out}: cannot create {staging} ({err.strerror or err}); choose another --out") from None


def _prepare_staging(staging: Path, key: dict) -> None:
    """Reuse what an interrupted build of the same inputs left in the (held) staging folder; else empty it."""
    key_file = staging / _KEY_FILE
    same = key_file.exists() and json.loads(key_file.read_text(encoding="utf-8")) == key
    if not same:
        for leftover in staging.iterdir():  # the folder itself stays: its lock is held
            shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
    remove_stale_temps(staging)  # half-written files of a killed run
    atomic_write_text(key_file, json.dumps(key, sort_keys=True))


def _check_space(staging: Path, selected: list[ImageEntry], images_dir: Path) -> None:
    """Refuse, before any shard is written, a disk that cannot hold the images (stored about as large as
    their files; a build that fills the disk may end in a crash inside pyarrow)."""
    paths = (image_path_inside(images_dir, entry.file_name) for entry in selected)
    check_free_space(staging, sum(p.stat().st_size for p in paths if p is not None and p.is_file()), "the images alone")


def _write_image_shards(
    staging: Path, selected: list[ImageEntry], images_dir: Path, skips: SkipLog, cleaned: SkipLog, progress: bool
) -> list[ImageEntry]:
    """Validate and store each selected image once; return the entries whose image is usable. Images stored
    as their 8-bit rendering (``converted_from``) are counted in ``cleaned``."""
    num_shards = max(1, math.ceil(len(selected) / IMAGES_PER_SHARD))
    folder = staging / schema.IMAGES
    folder.mkdir(exist_ok=True)
    bad: dict[int, str] = {}
    bar = tqdm(total=len(selected), desc="images", unit="img", disable=not progress)
    for shard in range(num_shards):
        chunk = selected[shard * IMAGES_PER_SHARD : (shard + 1) * IMAGES_PER_SHARD]
        path = folder / _shard_name(shard, num_shards)
        sidecar = staging / f".images-{shard:05d}.bad.json"
        if path.exists() and sidecar.exists():
            bad.update({int(k): v for k, v in json.loads(sidecar.read_text(encoding="utf-8")).items()})
        else:
            bad.update(_write_image_shard(path, sidecar, chunk, images_dir))
        converted = pq.read_table(path, columns=["image_id", "converted_from"]).to_pylist()
        for row in filter(lambda row: row["converted_from"], converted):
            cleaned.add(CONVERTED, f"image_id {row['image_id']}", row["converted_from"])
        bar.update(len(chunk))
    bar.close()
    kept = []
    for entry in selected:
        if entry.image_id in bad:
            skips.add(bad[entry.image_id], f"{images_dir.name}/{entry.file_name}", f"image_id {entry.image_id}")
            skips.add("caption of a skipped image", f"image_id {entry.image_id}", count=len(entry.captions))
        else:
            kept.append(entry)
    return kept


def _write_image_shard(path: Path, sidecar: Path, chunk: list[ImageEntry], images_dir: Path) -> dict[int, str]:
    rows = {name: [] for name in schema.IMAGE_FEATURES}
    paths = {e.image_id: image_path_inside(images_dir, e.file_name) for e in chunk}
    bad = {e.image_id: "file_name leaves the --images folder" for e in chunk if paths[e.image_id] is None}
    inside = [e for e in chunk if e.image_id not in bad]
    for entry, check in zip(inside, check_images(paths[e.image_id] for e in inside)):
        if check.error:
            bad[entry.image_id] = check.error
            continue
        entry.width, entry.height = check.width, check.height
        for name, value in image_row(entry.image_id, entry.file_name, check, entry.license, entry.license_url,
                                     entry.flickr_url).items():
            rows[name].append(value)
    _write_parquet(path, rows, schema.IMAGE_FEATURES)
    atomic_write_text(sidecar, json.dumps({str(k): v for k, v in bad.items()}, sort_keys=True))
    return bad


def image_row(image_id: int, file_name: str, check: ImageCheck, license: str = "", license_url: str = "",
              flickr_url: str = "") -> dict:
    """The ``images`` config row of a checked image file: the bytes :func:`~lgip_dataset.files.images.check_image`
    chose to store, and the mode it was converted from (None when stored as the file is)."""
    return {"image_id": image_id, "image": {"bytes": check.data, "path": file_name}, "file_name": file_name,
            "width": check.width, "height": check.height, "license": license, "license_url": license_url,
            "flickr_url": flickr_url, "converted_from": check.converted_from}


def _variant_row(variant: Variant, variant_id: str) -> dict:
    span = variant.span or (None, None)
    return {
        "variant_id": variant_id,
        "text": variant.text,
        "kind": variant.kind,
        "type": variant.type,
        "original": variant.original,
        "replacement": variant.replacement,
        "span_start": span[0],
        "span_end": span[1],
    }


def variant_rows(caption_id: str, result: PerturbResult, imported=()) -> tuple[list[dict], list[dict]]:
    """Rows of one caption's paraphrases and flips (the generated ones, then ``imported``) with stable
    ids ``<caption_id>-p<i>`` / ``-f<i>``."""
    paraphrases = [_variant_row(v, f"{caption_id}-p{i}") for i, v in enumerate(result.paraphrases)]
    flips = [_variant_row(v, f"{caption_id}-f{i}") for i, v in enumerate([*result.flips, *imported])]
    return paraphrases, flips


def plausibility_rows(caption_id: str, image_id: int, result: PerturbResult) -> list[dict]:
    """Rows of the ``plausibility`` config: the recorded figures of each hard flip of one caption."""
    return [{"variant_id": f"{caption_id}-f{i}", "caption_id": caption_id, "image_id": image_id, "type": v.type,
             **{k: v.plausibility[k] for k in ("lm_delta", "context_fit", "typicality", "candidates", "context")},
             "trigram_delta": v.plausibility.get("trigram_delta"), "fold": image_fold(image_id)}
            for i, v in enumerate(result.flips) if v.plausibility is not None]


def _build_counts(captions: list[tuple[object, str]], progress: bool, workers: int) -> FoldedCounts:
    """The plausibility statistics: the shipped counts plus the (image id, caption) pairs ``captions``
    (:func:`lgip_dataset.perturb.plausibility.build_counts`), counted in ``workers`` processes."""
    folded = shipped_counts()
    bar = tqdm(total=len(captions), desc="plausibility counts", unit="caption", disable=not progress)
    with map_chunks(count_captions, load_lexicon(), captions, workers, bar, COUNTED_PER_TASK) as parts:
        for part in parts:
            folded += part  # integer counts, added in input order: the tables of one pass over ``captions``
    bar.close()
    return folded


def _write_text_shards(
    staging: Path, selected: list[ImageEntry], perturber: Perturber, seed: int, progress: bool,
    imported: dict[str, list[Variant]], workers: int, labels: LabelStores, not_flipped: SkipLog | None = None,
) -> tuple[dict, dict | None, dict]:
    """Perturb every caption (the hard flips chosen across the build), add its ``imported`` flips, and write
    the ``captions`` and flat ``pairs`` configs, each flip with the labels ``labels`` hold of it (and, when any
    flip has labels, the ``validated`` config); return the counts, the hard flips' balance figures and what the
    labels gave (:meth:`LabelStores.apply`). ``not_flipped`` (given when colours are flipped) counts the colour
    words left as they are because they describe a person."""
    captions = {name: [] for name in schema.CAPTION_FEATURES}
    pairs = {name: [] for name in schema.PAIR_FEATURES}
    figures = {name: [] for name in schema.PLAUSIBILITY_FEATURES}
    counts, flipped = Counter(), Counter()  # flipped: the captions with a flip of each type
    todo = [(entry.image_id, caption) for entry in selected for caption in entry.captions]
    rows, balance_report = _perturbed(todo, perturber, seed, progress, imported, workers)
    if not_flipped is not None:
        not_flipped.counts[PERSON_COLOR] += 0  # counted, even when there are none
    for (image_id, caption), (paraphrases, flips, figure_rows, persons) in zip(todo, rows):
        if persons and not_flipped is not None:
            not_flipped.add(PERSON_COLOR, caption.caption_id, f"{', '.join(persons)} in {caption.text!r}", len(persons))
        for row in figure_rows:
            for name, value in row.items():
                figures[name].append(value)
        for name, value in (
            ("caption_id", caption.caption_id),
            ("image_id", image_id),
            ("caption", caption.text),
            ("caption_source", caption.source),
            ("paraphrases", paraphrases),
            ("flips", flips),
        ):
            captions[name].append(value)
        for row in paraphrases + flips:
            for name, value in row.items():
                pairs["variant" if name == "text" else name].append(value)
            pairs["row_id"].append(row["variant_id"])
            pairs["caption_id"].append(caption.caption_id)
            pairs["image_id"].append(image_id)
            pairs["caption"].append(caption.text)
            counts[f"{row['kind']}:{row['type']}"] += 1  # a family's name, or an imported subset's
        counts["captions"] += 1
        counts["captions_with_paraphrase"] += bool(paraphrases)
        counts["captions_with_flip"] += bool(flips)
        flipped.update({row["type"] for row in flips})
    if not pairs["row_id"]:
        raise DataError(f"--families {','.join(perturber.families)}: no variant for any of the {len(todo):,} captions "
                        "(none offers what these families edit); nothing to build: choose other families (e.g. core)")
    counts["images"] = len(selected)
    pairs["judged"], judged = labels.apply(pairs["caption"], pairs["variant"], pairs["kind"], pairs["type"])
    _write_config_shards(staging / schema.CAPTIONS, captions, schema.CAPTION_FEATURES, CAPTIONS_PER_SHARD)
    _write_config_shards(staging / schema.PAIRS, pairs, schema.PAIR_FEATURES, PAIRS_PER_SHARD)
    if judged["flips_judged"]:
        judged["validated_rows"], judged["validated_choice"] = _write_validated(staging, pairs, perturber.plausibility,
                                                                                seed)
    if figures["variant_id"]:
        _write_config_shards(staging / schema.PLAUSIBILITY, figures, schema.PLAUSIBILITY_FEATURES, PAIRS_PER_SHARD)
    return {**_tidy_counts(counts), "captions_with_flip_per_type": dict(sorted(flipped.items()))}, balance_report, judged


def _write_validated(staging: Path, pairs: dict[str, list], statistics: FoldedCounts | None,
                     seed: int) -> tuple[int, dict]:
    """Write the ``validated`` config: the ``pairs`` rows the validated rule keeps
    (:func:`lgip_dataset.judging.validated`), the compositional families' valid flips chosen across the build
    (:func:`~lgip_dataset.judging.validated_choice.choose_validated`, by the build's ``statistics``); return how many
    rows (none: no config, an empty one would not load) and the choice's figures per family."""
    labels = [record and record["labels"] for record in pairs["judged"]]
    keep = np.flatnonzero(validated_mask(pairs["kind"], pairs["type"], labels))
    keep, choice = choose_validated(pairs, keep, statistics, seed) if statistics is not None else (keep, {})
    if len(keep):
        kept = {name: [column[i] for i in keep] for name, column in pairs.items()}
        _write_config_shards(staging / schema.VALIDATED, kept, schema.PAIR_FEATURES, PAIRS_PER_SHARD)
    return len(keep), choice


def _perturbed(todo: list[tuple[int, Caption]], perturber: Perturber, seed: int, progress: bool,
               imported: dict[str, list[Variant]], workers: int) -> tuple[list[tuple], dict | None]:
    """The rows of each (image id, caption) of ``todo`` (:func:`_caption_rows`) and the balance figures of
    the hard flips, chosen across the build (:mod:`lgip_dataset.selection.balance`; None when no hard family is built).

    With workers, the captions are perturbed without the pooled families (in the background, while this
    process chooses their flips), and the chosen flips added (:meth:`Perturber.with_hard_flips`): the rows
    of one pass after the choice."""
    job = (perturber, seed, imported)
    if not any(name in POOLS for name in perturber.families):
        return _rows(todo, job, None, progress, workers), None
    bar = tqdm(total=len(todo), desc="hard sites", unit="caption", disable=not progress)
    with map_chunks(_hard_sites, (perturber, seed), todo, workers, bar, CAPTIONS_PER_TASK) as parts:
        sites = [site for part in parts for site in part]
    bar.close()
    if workers == 1:
        hard = balance.choose(sites, seed=seed)
        return _rows(todo, job, hard.flips, progress, workers), hard.report
    bar = tqdm(total=len(todo), desc="captions", unit="caption", disable=not progress)
    with map_chunks(_unpooled, (perturber, seed), todo, workers - 1, bar, CAPTIONS_PER_TASK, background=True) as parts:
        hard = balance.choose(sites, seed=seed)  # while the workers perturb
        results = [result for part in parts for result in part]
    bar.close()
    return [(*_result_rows(image_id, caption, perturber.with_hard_flips(result, hard.flips.get(caption.caption_id, {})),
                           imported), persons)
            for (image_id, caption), (result, persons) in zip(todo, results)], hard.report


def _unpooled(todo: list[tuple[int, Caption]], job: tuple[Perturber, int]) -> list:
    """:meth:`Perturber.perturb_without_pools` of each (image id, caption) of ``todo`` with its :func:`_person_colors`;
    ``job`` is (perturber, seed)."""
    perturber, seed = job
    return [(perturber.perturb_without_pools(caption.text, seed=seed, image_id=image_id),
             _person_colors(perturber, caption.text)) for image_id, caption in todo]


def _rows(todo: list[tuple[int, Caption]], job: tuple, flips: dict | None, progress: bool, workers: int) -> list[tuple]:
    """:func:`_caption_rows` of ``todo``, in ``workers`` processes."""
    bar = tqdm(total=len(todo), desc="captions", unit="caption", disable=not progress)
    with map_chunks(_caption_rows, (*job, flips), todo, workers, bar, CAPTIONS_PER_TASK) as parts:
        rows = [caption_rows for part in parts for caption_rows in part]
    bar.close()
    return rows


def _caption_rows(todo: list[tuple[int, Caption]], job: tuple) -> list[tuple[list[dict], list[dict], list[dict], list]]:
    """Per (image id, caption) of ``todo``: its rows (:func:`_result_rows`) and :func:`_person_colors`; ``job`` is
    (perturber, seed, imported flips, chosen hard flips per caption id or None to let the perturber choose)."""
    perturber, seed, imported, flips = job
    return [(*_result_rows(image_id, caption, perturber.perturb(caption.text, seed=seed, image_id=image_id,
                                                                hard_flips=None if flips is None else flips.get(caption.caption_id, {})),
                           imported), _person_colors(perturber, caption.text)) for image_id, caption in todo]


def _person_colors(perturber: Perturber, text: str) -> list[str]:
    """The colour words of caption ``text`` that describe a person (:func:`colors.person_color_words`), which
    no family flips; none when ``perturber`` builds no family that writes colours, or the caption has no colour word."""
    lex = perturber.lexicon
    if not any(name in COLOR_FAMILIES for name in perturber.families) \
            or lex.color_group.keys().isdisjoint(re.findall(r"[^\W_]+", text.lower())):
        return []
    ctx = CaptionContext(text, lex)
    return [ctx.tokens[i].text for i in person_color_words(ctx)]


def _result_rows(image_id: int, caption: Caption, result, imported: dict[str, list[Variant]]) -> tuple:
    """One caption's paraphrase and flip rows (:func:`variant_rows`, with its ``imported`` flips) and its
    plausibility rows."""
    return (*variant_rows(caption.caption_id, result, imported.get(caption.caption_id, ())),
            plausibility_rows(caption.caption_id, image_id, result))


def _hard_sites(todo: list[tuple[int, Caption]], job: tuple[Perturber, int]) -> list[balance.Site]:
    """The hard sites of each (image id, caption) of ``todo``, each with its pool of candidates; ``job`` is
    (perturber, seed)."""
    perturber, seed = job
    return [balance.Site(caption.caption_id, image_id, caption.text, name, tuple(pool))
            for image_id, caption in todo
            for name, pools in perturber.hard_pools(caption.text, seed=seed, image_id=image_id).items()
            for pool in pools]


def _tidy_counts(counts: Counter) -> dict:
    """``{"images", "captions", ..., "paraphrases": {type: n}, "flips": {type: n}}`` with totals."""
    tidy: dict = {k: v for k, v in counts.items() if ":" not in k}
    for kind, plural in ((schema.PARAPHRASE, "paraphrases"), (schema.FLIP, "flips")):
        per_type = {k.split(":", 1)[1]: v for k, v in sorted(counts.items()) if k.startswith(kind + ":")}
        tidy[plural] = {"total": sum(per_type.values()), **per_type}
    return dict(sorted(tidy.items()))


def _write_groups(staging: Path, selected: list[ImageEntry], seed: int) -> dict:
    """Mine the 2x2 groups among the build's captions, write the ``groups`` config, return counts.

    With no group found no config is written (an empty config would not load); the counts say 0.
    """
    rows = mine_groups(((c.caption_id, e.image_id, c.text) for e in selected for c in e.captions), seed=seed)
    if rows:
        columns = {name: [r[name] for r in rows] for name in schema.GROUP_FEATURES}
        _write_config_shards(staging / schema.GROUPS, columns, schema.GROUP_FEATURES, PAIRS_PER_SHARD)
    per_type = Counter(r["type"] for r in rows)
    return {"total": len(rows), **dict(sorted(per_type.items()))}


def _write_config_shards(folder: Path, columns: dict[str, list], features: datasets.Features, rows_per_shard: int) -> None:
    folder.mkdir(exist_ok=True)
    num_rows = len(next(iter(columns.values())))
    num_shards = max(1, math.ceil(num_rows / rows_per_shard))
    for shard in range(num_shards):
        lo, hi = shard * rows_per_shard, (shard + 1) * rows_per_shard
        _write_parquet(folder / _shard_name(shard, num_shards), {k: v[lo:hi] for k, v in columns.items()}, features)


def _shard_name(index: int, total: int) -> str:
    return f"{schema.SPLIT}-{index:05d}-of-{total:05d}.parquet"


def _write_parquet(path: Path, columns: dict[str, list], features: datasets.Features) -> None:
    """Write one shard through ``datasets`` (features in the parquet metadata), atomically.

    Columns that need no encoding (everything but images) go straight to Arrow with the features'
    schema; ``Dataset.from_dict`` would encode every value in Python, half the time of a build.
    """
    shown = not datasets.utils.are_progress_bars_disabled()
    datasets.utils.disable_progress_bars()  # one bar per shard would bury the build's own bars
    try:
        if any(require_decoding(feature) for feature in features.values()):
            table = datasets.Dataset.from_dict(columns, features=features)
        else:
            arrow = pa.Table.from_pydict(columns, schema=features.arrow_schema)
            table = datasets.Dataset(arrow, info=datasets.DatasetInfo(features=features))
        with atomic_path(path) as tmp:
            table.to_parquet(str(tmp))
    finally:
        if shown:
            datasets.utils.enable_progress_bars()


def _build_info(config: BuildConfig, captions_sha256: str, families: tuple[str, ...], counts: dict,
                skips: SkipLog, cleaned: SkipLog, statistics: list[dict] | None, balance_report: dict | None,
                judged: dict, not_flipped: SkipLog | None = None) -> dict:
    from lgip_dataset import __version__

    return {
        "lgip_version": __version__,
        "lexicon_version": LEXICON_VERSION,
        "seed": config.seed,
        "k_same": config.k_same,
        "k_diff": config.k_diff,
        "num_images": config.num_images,
        "captions_per_image": config.captions_per_image,
        "license_ids": list(config.license_ids) if config.license_ids else None,
        "image_ids": list(config.image_ids) if config.image_ids else None,
        "source": {"format": config.source, "captions": Path(config.captions).name, "captions_sha256": captions_sha256,
                   **({"caption_column": config.caption_column} if config.caption_column else {})},
        "images_embedded": config.images is not None,
        "families": {n: {"kind": FAMILIES[n].kind, "version": FAMILIES[n].version} for n in families},
        "imported_types": {t: IMPORTED_TYPES.get(t, schema.FLIP) for t in counts["flips"] if t not in FAMILIES and t != "total"},
        "configs": [c for c in schema.CONFIGS if c != schema.IMAGES or config.images is not None]
        + ([schema.GROUPS] if counts.get("groups", {}).get("total") else [])
        + ([schema.PLAUSIBILITY] if any(t in POOLS for t in counts["flips"]) else [])
        + ([schema.VALIDATED] if judged.get("validated_rows") else []),
        **({"hard_flips": {**hard_flip_provenance(), "statistics_captions": statistics, "balance": balance_report}}
           if statistics is not None else {}),
        "counts": counts,
        "judged": judged,
        "skips": skips.as_dict(),
        "cleaned": cleaned.as_dict(),
        **({"sites_not_flipped": not_flipped.as_dict()} if not_flipped is not None else {}),
        "libraries": {"datasets": datasets.__version__, "pyarrow": __import__("pyarrow").__version__},
    }


def publish_folder(staging: Path, out: Path, overwrite: bool) -> None:
    """Move the finished staging folder into place; an old ``out`` is replaced only at the end, and only with
    ``overwrite`` (another build may have published it meanwhile)."""
    if out.exists() and not overwrite:
        raise DataError(f"output folder {out} appeared while this build ran (another build published it); pass "
                        "--overwrite to replace it")
    for leftover in staging.glob(".images-*.bad.json"):
        leftover.unlink()
    trash = out.parent / f".{out.name}.old"
    shutil.rmtree(trash, ignore_errors=True)  # left by a run killed between the two replaces below
    if out.exists():
        os.replace(out, trash)
        os.replace(staging, out)
        shutil.rmtree(trash)
    else:
        os.replace(staging, out)
