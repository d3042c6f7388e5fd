"""Pixels and token ids kept for the later models of a sweep (issue 53): the kept inputs are exactly what a fresh
decode and tokenisation make, a sweep reads them and scores bit for bit as separate runs, models that differ in
any preprocessing setting share nothing, damaged files are made again, and the folder stays within its bound."""
from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st
from PIL import Image

from lgip_dataset import SAMPLE_DIR
from lgip_dataset.errors import LGIPError
from lgip_metric.models.pixel_stages import processor_stages, torchvision_stages
from lgip_metric.models.tree_pack import shared_prefix
from lgip_metric.scoring import input_cache
from lgip_metric.scoring.engine import score_dataset
from lgip_metric.scoring.input_cache import PixelStore, TokenStore, evict
from lgip_metric.scoring.texts import shared_prefixes
from lgip_metric.sweep import evaluate_models, model_slug
from lgip_metric.testing import make_tiny_hf_clip, make_tiny_openclip, make_tiny_siglip

LIMIT = 400  # rows of the sample: 7 images, a few hundred texts


def _images() -> list[Image.Image]:
    """Real COCO pictures of the sample in their own sizes, and odd ones (portrait, tiny, grey, with alpha)."""
    import pyarrow.parquet as pq

    table = pq.read_table(next((SAMPLE_DIR / "images").glob("*.parquet")))
    from lgip_dataset.files.images import decode_image

    real = [decode_image(cell["bytes"]) for cell in table.column("image").to_pylist()[:4]]
    rng = np.random.default_rng(0)
    odd = [Image.fromarray(rng.integers(0, 256, (300, 17, 3), np.uint8)), Image.new("RGB", (5, 3), (9, 200, 40)),
           Image.fromarray(rng.integers(0, 256, (64, 90), np.uint8)).convert("RGB")]
    return real + odd


def _open_clip_transforms():
    """open_clip's eval transform for each preprocessing the registry's open_clip models use, and the resize modes."""
    from open_clip.constants import OPENAI_DATASET_MEAN, OPENAI_DATASET_STD
    from open_clip.transform import PreprocessCfg, image_transform_v2

    configs = [PreprocessCfg(size=224, mean=OPENAI_DATASET_MEAN, std=OPENAI_DATASET_STD),
               PreprocessCfg(size=336, mean=OPENAI_DATASET_MEAN, std=OPENAI_DATASET_STD),
               PreprocessCfg(size=224, mean=(0.5,) * 3, std=(0.5,) * 3, interpolation="bilinear"),
               PreprocessCfg(size=32, resize_mode="squash"), PreprocessCfg(size=48, resize_mode="longest", fill_color=7)]
    return [image_transform_v2(cfg, is_train=False) for cfg in configs]


def test_the_halves_of_every_preprocessing_make_its_inputs_bit_for_bit(tmp_path):
    from transformers import CLIPImageProcessor, SiglipImageProcessor

    stages = [torchvision_stages(t, {}) for t in _open_clip_transforms()]
    processors = [CLIPImageProcessor(), SiglipImageProcessor(), SiglipImageProcessor(size={"height": 384, "width": 384})]
    stages += [processor_stages(p, {}) for p in processors]
    transforms = [*(lambda image, t=t: {"pixel_values": t(image)} for t in _open_clip_transforms()),
                  *(lambda image, p=p: {k: v[0] for k, v in p(images=[image], return_tensors="pt").items()} for p in processors)]
    for halves, whole in zip(stages, transforms):
        assert halves is not None
        for image in _images():
            pixels = halves.prefix(image)
            assert pixels.dtype == np.uint8 and pixels.ndim == 3
            got, want = halves.finish(pixels), whole(image)
            assert got.keys() == want.keys() and all(torch.equal(got[k], want[k]) for k in want)


def test_encoders_cut_their_preprocessing_where_it_can_be_and_not_elsewhere(tmp_path):
    from lgip_metric.models import load_model

    assert load_model("random:tiny-clip").pixel_stages is not None
    assert load_model(make_tiny_hf_clip(tmp_path / "hf")).pixel_stages is not None
    assert load_model(make_tiny_siglip(tmp_path / "siglip")).pixel_stages is not None
    assert load_model(make_tiny_siglip(tmp_path / "naflex", version=2, naflex=True)).pixel_stages is None  # patches


def _counts(folder: Path) -> dict:
    return json.loads((folder / "provenance.json").read_text(encoding="utf-8"))["counts"]


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory) -> list[str]:
    root = tmp_path_factory.mktemp("tiny-models")
    return [make_tiny_openclip(root / f"m{layers}", layers=layers) for layers in (2, 3)]


@pytest.fixture(scope="module")
def separate(tiny_models, tmp_path_factory) -> dict[str, bytes]:
    """Each model scored on its own, with a cache of its own: the reference score files."""
    root = tmp_path_factory.mktemp("separate")
    out = {}
    for i, model in enumerate(tiny_models):
        score_dataset(model, SAMPLE_DIR, root / str(i), cache_dir=root / f"cache{i}", num_workers=0, progress=False,
                      limit=LIMIT)
        out[model] = (root / str(i) / "scores.parquet").read_bytes()
    return out


