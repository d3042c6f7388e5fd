"""Scoring resources and provenance (issue 52): `--num-workers` capped as its help says, no empty batch handed
to a tokenizer when every long text's ids are kept, and the pooling a transformers CLIP config with end-token
id 2 records (the largest id, as the engine pools)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from helpers.reliability import run_cli
from lgip_metric.models import ModelError, load_model
from lgip_metric.models.factory import MAX_WORKERS, loader_workers
from lgip_metric.scoring.score_inputs import read_alike
from lgip_metric.scoring.texts import TokenIds
from lgip_metric.testing import make_tiny_hf_clip


def test_num_workers_above_the_cap_is_refused_before_the_work(tmp_path):
    assert loader_workers(MAX_WORKERS, torch.device("cpu")) == MAX_WORKERS
    with pytest.raises(ModelError, match=f"--num-workers 1000: at most {MAX_WORKERS} worker processes"):
        loader_workers(1000, torch.device("cpu"))
    outcome = run_cli("score", "--model", "random:tiny-clip", "--out", tmp_path / "run", "--cache-dir", "none",
                      "--num-workers", "1000", "--no-progress")
    assert outcome.code == 2 and "Traceback" not in outcome.text and "--num-workers 1000" in outcome.err
    assert not (tmp_path / "run" / "scores.parquet").exists()


class _StrictTokenizer:
    """An encoder stand-in whose tokenizer refuses an empty batch, as transformers' does."""

    def tokenize(self, texts: list[str]) -> list[list[int]]:
        if not texts:
            raise IndexError("list index out of range")
        return [[ord(c) for c in t][:8] for t in texts]


def test_read_alike_tokenises_nothing_when_every_long_text_is_kept():
    texts = ["a red dog runs far", "a red dog runs fast", "x" * 20, "y" * 20]
    caption_idx, variant_idx = np.array([0, 2]), np.array([1, 3])
    ids = [[ord(c) for c in t][:8] for t in texts]
    tokens = TokenIds(len(texts), np.arange(4), [(np.array([t for x in ids for t in x], np.int32),
                                                  np.array([len(x) for x in ids]))])
    alike = read_alike(_StrictTokenizer(), texts, caption_idx, variant_idx, np.array([0, 1]), tokens)
    assert alike.tolist() == [True, False]  # the first pair is cut to the same 8 ids


@pytest.fixture(scope="module")
def hf_clip(tmp_path_factory) -> Path:
    return Path(make_tiny_hf_clip(tmp_path_factory.mktemp("hf-clip")))


def test_pooling_recorded_as_the_engine_pools(hf_clip, tmp_path):
    assert load_model(str(hf_clip), device="cpu").settings()["text"]["pooling"] == "eos token"
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    for path in hf_clip.iterdir():
        (legacy / path.name).write_bytes(path.read_bytes())
    config = json.loads((legacy / "config.json").read_text(encoding="utf-8"))
    config["text_config"]["eos_token_id"] = 2
    (legacy / "config.json").write_text(json.dumps(config), encoding="utf-8")
    encoder = load_model(str(legacy), device="cpu")
    assert encoder.pool_rule == ("argmax", None)
    assert encoder.settings()["text"]["pooling"].startswith("largest token id")
