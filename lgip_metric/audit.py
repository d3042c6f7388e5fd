"""The artifact audit of a probe set: how far text alone goes on its (caption, negative) pairs.

A probe set is a table of pairs over images: a human caption and a negative (a flip) of it. If its
negatives carry a systematic text difference (a word that is only ever removed, a replacement drawn
from a skewed list), a model can score above chance without looking at the image. :func:`audit`
measures that on the set's own pairs with every text-only scorer LGIP has, each cross-fitted by
image so that no pair is scored by a model that saw its image:

- the learned adversaries of :mod:`lgip_dataset.adversary` (the hypothesis-only / AFLite test):
  logistic regressions on word 1-2-gram and character 2-4-gram differences, one per type, trained on
  the other image folds' pairs; their held-out accuracy (pair-level, a tie counting 1/2) with a
  cluster-bootstrap interval over images;
- the n-gram language models of the blind baselines (:func:`lgip_metric.blind.lm_scores`: bigram and
  trigram Kneser-Ney, two image folds) with their PR (nested by caption as the model's PR is);
- the words that the negatives remove or add most unevenly (:func:`word_artifacts`): the diagnosis.

Per type and per headline block (the paper's flips ``object,color,count`` together, the hard flips
together, all flips). Optionally (:func:`untrained_check`) models with random weights score the pairs
whose images are at hand: a model that cannot see sits at PR 0.5 on a probe whose texts carry no
systematic difference.

Inputs (:func:`from_build`, :func:`from_sugarcrepe`, :func:`from_pairs_file`) are checked before any
expensive work; a bad one raises :class:`~lgip_dataset.errors.DataError` naming the file, column or row.
"""
from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from lgip_dataset import adversary, schema
from lgip_dataset.errors import DataError
from lgip_metric import blind, stats

PAPER_BLOCK, HARD_BLOCK, ALL_BLOCK = "paper flips", "hard flips", "all flips"
DEFAULT_TYPE = stats.FLIP  # the type of every pair of a table without a type column
MIN_USES = 20  # a word's uses (as removed or added) before it is listed among the artifacts
TOP_WORDS = 10
NGRAM_SCORERS = {"bigram": (blind.BigramKN, "bigram KN LM"), "trigram": (blind.TrigramKN, "trigram KN LM")}
PAIR_FILE_SUFFIXES = (".parquet", ".csv", ".jsonl")
TEXT_COLUMNS = ("caption", "variant")
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


@dataclass
class Source:
    """The pairs of one input (every row it has, flips or not), where they came from, and their fingerprint."""

    frame: pd.DataFrame
    name: str  # what the user named: a folder or a file
    format: str  # "lgip build", "sugarcrepe" or "pairs table"
    sha256: str  # of the bytes read
    file_names: dict = field(default_factory=dict)  # image_id -> image file name, where the input has them
    skipped: dict = field(default_factory=dict)  # reason -> {"count", "examples"}


# --------------------------------------------------------------------------------------------
# Inputs


def _digest(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode() + b"\0")
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def from_build(folder: str | Path) -> Source:
    """The ``pairs`` config of an ``lgip build`` folder (and the image file names of its ``images`` config)."""
    import pyarrow.parquet as pq

    from lgip_dataset import hub_io

    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(f"{folder}: not a folder; pass an `lgip build` output folder, or --from sugarcrepe DIR "
                        "or --pairs FILE")
    shards = hub_io.config_files(folder, schema.PAIRS)
    wanted = ["row_id", "caption_id", "image_id", "caption", "variant", "kind", "type", "original", "replacement"]
    rows = hub_io.load_config(folder, schema.PAIRS)
    frame = rows.select_columns([c for c in wanted if c in rows.column_names]).to_pandas()
    file_names = {}
    if any((folder / schema.IMAGES).glob("*.parquet")):
        for shard in hub_io.config_files(folder, schema.IMAGES):
            table = pq.read_table(shard, columns=["image_id", "file_name"])
            file_names.update(zip(table.column("image_id").to_pylist(), table.column("file_name").to_pylist()))
    return Source(frame, str(folder), "lgip build", _digest(shards), file_names)