def test_a_sweep_decodes_and_tokenises_once_and_scores_as_separate_runs(tiny_models, separate, tmp_path):
    sweep = evaluate_models(tiny_models, tmp_path / "sweep", cache_dir=tmp_path / "cache", num_workers=0, limit=LIMIT,
                            bootstrap=0, progress=False, paper=False)
    assert not sweep.failed
    first, second = (_counts(tmp_path / "sweep" / model_slug(m)) for m in tiny_models)
    assert first["kept_pixels"] == first["kept_tokens"] == 0
    assert second["kept_pixels"] == second["encoded_images"] == first["unique_images"] > 0
    assert second["kept_tokens"] == second["encoded_texts"] == first["unique_texts"] > 0
    for model in tiny_models:
        assert (tmp_path / "sweep" / model_slug(model) / "scores.parquet").read_bytes() == separate[model]
    kept = tmp_path / "cache" / input_cache.INPUTS
    assert len(list((kept / "pixels").glob("*/settings.json"))) == 1 and len(list((kept / "tokens").glob("*/settings.json"))) == 1


def test_a_single_run_reads_kept_inputs_but_keeps_none_of_its_own(tiny_models, tmp_path):
    score_dataset(tiny_models[0], SAMPLE_DIR, tmp_path / "a", cache_dir=tmp_path / "cache", num_workers=0,
                  progress=False, limit=LIMIT)
    assert not (tmp_path / "cache" / input_cache.INPUTS).exists()


def test_models_whose_preprocessing_differs_in_one_setting_share_no_pixels(tiny_models, separate, tmp_path):
    other = tmp_path / "other"
    make_tiny_openclip(other)
    config = json.loads((other / "open_clip_config.json").read_text())
    config["preprocess_cfg"]["std"] = [0.5, 0.5, 0.51]
    (other / "open_clip_config.json").write_text(json.dumps(config))
    models = [tiny_models[0], f"local-dir:{other}"]
    evaluate_models(models, tmp_path / "sweep", cache_dir=tmp_path / "cache", num_workers=0, limit=LIMIT, bootstrap=0,
                    progress=False, paper=False)
    counts = _counts(tmp_path / "sweep" / model_slug(models[1]))
    assert counts["kept_pixels"] == 0 and counts["kept_tokens"] == counts["encoded_texts"] > 0  # same tokenizer
    assert len(list((tmp_path / "cache" / input_cache.INPUTS / "pixels").glob("*/settings.json"))) == 2


def test_damaged_kept_pixels_and_tokens_are_made_again(tiny_models, separate, tmp_path):
    cache = tmp_path / "cache"
    score_dataset(tiny_models[0], SAMPLE_DIR, tmp_path / "a", cache_dir=cache, num_workers=0, progress=False,
                  limit=LIMIT, keep_inputs=True)
    pixels = sorted((cache / input_cache.INPUTS / "pixels").rglob("*.px"))
    data = bytearray(pixels[0].read_bytes())
    data[-1] ^= 1
    pixels[0].write_bytes(bytes(data))
    pixels[1].write_bytes(pixels[1].read_bytes()[:40])
    chunk = next((cache / input_cache.INPUTS / "tokens").rglob("chunk-*.npz"))
    chunk.write_bytes(b"not a zip")
    score_dataset(tiny_models[1], SAMPLE_DIR, tmp_path / "b", cache_dir=cache, num_workers=0, progress=False,
                  limit=LIMIT, keep_inputs=True)
    counts = _counts(tmp_path / "b")
    assert counts["kept_pixels"] == counts["encoded_images"] - 2 and counts["kept_tokens"] == 0
    assert (tmp_path / "b" / "scores.parquet").read_bytes() == separate[tiny_models[1]]
    assert not chunk.exists()
    store = PixelStore(cache, {}, write=False)
    store.folder = pixels[0].parent.parent
    assert all(store.read(p.stem) is not None for p in pixels[:2])  # the two were written again, whole


def test_the_folder_keeps_the_most_recently_used_within_its_bound(tmp_path, monkeypatch):
    store = PixelStore(tmp_path, {"size": 8}, write=True)
    keys = [f"{i:064x}" for i in range(6)]
    for i, key in enumerate(keys):
        store.write(key, np.full((8, 8, 3), i, np.uint8))
        os.utime(store._path(key), ns=(10**18 + i * 10**9, 10**18 + i * 10**9))
    store.read(keys[0])  # read now: the most recently used
    size = store._path(keys[1]).stat().st_size
    assert evict(tmp_path, limit=3 * size) == 3
    assert [store.read(k) is not None for k in keys] == [True, False, False, False, True, True]
    monkeypatch.setenv("LGIP_INPUT_CACHE_GB", "lots")
    with pytest.raises(LGIPError, match="LGIP_INPUT_CACHE_GB='lots'"):
        input_cache.limit_bytes()


