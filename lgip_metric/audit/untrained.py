"""Untrained models on a probe set's pairs: seeded random-weight models of real architectures score the
pairs whose images are at hand (through :func:`lgip_metric.api.score`); one that cannot see sits at PR 0.5
where the texts carry no systematic difference."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from lgip_dataset import schema
from lgip_dataset.errors import DataError
from lgip_metric.audit.blocks import blocks
from lgip_metric.audit.text_only import positive_rates


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

    from lgip_dataset.files.images import check_images
    from lgip_dataset.writing.materialize import image_row

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