def from_sugarcrepe(folder: str | Path) -> Source:
    """Every SugarCrepe-format file of ``folder`` (``{id: {filename, caption, negative_caption}}``), text only:
    each file is a type ``sugarcrepe_<file stem>``, the image id comes from the file name."""
    from lgip_dataset import sugarcrepe
    from lgip_dataset.skips import SkipLog

    skips = SkipLog()
    records, file_names, caption_ids = [], {}, {}
    for one in sugarcrepe.read_instances(folder, skips):
        file_names.setdefault(one.image_id, one.filename)
        cid = caption_ids.setdefault((one.image_id, one.caption), sugarcrepe.caption_id(one))
        records.append({"row_id": f"{one.path.stem}-{one.key}", "caption_id": cid, "image_id": one.image_id,
                        "caption": one.caption, "variant": one.negative, "kind": stats.FLIP, "type": one.type})
    if not records:
        raise DataError(f"--from sugarcrepe {folder}: no usable instance in its *.json files "
                        f"({skips.total} skipped); each needs a caption and a different negative_caption")
    return Source(pd.DataFrame.from_records(records), str(folder), "sugarcrepe",
                  _digest(sugarcrepe.source_files(folder)), file_names, skips.as_dict())


def from_pairs_file(path: str | Path) -> Source:
    """A table of pairs (.parquet, .csv or .jsonl) with ``image_id``, ``caption``, ``variant`` or
    ``negative_caption`` and optionally ``type`` (default: one type, ``flip``), ``caption_id``, ``row_id``,
    ``kind``, ``original``/``replacement``, ``file_name``."""
    path = Path(path)
    if path.suffix.lower() not in PAIR_FILE_SUFFIXES:
        raise DataError(f"--pairs {path}: unknown table format {path.suffix or '(no suffix)'!r}; "
                        f"use one of {', '.join(PAIR_FILE_SUFFIXES)}")
    if not path.is_file():
        raise DataError(f"--pairs {path}: no such file")
    if path.stat().st_size == 0:
        raise DataError(f"--pairs {path}: the file is empty; it needs a header/rows with image_id, caption, variant")
    try:
        if path.suffix.lower() == ".parquet":
            frame = pd.read_parquet(path)
        elif path.suffix.lower() == ".csv":
            frame = pd.read_csv(path, dtype={"caption": str, "variant": str, "negative_caption": str, "type": str},
                                keep_default_na=False, na_values=[""])
        else:
            frame = pd.read_json(path, lines=True, dtype=False)
    except Exception as err:  # readers raise many types: name the file and the cause
        raise DataError(f"--pairs {path}: not a readable {path.suffix[1:]} table "
                        f"({type(err).__name__}: {str(err).splitlines()[0][:200] if str(err) else ''})") from None
    if "variant" not in frame and "negative_caption" in frame:
        frame = frame.rename(columns={"negative_caption": "variant"})
    file_names = {}
    if "file_name" in frame:
        file_names = {i: f for i, f in zip(frame["image_id"], frame["file_name"]) if isinstance(f, str)} \
            if "image_id" in frame else {}
    return Source(frame, str(path), "pairs table", _digest([path]), file_names)


