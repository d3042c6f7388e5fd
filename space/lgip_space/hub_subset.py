"""The first N ``pairs`` rows of a Hub LGIP dataset, with their images, as a small local folder.

Streaming reads only what it needs: the first N pair rows, then the images config until every
image those rows use is found (builds write images in the same order as pairs), so a Space never
downloads a multi-gigabyte images config to score a few hundred rows.
"""
from __future__ import annotations

from pathlib import Path

import datasets
import gradio as gr

from lgip_dataset import schema
from lgip_dataset.writing.card import write_minimal_card

def load_dataset(*args, **kwargs):
    """``datasets.load_dataset`` (a seam: tests point it at a local folder)."""
    return datasets.load_dataset(*args, **kwargs)


def first_rows(dataset_id: str, rows: int, folder: Path) -> Path:
    """Write ``folder`` (``pairs`` + ``images`` configs and a card) from the first ``rows`` rows of ``dataset_id``."""
    try:
        pairs = load_dataset(dataset_id, schema.PAIRS, split=schema.SPLIT, streaming=True)
        columns = schema.PAIR_FEATURES  # an older dataset's retired columns stay behind; one it lacks is null
        pairs = datasets.Dataset.from_list([{name: row.get(name) for name in columns} for row in pairs.take(rows)],
                                           features=columns)
        wanted = set(pairs["image_id"])
        images = load_dataset(dataset_id, schema.IMAGES, split=schema.SPLIT, streaming=True)
        found = []
        for row in images.cast_column("image", datasets.Image(decode=False)):
            if row["image_id"] in wanted:
                found.append(row)
                wanted.discard(row["image_id"])
                if not wanted:
                    break
    except Exception as err:  # the Hub client raises many types; name the dataset and the cause
        raise gr.Error(f"Could not read the first {rows:,} rows of Hub dataset {dataset_id!r}: {err}") from None
    if not len(pairs):
        raise gr.Error(f"Hub dataset {dataset_id!r} has no pairs rows.")
    if wanted:
        raise gr.Error(f"Hub dataset {dataset_id!r} lacks {len(wanted)} image(s) its pairs rows use "
                       f"(e.g. image_id {sorted(wanted)[0]}); it is not a complete LGIP dataset.")
    columns = schema.IMAGE_FEATURES  # a dataset built before a column was added (schema.ADDED_FIELDS) lacks it
    images = datasets.Dataset.from_list([{name: row.get(name) for name in columns} for row in found], features=columns)
    return write_folder(folder, {schema.PAIRS: pairs, schema.IMAGES: images}, f"First {rows:,} rows of {dataset_id}.")


def write_folder(folder: Path, tables: dict[str, datasets.Dataset], note: str) -> Path:
    """A minimal Hub-layout LGIP folder: one ``test`` shard per config and a card declaring the configs."""
    for config, table in tables.items():
        (folder / config).mkdir(parents=True, exist_ok=True)
        table.to_parquet(str(folder / config / f"{schema.SPLIT}-00000-of-00001.parquet"))
    write_minimal_card(folder, tables, note)
    return folder