def test_a_bad_bound_is_refused_before_any_scoring(tiny_models, tmp_path, monkeypatch):
    monkeypatch.setenv("LGIP_INPUT_CACHE_GB", "-1")
    with pytest.raises(LGIPError, match="LGIP_INPUT_CACHE_GB='-1' is negative"):
        score_dataset(tiny_models[0], SAMPLE_DIR, tmp_path / "a", cache_dir=tmp_path / "cache", num_workers=0,
                      progress=False, limit=LIMIT, keep_inputs=True)
    assert not (tmp_path / "a").exists()


def test_writers_of_the_same_inputs_at_once_leave_whole_files(tmp_path):
    store, tokens = PixelStore(tmp_path, {"s": 1}, write=True), TokenStore(tmp_path, {"t": 1}, write=True)
    key = "ab" * 32
    pixels = np.arange(3 * 40 * 50, dtype=np.int64).astype(np.uint8).reshape(40, 50, 3)

    def write(_):
        store.write(key, pixels)
        tokens.write([key], [np.arange(5)])
        got = store.read(key)
        return got is not None and np.array_equal(got, pixels)

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(write, range(64)))
    assert [p.name for p in store._path(key).parent.iterdir()] == [f"{key}.px"]  # no temporary file left
    assert list(tokens.lookup([key]).values())[0].tolist() == [0, 1, 2, 3, 4]


@given(st.lists(st.lists(st.integers(0, 4), max_size=7), max_size=40))
def test_shared_prefixes_match_the_pairwise_count(rows):
    flat = np.array([t for row in rows for t in row], np.int64)
    bounds = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)
    want = [0, *(shared_prefix(a, b) for a, b in zip(rows, rows[1:]))][: len(rows)]
    assert shared_prefixes(flat, bounds).tolist() == want


def test_the_text_only_scores_of_the_same_rows_are_computed_once_per_process(monkeypatch):
    from lgip_metric.statistics import blind
    from lgip_dataset.files.hub_io import load_config

    rows = load_config(SAMPLE_DIR, "pairs").to_pandas().head(300)
    calls = []
    real = blind._lm_scores
    monkeypatch.setattr(blind, "_lm_scores", lambda *a: calls.append(a[1]) or real(*a))
    monkeypatch.setattr(blind, "_KEPT", type(blind._KEPT)())
    first = blind.lm_scores(rows)
    first[0][:] = 0  # a caller's changes do not reach what is kept
    again = blind.lm_scores(rows.copy())
    assert len(calls) == 1 and np.array_equal(again[0], real(rows, blind.BigramKN, None)[0]) and again[0].any()
    blind.lm_scores(rows, blind.TrigramKN)
    changed = rows.assign(variant=rows["variant"] + " under a zebra")
    assert not np.array_equal(blind.lm_scores(changed)[1], again[1])
    assert calls == [blind.BigramKN, blind.TrigramKN, blind.BigramKN]


def test_the_learned_adversary_of_the_same_rows_is_fitted_once_per_process(monkeypatch):
    from lgip_dataset.files.hub_io import load_config
    from lgip_dataset.selection import adversary
    from lgip_metric.statistics import blind

    rows = load_config(SAMPLE_DIR, "pairs").to_pandas()
    calls = []
    real = adversary.out_of_fold_margins
    monkeypatch.setattr(adversary, "out_of_fold_margins", lambda *a, **k: calls.append(1) or real(*a, **k))
    monkeypatch.setattr(blind, "_KEPT", type(blind._KEPT)())
    first = blind.adversary_report(rows, bootstrap=0)
    assert blind.adversary_report(rows.copy(), bootstrap=0) == first and len(calls) == 1
    changed = rows.assign(variant=rows["variant"] + " under a zebra")
    blind.adversary_report(changed, bootstrap=0)
    assert len(calls) == 2


def test_a_run_that_keeps_nothing_looks_for_kept_inputs_only_where_some_were_kept(tiny_models, tmp_path, monkeypatch):
    from lgip_metric.models import base, load_model
    from lgip_metric.scoring.engine import _input_stores

    digests = []
    real = base.tokenizer_digest
    monkeypatch.setattr(base, "tokenizer_digest", lambda t: digests.append(1) or real(t))
    encoder = load_model(tiny_models[0])
    assert _input_stores(encoder, tmp_path, keep=False) == (None, None) and digests == []  # a fresh cache: no lookups
    pixels, tokens = _input_stores(encoder, tmp_path, keep=True)
    assert pixels.write_new and tokens.write_new and digests == [1]
    pixels, tokens = _input_stores(load_model(tiny_models[1]), tmp_path, keep=False)  # kept by the one before
    assert pixels is not None and tokens is not None and not pixels.write_new and not tokens.write_new