def flip_rows(pairs: pd.DataFrame, *, types=None, where: str = "pairs") -> pd.DataFrame:
    """The flip rows of ``pairs`` to audit (those of ``types`` when given), checked and completed: a
    missing ``type`` is ``flip``, a missing ``caption_id`` numbers the distinct (image, caption) pairs, a
    missing ``row_id`` is the row's position. ``where`` names the input in messages."""
    if "variant" not in pairs and "negative_caption" in pairs:
        pairs = pairs.rename(columns={"negative_caption": "variant"})
    missing = [c for c in ("image_id", *TEXT_COLUMNS) if c not in pairs]
    if missing:
        raise DataError(f"{where}: no column {', '.join(repr(c) for c in missing)} (has {', '.join(map(str, pairs.columns))});"
                        " a pairs table needs image_id, caption and variant (or negative_caption), and may have type")
    if pairs.empty:
        raise DataError(f"{where}: no rows; it needs one row per (caption, negative) pair")
    frame = pairs.reset_index(drop=True)
    for column in ("image_id", *TEXT_COLUMNS, *(c for c in ("type", "kind") if c in frame)):
        text = column in TEXT_COLUMNS  # must be a string; the labels may be numbers
        bad = np.array([not (isinstance(v, str) and v.strip()) if text or isinstance(v, str) else pd.isna(v)
                        for v in frame[column]], dtype=bool)
        if bad.any():
            raise DataError(f"{where}: row {int(np.flatnonzero(bad)[0])} has no {column!r} ({int(bad.sum())} such "
                            "rows); fill it or drop the row")
    if "kind" in frame:
        unknown = sorted(set(frame["kind"]) - set(stats.KINDS))
        if unknown:
            row = int(np.flatnonzero(frame["kind"].isin(unknown).to_numpy())[0])
            raise DataError(f"{where}: row {row} has kind {unknown[0]!r}; kind must be one of {', '.join(stats.KINDS)}")
        frame = frame.loc[(frame["kind"] == stats.FLIP).to_numpy()]
        if frame.empty:
            raise DataError(f"{where}: no flip rows (kind 'flip'); the audit reads (caption, negative) pairs")
    else:
        frame = frame.assign(kind=stats.FLIP)
    frame = frame.assign(type=frame["type"].astype(str)) if "type" in frame else frame.assign(type=DEFAULT_TYPE)
    if types:
        present = sorted(set(frame["type"]))
        unknown = [t for t in types if t not in present]
        if unknown:
            raise DataError(f"{where}: no flip rows of type {', '.join(map(repr, unknown))}; its types are "
                            f"{', '.join(present)}")
        frame = frame.loc[frame["type"].isin(types).to_numpy()]
    if "caption_id" not in frame:
        codes = pd.MultiIndex.from_arrays([frame["image_id"].astype(str), frame["caption"]]).factorize()[0]
        frame = frame.assign(caption_id=[f"caption-{c}" for c in codes])
    if "row_id" not in frame:
        frame = frame.assign(row_id=[str(i) for i in frame.index])
    return frame.reset_index(drop=True)


def check_learners(learners) -> tuple[str, ...]:
    learners = tuple(learners)
    unknown = [name for name in learners if name not in adversary.LEARNERS]
    if unknown or not learners:
        raise DataError(f"--learners {','.join(learners)}: unknown learner {unknown[0] if unknown else '(none)'!r}; "
                        f"choose from {','.join(adversary.LEARNERS)}")
    return learners


# --------------------------------------------------------------------------------------------
# The audit


def blocks(types) -> dict[str, list[str]]:
    """The headline blocks present among ``types``: the paper's flips, the hard flips, and all flips
    (unless those are one type, or exactly one of the other blocks)."""
    present = {str(t) for t in types}
    paper = [t for t in stats.CORE_TYPES if t in present and stats.DECLARED_TYPES[t] == stats.FLIP]
    hard = [t for t in stats.HARD_TYPES if t in present]
    named = {**({PAPER_BLOCK: paper} if paper else {}), **({HARD_BLOCK: hard} if hard else {})}
    every = sorted(present)
    same = len(every) == 1 or any(sorted(members) == every for members in named.values())
    return {**named, **({} if same else {ALL_BLOCK: every})}


def positive_rates(rows: pd.DataFrame, original, variant, groups: dict[str, list[str]], *, bootstrap: int,
                   seed: int, confidence: float = 0.95) -> dict[str, dict]:
    """PR (nested by caption, as the statistics nest it) of a scorer's ``original``/``variant`` scores of
    flip ``rows``, per type and per block of ``groups``: ``{name: {"PR", "interval", "counts"}}``."""
    options = dict(bootstrap=bootstrap, seed=seed, confidence=confidence, require_both_kinds=False)
    extra = sorted(set(rows["type"]) - set(stats.DECLARED_TYPES))
    out = dict(blind.positive_rates(rows, original, variant, extra_types=extra, **options)["per_type"])
    original, variant = np.asarray(original), np.asarray(variant)
    for name, members in groups.items():
        mask = rows["type"].isin(members).to_numpy()
        block = rows.loc[mask].assign(type=name)
        out[name] = blind.positive_rates(block, original[mask], variant[mask], extra_types=[name], **options)["headline"]
    return out


