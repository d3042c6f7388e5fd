"""``lgip score``: arguments, loud random-weights note, skipped rows reported, clear errors (exit 2)."""
from __future__ import annotations

import json
import sys
import uuid

import pytest

from lgip_metric import cli
from lgip_metric.testing import make_tiny_dataset


@pytest.fixture(scope="module")
def dataset(tmp_path_factory, sample_coco_dir):
    return make_tiny_dataset(tmp_path_factory.mktemp("data") / f"lgip-{uuid.uuid4().hex[:12]}", sample_coco_dir)


def lgip(monkeypatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["lgip"])
    return cli.main(["score", *args])


def test_score_writes_files_and_says_random_weights(dataset, tmp_path, monkeypatch, capsys):
    code = lgip(monkeypatch, "--model", "tiny-clip", "--dataset", str(dataset), "--out", str(tmp_path / "out"),
                "--cache-dir", str(tmp_path / "cache"), "--batch-size", "8", "--num-workers", "0", "--no-progress")
    out = capsys.readouterr().out
    assert code == 0
    assert "RANDOM WEIGHTS" in out and "scored 32 of 36 rows" in out
    assert "skipped image 1 (4 rows): corrupt or unreadable image" in out
    provenance = json.loads((tmp_path / "out" / "provenance.json").read_text())
    assert provenance["random_weights"] is True and (tmp_path / "out" / "scores.parquet").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--model", "tiny-clip", "--dataset", "{empty}"], "no parquet files for config 'pairs'"),
        (["--model", "tiny-clip", "--cache-dir", "{file}/cache"], "is not writable"),
        (["--model", "tiny-clip", "--batch-size", "0"], "--batch-size must be at least 1"),
    ],
)
def test_bad_input_is_a_clear_error(args, message, dataset, tmp_path, monkeypatch, capsys):
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("x")
    args = [a.format(empty=tmp_path / "empty", file=tmp_path / "file") for a in args]
    defaults = {"--dataset": str(dataset), "--cache-dir": "none"}
    extra = [x for key, value in defaults.items() if key not in args for x in (key, value)]
    code = lgip(monkeypatch, *args, *extra, "--out", str(tmp_path / "out"), "--no-progress")
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
    assert err.startswith("lgip score: error:")


def test_help_lists_the_options(monkeypatch, capsys):
    with pytest.raises(SystemExit) as done:
        lgip(monkeypatch, "--help")
    text = capsys.readouterr().out
    assert done.value.code == 0
    for option in ("--model", "--pretrained", "--dataset", "--config", "--out", "--batch-size", "--precision",
                   "--device", "--cache-dir", "siglip2-b16-224", "random:"):
        assert option in text


_SCORE_WITHOUT_DATASETS = """
import sys
from lgip_metric import cli
code = cli.main(["score", "--model", "tiny-clip", "--dataset", {dataset!r}, "--out", {out!r}, "--cache-dir", "none",
                 "--batch-size", "8", "--num-workers", "0", "--no-progress"])
print(code, "datasets" in sys.modules)
"""


def test_score_reads_the_dataset_without_importing_datasets(dataset, tmp_path):
    """`lgip score` reads a folder's shards with pyarrow alone: importing `datasets` and writing its cache of each
    folder cost a second of every run (the CLIP_benchmark peer ratio), and the rows are the same."""
    import subprocess

    script = _SCORE_WITHOUT_DATASETS.format(dataset=str(dataset), out=str(tmp_path / "out"))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.split()[-2:] == ["0", "False"], result.stdout + result.stderr


def test_the_engines_reader_gives_the_rows_datasets_loads(dataset):
    from lgip_dataset import schema
    from lgip_dataset.files import hub_io

    files = hub_io.DatasetFiles(dataset)
    for config in (schema.PAIRS, schema.IMAGES):
        assert files.table(config).equals(files.load(config).with_format("arrow")[:])
