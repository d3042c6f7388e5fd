"""The images config's cells are read in pieces from its parquet shards, by any process, in any order."""
import pickle

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lgip_dataset.errors import DataError
from lgip_dataset.files.image_cells import READ_ROWS, ImageCells


def write_shards(folder, sizes, row_group_size):
    """Shards of ``sizes`` rows; row ``r`` has image_id ``1000 + r`` and bytes ``b"image r"``."""
    paths, first = [], 0
    for k, size in enumerate(sizes):
        rows = range(first, first + size)
        table = pa.table({"image_id": [1000 + r for r in rows],
                          "image": [{"bytes": f"image {r}".encode(), "path": None} for r in rows]})
        paths.append(folder / f"test-{k:05d}.parquet")
        pq.write_table(table, paths[-1], row_group_size=row_group_size)
        first += size
    return paths


def test_cells_in_any_order_across_shards_and_row_groups(tmp_path):
    sizes = (3 * READ_ROWS + 5, 1, 2 * READ_ROWS)
    cells = ImageCells(write_shards(tmp_path, sizes, row_group_size=READ_ROWS + 3))
    total = sum(sizes)
    assert cells.image_ids().tolist() == [1000 + r for r in range(total)]
    strided = [r for start in range(0, total, 2 * READ_ROWS + 1) for r in range(start, min(start + 3, total))]
    order = list(range(total)) + list(range(total - 1, -1, -7)) + [5, 5, 0, total - 1] + strided + [1, READ_ROWS + 2]
    assert [cells.cell(r)["bytes"] for r in order] == [f"image {r}".encode() for r in order]


def test_an_open_reader_never_travels_to_another_process(tmp_path):
    cells = ImageCells(write_shards(tmp_path, (40,), row_group_size=40))
    assert cells.cell(20)["bytes"] == b"image 20"
    copy = pickle.loads(pickle.dumps(cells))  # what a spawned DataLoader worker receives
    assert copy._reader is None
    assert copy.cell(3)["bytes"] == b"image 3"


def test_shards_without_the_image_columns_are_named(tmp_path):
    path = tmp_path / "test-00000.parquet"
    pq.write_table(pa.table({"image_id": [1]}), path)
    with pytest.raises(DataError, match=r"test-00000.parquet.*\['image'\]"):
        ImageCells([path])


def test_a_hub_dataset_is_downloaded_config_by_config_and_its_shards_checked(tmp_path, monkeypatch):
    import shutil

    import huggingface_hub

    from lgip_dataset import SAMPLE_DIR
    from lgip_dataset.files.hub_io import config_files

    asked = []

    def snapshot_download(repo_id, repo_type, allow_patterns):  # the Hub, served from a local copy
        asked.append((repo_id, repo_type, allow_patterns))
        folder = tmp_path / "hub"
        for pattern in allow_patterns:
            config = pattern.split("/")[0]
            shutil.copytree(SAMPLE_DIR / config, folder / config, dirs_exist_ok=True)
        return str(folder)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_download)
    shards = config_files("org/lgip", "images")
    assert asked == [("org/lgip", "dataset", ["images/*.parquet"])]
    assert [s.name for s in shards] == sorted(p.name for p in (SAMPLE_DIR / "images").glob("*.parquet"))
    assert ImageCells(shards).image_ids().size == 50

    with pytest.raises(DataError, match="neither an existing folder nor a Hub id"):
        config_files("no-such-folder", "images")

    def offline(*args, **kwargs):
        raise OSError("the Hub cannot be reached")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", offline)
    with pytest.raises(DataError, match="could not download config 'images' of Hub dataset 'org/lgip'.*reached"):
        config_files("org/lgip", "images")