def audit(pairs: pd.DataFrame, *, learners=("word", "char"), folds: int = adversary.FOLDS, bootstrap: int = 1000,
          seed: int = 0, ngram: bool = True, types=None, confidence: float = 0.95, progress: bool = False,
          where: str = "pairs") -> dict:
    """The text-only scorers' figures on the flip rows of ``pairs`` (see the module docstring).

    ``pairs``: columns ``image_id``, ``caption``, ``variant``, ``type`` (``caption_id``, ``row_id``,
    ``kind``, ``original``, ``replacement`` when present; only flip rows are audited, the n-gram LMs
    learn every caption of ``pairs``). Returns ``{"pairs", "images", "types", "blocks", "per_type",
    "artifacts", "settings"}``; a block or type entry has ``pairs``, ``images``, ``learners`` (per learner
    ``accuracy`` and ``interval``) and, with ``ngram``, ``bigram``/``trigram`` (``PR``, ``interval``).
    """
    learners = check_learners(learners)
    try:
        stats.check_options(bootstrap, confidence)
    except stats.LGIPInputError as err:
        raise DataError(f"--bootstrap: {err}") from None
    rows = flip_rows(pairs, types=types, where=where)
    type_of, image_ids = rows["type"].to_numpy().astype(str), rows["image_id"].to_numpy()
    groups = blocks(type_of)
    present = sorted({str(t) for t in type_of})
    entries = {name: _counts(rows, type_of, members) for name, members in groups.items()}
    entries.update({t: _counts(rows, type_of, [t]) for t in present})
    interval = dict(bootstrap=bootstrap, seed=seed, confidence=confidence)
    bar = _bar(len(learners) * len(present) * folds, progress)
    for learner in learners:
        bar.set_description(f"{learner} learner, folds")
        margins = adversary.out_of_fold_margins(rows["caption"].tolist(), rows["variant"].tolist(), image_ids,
                                                types=type_of, learner=learner, folds=folds, progress=bar.update)
        for name, members in [*groups.items(), *((t, [t]) for t in present)]:
            mask = np.isin(type_of, members)
            block = blind.accuracy_block(margins[mask], image_ids[mask], **interval)
            entries[name].setdefault("learners", {})[learner] = {"accuracy": block["accuracy"],
                                                                 "interval": block["interval"]}
    bar.close()
    if ngram:
        train = pairs if {"caption_id", "image_id", "caption"} <= set(pairs.columns) else rows
        for key, (model, _) in NGRAM_SCORERS.items():
            original, variant = blind.lm_scores(rows, model, train=train[["image_id", "caption_id", "caption"]])
            for name, block in positive_rates(rows, original, variant, groups, **interval).items():
                entries[name][key] = {"PR": block["PR"], "interval": block["interval"]}
    return {
        "pairs": len(rows), "images": int(rows["image_id"].nunique()), "types": present,
        "blocks": {name: {"types": members, **entries[name]} for name, members in groups.items()},
        "per_type": {t: entries[t] for t in present},
        "artifacts": word_artifacts(rows),
        "settings": {"learners": list(learners), "folds": folds, "bootstrap": bootstrap, "seed": seed,
                     "confidence": confidence, "ngram": ngram, "learner_settings": adversary.describe(),
                     "min_uses": MIN_USES},
    }


def _counts(rows: pd.DataFrame, type_of: np.ndarray, members: list[str]) -> dict:
    mask = np.isin(type_of, members)
    return {"pairs": int(mask.sum()), "images": int(rows.loc[mask, "image_id"].nunique())}


def _bar(total: int, show: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="fold", disable=not show, leave=False)


def _words(text) -> list[str]:
    return _WORD.findall(text.lower()) if isinstance(text, str) else []


def word_artifacts(rows: pd.DataFrame, *, min_uses: int = MIN_USES, top: int = TOP_WORDS) -> dict[str, list[dict]]:
    """Per type, the lower-cased words used at least ``min_uses`` times on either side of an edit, by how
    unevenly: ``original`` (times removed: in the caption, not matched in the negative) and ``replacement``
    (times inserted), ``imbalance`` = (original - replacement) / uses, sorted by |imbalance| then uses. The
    edited words are the word difference of the two texts, what a text-only learner sees (the replaced word
    with its agreement edits: "A dog is" -> "Two dogs are" removes "a", "dog", "is")."""
    out = {}
    for type_ in sorted(set(rows["type"])):
        mask = (rows["type"] == type_).to_numpy()
        removed, added = Counter(), Counter()
        for caption, variant in zip(rows["caption"][mask], rows["variant"][mask]):
            before, after = Counter(_words(caption)), Counter(_words(variant))
            removed.update(before - after)
            added.update(after - before)
        listed = []
        for word in removed.keys() | added.keys():
            uses = removed[word] + added[word]
            if uses >= min_uses:
                listed.append({"word": word, "original": removed[word], "replacement": added[word], "uses": uses,
                               "imbalance": (removed[word] - added[word]) / uses})
        listed.sort(key=lambda w: (-abs(w["imbalance"]), -w["uses"], w["word"]))
        out[type_] = listed[:top]
    return out


