"""Write a build's flips in SugarCrepe's layout, which CLIP_benchmark's SugarCrepe task reads
(``lgip export BUILD --format sugarcrepe --out DIR``).

CLIP_benchmark's ``sugar_crepe/<task>`` dataset reads ``<dataset_root>/<task>.json``
(``{id: {"filename", "caption", "negative_caption"}}``) and each instance's image from
``<dataset_root>/val2017/<filename>``. The export writes one such JSON per flip type (``<type>.json``; a type
imported from SugarCrepe, ``sugarcrepe_<task>``, under its task's own name, so ``sugar_crepe/<task>`` reads it),
its instances keyed by the flip's ``row_id``, and every image the flips name once, as the bytes the build
stores (what LGIP scores), under its build ``file_name``. ``lgip_export.json`` records the build, its
fingerprint and the files. A type's CLIP_benchmark ``acc`` is the share of its flips whose caption scores at
least as high as the flip: LGIP's pair-level PR, but for ties (PR counts a tie as not preferred).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq

from lgip_dataset import schema
from lgip_dataset.errors import DataError
from lgip_dataset.files.atomic import atomic_write_text
from lgip_dataset.files.hub_io import DatasetFiles
from lgip_dataset.files.images import image_path_inside
from lgip_dataset.sources import sugarcrepe
from lgip_dataset.writing.materialize import publish_folder

FORMAT = "sugarcrepe"  # the `lgip export --format` value
IMAGE_FOLDER = "val2017"  # where CLIP_benchmark's SugarCrepe dataset looks for the images, under its root
MANIFEST = "lgip_export.json"


def task_name(type_: str) -> str:
    """The file stem of a flip type: an imported SugarCrepe subset's own name, else the type."""
    prefix = sugarcrepe.FORMAT + "_"
    return type_[len(prefix):] if type_.startswith(prefix) else type_


def _rows(files: DatasetFiles, config: str, columns: list[str]) -> list[dict]:
    return [row for shard in files.shards(config) for row in pq.read_table(shard, columns=columns).to_pylist()]


def export_sugarcrepe(build: str | Path, out: str | Path, overwrite: bool = False) -> dict:
    """Write the flips of the LGIP folder ``build`` into ``out`` (see the module); return the manifest.

    ``out`` is written beside itself and moved into place when complete; an existing ``out`` is replaced only
    with ``overwrite``.
    """
    out = Path(out)
    if out.exists() and not overwrite:
        raise DataError(f"--out {out} already exists; pass --overwrite to replace it or choose another --out")
    if out.exists() and not out.is_dir():
        raise DataError(f"--out {out} is a file, not a folder; remove it or choose another --out")
    if not Path(build).is_dir():
        raise DataError(f"{build}: not a folder; give a folder made by `lgip build` (e.g. the embedded sample)")
    files = DatasetFiles(build)
    if not files.has(schema.IMAGES):
        raise DataError(f"{build} has no images config (a text-only build); CLIP_benchmark needs the images: build "
                        "it again with --images")
    flips = [row for row in _rows(files, schema.PAIRS, ["row_id", "image_id", "caption", "variant", "kind", "type"])
             if row["kind"] == schema.FLIP]
    if not flips:
        raise DataError(f"{build}: no flips to export (its pairs are all paraphrases); build it with flip families")
    wanted = {row["image_id"] for row in flips}
    names: dict[int, str] = {}
    staging = out.parent / f".{out.name}.partial"
    shutil.rmtree(staging, ignore_errors=True)  # what an interrupted export left
    for shard in files.shards(schema.IMAGES):
        for row in pq.read_table(shard, columns=["image_id", "image", "file_name"]).to_pylist():
            if row["image_id"] in wanted:
                names[row["image_id"]] = _write_image(staging / IMAGE_FOLDER, row, build)
    missing = wanted - set(names)
    if missing:
        shutil.rmtree(staging, ignore_errors=True)
        raise DataError(f"{build}: {len(missing)} image(s) its flips name are not in its images config, e.g. "
                        f"image_id {min(missing)}; rebuild the folder with `lgip build`")
    tasks: dict[str, dict] = {}
    for row in flips:
        instance = {"filename": names[row["image_id"]], "caption": row["caption"], "negative_caption": row["variant"]}
        tasks.setdefault(task_name(row["type"]), {"type": row["type"], "instances": {}})["instances"][row["row_id"]] = instance
    for task, content in sorted(tasks.items()):
        atomic_write_text(staging / f"{task}.json", json.dumps(content["instances"], indent=1, ensure_ascii=False))
    manifest = _manifest(files, build, tasks, len(names))
    atomic_write_text(staging / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    publish_folder(staging, out, overwrite)
    return manifest


def _write_image(folder: Path, row: dict, build: str | Path) -> str:
    """Write one ``images`` row's stored bytes under ``folder`` by its build ``file_name``; return that name."""
    path = image_path_inside(folder, row["file_name"])
    if path is None:
        raise DataError(f"{build}: image_id {row['image_id']} has the file_name {row['file_name']!r}, which leaves the "
                        "export's image folder; rebuild the folder with `lgip build`")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(row["image"]["bytes"])
    return row["file_name"]


def _manifest(files: DatasetFiles, build: str | Path, tasks: dict[str, dict], images: int) -> dict:
    from lgip_dataset import __version__

    return {
        "format": FORMAT,
        "lgip_version": __version__,
        "build": Path(build).name,
        "build_pairs_fingerprint": files.fingerprint(schema.PAIRS),
        "build_source": files.build_info().get("source"),
        "image_folder": IMAGE_FOLDER,
        "images": images,
        "tasks": {task: {"file": f"{task}.json", "type": content["type"], "flips": len(content["instances"])}
                  for task, content in sorted(tasks.items())},
    }