# --------------------------------------------------------------------------------------------
# Untrained models


def image_files(rows: pd.DataFrame, images_dir: str | Path, file_names: dict) -> dict:
    """image_id -> path of its file in ``images_dir`` (the input's file name, else COCO's ``%012d.jpg``),
    for the images of ``rows`` whose file is there."""
    images_dir = Path(images_dir)
    found = {}
    for image_id in pd.unique(rows["image_id"]):
        name = file_names.get(image_id)
        if name is None:
            try:
                name = f"{int(image_id):012d}.jpg"
            except (TypeError, ValueError):
                continue
        path = images_dir / name
        if path.is_file():
            found[image_id] = path
    return found


def untrained_check(rows: pd.DataFrame, models, images_dir: str | Path, *, file_names: dict | None = None,
                    bootstrap: int = 1000, seed: int = 0, confidence: float = 0.95, device: str | None = None,
                    batch_size: int = 32, progress: bool = False, work_dir: str | Path | None = None) -> dict:
    """PR per type and block of each model of ``models`` built with seeded random weights, on the flip
    ``rows`` (from :func:`flip_rows`) whose image file is in ``images_dir``.

    The rows and images are written as a temporary LGIP dataset (``pairs`` and ``images`` configs) and
    scored by :func:`lgip_metric.api.score` (``pretrained="none"``, no embedding cache).
    """
    import tempfile

    from lgip_metric import api

    files = image_files(rows, images_dir, file_names or {})
    kept = rows.loc[rows["image_id"].isin(list(files)).to_numpy()].reset_index(drop=True)
    if kept.empty:
        example = next(iter(pd.unique(rows["image_id"])))
        raise DataError(f"--images {images_dir}: none of the pairs' images is there (looked for files like "
                        f"{(file_names or {}).get(example) or _coco_name(example)}); point --images at their folder")
    groups = blocks(kept["type"])
    results = {}
    with tempfile.TemporaryDirectory(dir=work_dir, prefix="lgip-audit-") as tmp:
        dataset, skipped = _write_dataset(Path(tmp) / "dataset", kept, files)
        for model in models:
            run = api.score(model, Path(tmp) / f"scores-{len(results)}", dataset=dataset, pretrained="none",
                            cache_dir="none", device=device, batch_size=batch_size, progress=progress, num_workers=0)
            frame = run.frame
            rates = positive_rates(frame, frame["s_original"].to_numpy(), frame["s_variant"].to_numpy(), groups,
                                   bootstrap=bootstrap, seed=seed, confidence=confidence)
            results[model] = {"model_id": run.provenance.model_block().get("model_id"), "pairs": len(frame),
                              "images": int(frame["image_id"].nunique()),
                              "PR": {name: {"PR": b["PR"], "interval": b["interval"], "pairs": b["counts"]["variant_rows"],
                                            "images": b["counts"]["images"]} for name, b in rates.items()}}
    return {"images_dir": str(images_dir), "images_found": len(files), "pairs": len(kept),
            "unreadable_images": skipped, "pretrained": "none (seeded random weights)", "models": results}


def _coco_name(image_id) -> str:
    try:
        return f"{int(image_id):012d}.jpg"
    except (TypeError, ValueError):
        return str(image_id)


def _write_dataset(folder: Path, rows: pd.DataFrame, files: dict) -> tuple[Path, dict]:
    """A minimal LGIP dataset of ``rows`` (``pairs``) and their images (``images``, each checked and
    stored once); returns the folder and the unreadable images (id -> reason), whose rows are left out."""
    import datasets

    from lgip_dataset.images import check_images
    from lgip_dataset.materialize import image_row

    ids = list(files)
    codes = {image_id: i for i, image_id in enumerate(ids)}  # int64 image ids for any input's ids
    image_rows = {name: [] for name in schema.IMAGE_FEATURES}
    bad = {}
    for image_id, check in zip(ids, check_images(files[i] for i in ids)):
        if check.error:
            bad[str(image_id)] = check.error
            continue
        for name, value in image_row(codes[image_id], files[image_id].name, check).items():
            image_rows[name].append(value)
    rows = rows.loc[~rows["image_id"].astype(str).isin(bad).to_numpy()]
    if rows.empty:
        raise DataError(f"none of the images found is readable ({next(iter(bad.items()))[1]})")
    pair_rows = {name: [] for name in schema.PAIR_FEATURES}
    for column in pair_rows:
        if column == "image_id":
            pair_rows[column] = [codes[i] for i in rows["image_id"]]
        elif column == "variant_id":
            pair_rows[column] = rows["row_id"].astype(str).tolist()
        elif column in rows and column not in ("span_start", "span_end"):
            pair_rows[column] = [v if isinstance(v, str) else None for v in rows[column].astype(object)]
        else:
            pair_rows[column] = [None] * len(rows)
    shown = not datasets.utils.are_progress_bars_disabled()
    datasets.utils.disable_progress_bars()  # a bar per shard written says nothing here
    try:
        for config, columns, features in ((schema.IMAGES, image_rows, schema.IMAGE_FEATURES),
                                          (schema.PAIRS, pair_rows, schema.PAIR_FEATURES)):
            (folder / config).mkdir(parents=True)
            datasets.Dataset.from_dict(columns, features=features).to_parquet(
                str(folder / config / f"{schema.SPLIT}-00000-of-00001.parquet"))
    finally:
        if shown:
            datasets.utils.enable_progress_bars()
    return folder, bad


# --------------------------------------------------------------------------------------------
# Output


def _cell(block: dict | None, key: str = "accuracy") -> str:
    from lgip_metric.report.tables import number

    return number(block[key], block.get("interval"), digits=3) if block and block.get(key) is not None else "—"


def _untrained_cell(block: dict | None) -> str:
    return f"{_cell(block, 'PR')} ({block['pairs']} pairs)" if block else "—"


def markdown(result: dict, untrained: dict | None = None) -> str:
    """The audit's table (blocks, then types) and the top word imbalances per type."""
    from lgip_metric.report.tables import markdown as table

    learners = result["settings"]["learners"]
    models = list((untrained or {}).get("models", {}))
    header = ["type", "pairs", "images", *(f"{name} learner acc [95% CI]" for name in learners)]
    header += [f"{key} PR" for key in NGRAM_SCORERS] if result["settings"]["ngram"] else []
    header += [f"untrained {m} PR [95% CI]" for m in models]
    lines = []
    for label, entry in [*((f"**{n}**", b) for n, b in result["blocks"].items()), *result["per_type"].items()]:
        name = label.strip("*")
        cells = [label, entry["pairs"], entry["images"], *(_cell(entry["learners"].get(k)) for k in learners)]
        if result["settings"]["ngram"]:
            cells += [_cell(entry.get(key), "PR") for key in NGRAM_SCORERS]
        cells += [_untrained_cell(untrained["models"][m]["PR"].get(name)) for m in models]
        lines.append(cells)
    text = table(header, lines)
    text += ("\nLearner accuracy: held-out share of pairs where a text-only logistic regression picks the human "
             f"caption (a tie counts 1/2), one learner per type, cross-fitted over {result['settings']['folds']} "
             "image folds; 0.5 is chance. PR: caption-nested share where the cross-fitted n-gram LM scores the "
             "caption above the negative (a tie is not positive). Blocks pool their types' pairs.\n")
    if untrained:
        text += (f"Untrained models: seeded random weights, scored on the {untrained['pairs']} pairs of the "
                 f"{untrained['images_found']} images found in {untrained['images_dir']}; a model that cannot see "
                 "sits at PR 0.5 where the texts carry no systematic difference.\n")
    text += f"\n### Words the negatives remove or add most unevenly (>= {result['settings']['min_uses']} uses)\n\n"
    rows = [[t, w["word"], w["original"], w["replacement"], f"{w['imbalance']:+.2f}"]
            for t, words in result["artifacts"].items() for w in words]
    return text + (table(["type", "word", "in original", "in replacement", "imbalance"], rows) if rows
                   else "No word is used that often.\n")
