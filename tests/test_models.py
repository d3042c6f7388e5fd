"""Model registry, name resolution and the loading traps that silently change results (QuickGELU for
OpenAI weights, SigLIP text padding, per-tag preprocessing), on tiny real architectures."""
from __future__ import annotations

import json
import threading
from dataclasses import replace
from pathlib import Path

import open_clip
import pytest
import torch
from open_clip.factory import get_model_config
from open_clip.pretrained import get_pretrained_cfg
from PIL import Image

from lgip_dataset.errors import LGIPError
from lgip_metric.statistics import reference
from lgip_metric.models import PAPER_MODELS, REGISTRY, ModelError, ModelSpec, load_model, resolve_model
from lgip_metric.models import openclip_backend
from lgip_metric.testing import make_tiny_hf_clip, make_tiny_openclip, make_tiny_siglip
from lgip_metric.scoring.texts import length_batches

TEXTS = [
    "a dog",
    "A brown dog laying on the ground next to a red frisbee in a park.",
    "two people standing in a room " * 12,  # longer than CLIP's 77-token context: truncated
    "Un café très chaud, s'il vous plaît!",
]

PAPER_TABLE = {
    "clip-vit-b16": ("open_clip", "ViT-B-16-quickgelu", "openai"),
    "clip-vit-l14": ("open_clip", "ViT-L-14-quickgelu", "openai"),
    "openclip-vit-l14-laion2b": ("open_clip", "ViT-L-14", "laion2b_s32b_b82k"),
    "openclip-vit-h14-laion2b": ("open_clip", "ViT-H-14", "laion2b_s32b_b79k"),
    "eva02-l14": ("open_clip", "EVA02-L-14", "merged2b_s4b_b131k"),
    "siglip-b16-224": ("transformers", "google/siglip-base-patch16-224", None),
    "siglip-b16-384": ("transformers", "google/siglip-base-patch16-384", None),
    "siglip-l16-384": ("transformers", "google/siglip-large-patch16-384", None),
    "siglip2-b16-224": ("transformers", "google/siglip2-base-patch16-224", None),
}


@pytest.fixture(scope="module")
def coco_texts(sample_coco_dir):
    data = json.loads((sample_coco_dir / "annotations" / "captions_val2017.json").read_text(encoding="utf-8"))
    return [a["caption"].strip() for a in data["annotations"][:3000]]


@pytest.fixture(scope="module")
def siglip_dir(tmp_path_factory, coco_texts):
    return make_tiny_siglip(tmp_path_factory.mktemp("siglip"), captions=coco_texts)


@pytest.fixture(scope="module")
def siglip2_dir(tmp_path_factory, coco_texts):
    return make_tiny_siglip(tmp_path_factory.mktemp("siglip2"), version=2, captions=coco_texts)


@pytest.fixture(scope="module")
def openclip_dir(tmp_path_factory):
    return make_tiny_openclip(tmp_path_factory.mktemp("openclip"))


def engine_text_embeddings(encoder, texts, batch_size=2):
    """Text embeddings the way the engine computes them: length-sorted batches."""
    ids = encoder.tokenize([encoder.normalize_text(t) for t in texts])
    out = torch.zeros(len(texts), _dim(encoder))
    widths = []
    for index in length_batches([len(i) for i in ids], batch_size, encoder.dynamic_padding):
        batch = encoder.text_batch([ids[i] for i in index])
        widths.append(batch["input_ids"].shape[1])
        out[index] = encoder.encode_texts(batch)
    return out, widths


def _dim(encoder):
    return encoder.encode_texts(encoder.text_batch(encoder.tokenize(["a"]))).shape[1]


# --- registry and resolution -------------------------------------------------------------------


def test_registry_has_the_papers_nine_models_with_exact_identifiers():
    for name, (backend, identifier, pretrained) in PAPER_TABLE.items():
        spec = REGISTRY[name]
        assert (spec.backend, spec.identifier, spec.pretrained) == (backend, identifier, pretrained)
        assert spec.paper_row and not spec.random_weights
    for name in ("clip-vit-b16", "clip-vit-l14", "openclip-vit-l14-laion2b", "openclip-vit-h14-laion2b", "eva02-l14"):
        spec = REGISTRY[name]
        assert get_pretrained_cfg(spec.identifier, spec.pretrained), f"{spec} is not a known open_clip tag"


def test_quoted_paper_values_are_keyed_by_the_registrys_paper_models():
    assert [row["name"] for row in reference.table1()] == list(PAPER_MODELS)
    assert [row["model"] for row in reference.table1()] == [REGISTRY[n].paper_row for n in PAPER_MODELS]
    assert {row["name"] for row in reference.table2()} < set(PAPER_MODELS)


@pytest.mark.parametrize(
    "name, pretrained, expected",
    [
        ("ViT-B-16-quickgelu/openai", None, ("open_clip", "ViT-B-16-quickgelu", "openai", False)),
        ("ViT-B-32", "laion2b_s34b_b79k", ("open_clip", "ViT-B-32", "laion2b_s34b_b79k", False)),
        ("random:clip-vit-b16", None, ("open_clip", "ViT-B-16-quickgelu", "openai", True)),
        ("clip-vit-b16", "none", ("open_clip", "ViT-B-16-quickgelu", "openai", True)),
        ("hf-hub:timm/ViT-B-16-SigLIP", None, ("open_clip", "hf-hub:timm/ViT-B-16-SigLIP", None, False)),
        ("google/siglip2-base-patch16-224", None, ("transformers", "google/siglip2-base-patch16-224", None, False)),
        ("tiny-clip", None, ("open_clip", "lgip-tiny-clip", None, True)),
    ],
)
def test_resolve_model_forms(name, pretrained, expected):
    spec = resolve_model(name, pretrained)
    assert (spec.backend, spec.identifier, spec.pretrained, spec.random_weights) == expected


def test_resolve_local_folders(openclip_dir, siglip_dir, tmp_path):
    folder = openclip_dir.removeprefix("local-dir:")
    assert resolve_model(folder).identifier == f"local-dir:{folder}"
    assert resolve_model(siglip_dir).backend == "transformers"
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match="neither open_clip_config.json"):
        resolve_model(str(tmp_path / "empty"))


def test_checkpoint_loads_skip_the_random_initialisation_and_keep_every_weight(openclip_dir, tmp_path, monkeypatch):
    from safetensors.torch import load_file, save_file

    folder = Path(openclip_dir.removeprefix("local-dir:"))
    saved = load_file(str(folder / "open_clip_model.safetensors"))
    drawn = []
    original = torch.nn.init.normal_
    monkeypatch.setattr(torch.nn.init, "normal_", lambda *a, **k: (drawn.append(1), original(*a, **k))[1])
    local = load_model(openclip_dir, device="cpu")
    assert not drawn  # nothing drawn that the checkpoint overwrites
    assert set(local.model.state_dict()) == set(saved)
    assert all(torch.equal(local.model.state_dict()[k], v) for k, v in saved.items())
    shuffled = {k: torch.randn_like(v) for k, v in saved.items()}  # another checkpoint: a file given as --pretrained
    save_file(shuffled, str(tmp_path / "other.safetensors"))
    config = json.loads((folder / "open_clip_config.json").read_text())["model_cfg"]
    spec = replace(resolve_model("random:tiny-clip"), random_weights=False, pretrained=str(tmp_path / "other.safetensors"),
                   config=config)
    assert openclip_backend._checkpoint_follows(spec)
    from_file = load_model(spec, device="cpu")
    assert all(torch.equal(from_file.model.state_dict()[k], v) for k, v in shuffled.items())
    random = load_model("random:tiny-clip", device="cpu")
    assert drawn and not openclip_backend._checkpoint_follows(random_spec := resolve_model("random:tiny-clip"))
    for other in (replace(random_spec, random_weights=False, pretrained="openai"),  # a tag: downloaded
                  replace(random_spec, random_weights=False, identifier="hf-hub:org/repo"),  # random where it fails
                  replace(random_spec, random_weights=False, pretrained=str(tmp_path / "weights.npz"))):
        assert not openclip_backend._checkpoint_follows(other)
    assert random.weights_sha256 == load_model("random:tiny-clip", device="cpu").weights_sha256  # still seeded


def test_local_folder_with_only_a_file_open_clip_does_not_read_is_refused(openclip_dir, tmp_path):
    import shutil

    folder = tmp_path / "pt-only"
    shutil.copytree(openclip_dir.removeprefix("local-dir:"), folder)
    (folder / "open_clip_model.safetensors").rename(folder / "model.pt")  # open_clip would go on with random weights
    with pytest.raises(ModelError, match=r"holds no weights file open_clip reads \(\*\.safetensors, \*\.bin, \*\.pth\)"):
        resolve_model(f"local-dir:{folder}")


@pytest.mark.parametrize(
    "name, suggestion",
    [("clip-vit-b61", "clip-vit-b16"), ("siglip2-b16-244", "siglip2-b16-224"), ("ViT-B-16-quickgleu", "ViT-B-16-quickgelu")],
)
def test_unknown_model_lists_close_matches(name, suggestion):
    with pytest.raises(ModelError, match="did you mean") as err:
        resolve_model(name)
    assert suggestion in str(err.value) and isinstance(err.value, LGIPError)


def test_open_clip_name_without_weights_is_refused():
    with pytest.raises(ModelError, match="needs --pretrained TAG .*openai"):
        resolve_model("ViT-B-16")
    with pytest.raises(ModelError, match="applies to open_clip models only"):
        resolve_model("siglip-b16-224", "webli")


# --- QuickGELU ----------------------------------------------------------------------------------


def test_openai_entries_use_quickgelu_configs():
    for name in ("clip-vit-b16", "clip-vit-l14"):
        spec = REGISTRY[name]
        assert get_model_config(spec.identifier)["quick_gelu"] is True
        assert get_pretrained_cfg(spec.identifier, spec.pretrained)["quick_gelu"] is True


def test_quickgelu_mismatch_is_refused_before_any_download():
    with pytest.raises(ModelError, match="QuickGELU mismatch.*'ViT-B-16-quickgelu'"):
        load_model(ModelSpec("x", "open_clip", "ViT-B-16", "openai"), device="cpu")


@pytest.fixture()
def fake_openai_tag(monkeypatch, tmp_path):
    """Make ('lgip-tiny-clip', 'fake-openai') a known tag trained with QuickGELU, weights on disk."""
    from safetensors.torch import save_file

    load_model("tiny-clip", device="cpu")  # registers the tiny config with open_clip
    weights = tmp_path / "tiny.safetensors"
    save_file(open_clip.create_model("lgip-tiny-clip").state_dict(), str(weights))
    tag = {"quick_gelu": True, "mean": (0.5, 0.5, 0.5), "std": (0.5, 0.5, 0.5)}
    real = open_clip.pretrained.get_pretrained_cfg

    def fake_cfg(model, name):
        return dict(tag) if (model, name) == ("lgip-tiny-clip", "fake-openai") else real(model, name)

    monkeypatch.setattr(open_clip.pretrained, "get_pretrained_cfg", fake_cfg)
    monkeypatch.setattr(open_clip.factory, "get_pretrained_cfg", fake_cfg)
    monkeypatch.setattr(open_clip.factory, "download_pretrained", lambda cfg, cache_dir=None: str(weights))
    return ModelSpec("x", "open_clip", "lgip-tiny-clip", "fake-openai")


def test_quickgelu_mismatch_is_refused_before_the_weights_are_fetched(fake_openai_tag, monkeypatch):
    fetched = []
    monkeypatch.setattr(open_clip.factory, "download_pretrained", lambda cfg, cache_dir=None: fetched.append(cfg))
    with pytest.raises(ModelError, match="QuickGELU mismatch.*use 'lgip-tiny-clip-quickgelu'"):
        load_model(fake_openai_tag, device="cpu")
    with pytest.raises(ModelError, match="QuickGELU mismatch"):  # random weights of that tag: open_clip never checks
        load_model(replace(fake_openai_tag, random_weights=True), device="cpu")
    assert fetched == []


def test_unknown_backend_is_refused_naming_the_valid_ones():
    spec = ModelSpec("my-model", "onnx", "google/siglip-base-patch16-224")
    with pytest.raises(ModelError, match="'my-model' names an unknown backend 'onnx': the backends are open_clip, "
                                         "transformers"):
        load_model(spec, device="cpu")


# --- preprocessing comes from the factory -------------------------------------------------------


def test_open_clip_preprocessing_is_the_factorys(openclip_dir, sample_coco_dir):
    encoder = load_model(openclip_dir, device="cpu")
    assert encoder.settings()["image"]["mean"] == [0.5, 0.5, 0.5]  # from the folder's preprocess_cfg
    _, _, preprocess = open_clip.create_model_and_transforms(openclip_dir)
    image = Image.open(next(iter(sorted((sample_coco_dir / "val2017_images").glob("*.jpg"))))).convert("RGB")
    assert torch.equal(encoder.image_transform(image)["pixel_values"], preprocess(image))


def test_random_weights_keep_the_tags_preprocessing():
    """ViT-L-14/laion2b uses mean=std=0.5, unlike OpenAI weights: random stand-ins keep the tag's values."""
    laion = resolve_model("random:openclip-vit-l14-laion2b")
    openai = resolve_model("random:clip-vit-l14")
    assert openclip_backend._tag_preprocess(laion)["mean"] == (0.5, 0.5, 0.5)
    assert openclip_backend._tag_preprocess(openai)["mean"] == open_clip.OPENAI_DATASET_MEAN


# --- text padding -------------------------------------------------------------------------------


@pytest.mark.parametrize("make", ["openclip", "hf_clip"])
def test_clip_dynamic_padding_equals_full_context(make, openclip_dir, tmp_path):
    if make == "openclip":
        encoder = load_model(openclip_dir, device="cpu")
        full = encoder.model.encode_text(encoder.tokenizer(TEXTS))  # padded to all 77 positions
    else:
        encoder = load_model(make_tiny_hf_clip(tmp_path), device="cpu")
        tokens = encoder.tokenizer(TEXTS, padding="max_length", max_length=77, truncation=True, return_tensors="pt")
        full = encoder.model.get_text_features(**tokens).pooler_output
    assert encoder.dynamic_padding
    dynamic, widths = engine_text_embeddings(encoder, TEXTS)
    assert sorted(widths) != [77] * len(widths) and min(widths) < 20  # really padded per batch
    assert torch.allclose(dynamic, torch.nn.functional.normalize(full.detach(), dim=-1), atol=1e-5)


def test_siglip_text_is_padded_right_to_exactly_64_without_mask(siglip_dir):
    encoder = load_model(siglip_dir, device="cpu")
    assert not encoder.dynamic_padding
    batch = encoder.text_batch(encoder.tokenize(["a dog", "a cat on a mat"]))
    assert list(batch) == ["input_ids"] and batch["input_ids"].shape == (2, 64)
    assert (batch["input_ids"][:, -1] == encoder.tokenizer.pad_token_id).all()  # padding on the right
    ours, widths = engine_text_embeddings(encoder, TEXTS)
    assert set(widths) == {64}
    reference = encoder.tokenizer(TEXTS, padding="max_length", max_length=64, truncation=True, return_tensors="pt")
    expected = encoder.model.get_text_features(input_ids=reference["input_ids"]).pooler_output.detach()
    assert torch.allclose(ours, torch.nn.functional.normalize(expected, dim=-1), atol=1e-5)
    short = [TEXTS[0], TEXTS[1]]  # padded only to their longest, SigLIP's embeddings change (the trap)
    longest = encoder.tokenizer(short, padding="longest", return_tensors="pt")
    other = encoder.model.get_text_features(input_ids=longest["input_ids"]).pooler_output.detach()
    assert (ours[:2] - torch.nn.functional.normalize(other, dim=-1)).abs().max() > 1e-3
    settings = encoder.provenance()["text"]
    assert settings["context_length"] == 64 and "max_length=64" in settings["padding"]


def test_siglip2_lowercases_text(siglip2_dir):
    encoder = load_model(siglip2_dir, device="cpu")
    assert type(encoder.tokenizer).__name__ == "GemmaTokenizer"
    # the checkpoint's tokenizer alone does not lower-case (the trap) ...
    assert encoder.tokenizer("A Brown DOG")["input_ids"] != encoder.tokenizer("a brown dog")["input_ids"]
    # ... so the encoder does, before tokenizing
    assert encoder.normalize_text("A Brown DOG") == "a brown dog"
    upper, _ = engine_text_embeddings(encoder, ["A Brown DOG", "TWO CATS"])
    lower, _ = engine_text_embeddings(encoder, ["a brown dog", "two cats"])
    assert torch.equal(upper, lower)
    assert encoder.provenance()["text"]["normalisation"].startswith("lower-case")
    assert encoder.text_batch(encoder.tokenize(["a dog"]))["input_ids"].shape == (1, 64)


def test_siglip2_naflex_model_encodes_images(tmp_path, coco_texts, sample_coco_dir):
    encoder = load_model(make_tiny_siglip(tmp_path, version=2, naflex=True, captions=coco_texts), device="cpu")
    assert encoder.model_type == "siglip2" and encoder.lowercase
    image = Image.open(next(iter(sorted((sample_coco_dir / "val2017_images").glob("*.jpg")))))
    inputs = encoder.image_transform(image.convert("RGB"))
    assert set(inputs) == {"pixel_values", "pixel_attention_mask", "spatial_shapes"}
    emb = encoder.encode_images({k: v[None] for k, v in inputs.items()})
    assert emb.shape == (1, 32) and abs(float(emb.norm()) - 1) < 1e-5


# --- safety -------------------------------------------------------------------------------------


def test_remote_code_is_never_run(tmp_path):
    folder = tmp_path / "custom"
    folder.mkdir()
    sentinel = tmp_path / "EXECUTED"
    (folder / "config.json").write_text(json.dumps({
        "model_type": "lgip_custom", "architectures": ["CustomModel"],
        "auto_map": {"AutoConfig": "configuration_custom.CustomConfig", "AutoModel": "modeling_custom.CustomModel"},
    }))
    (folder / "configuration_custom.py").write_text(f"open({str(sentinel)!r}, 'w').write('ran')\n")
    with pytest.raises(ModelError, match="remote code is never run"):
        load_model(str(folder), device="cpu")
    assert not sentinel.exists()


def test_foreign_transformers_architecture_is_refused(tmp_path):
    from transformers import BertConfig

    BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64).save_pretrained(tmp_path)
    with pytest.raises(ModelError, match="'bert' model"):
        load_model(str(tmp_path), device="cpu")


def test_provenance_and_fingerprint(openclip_dir, siglip_dir):
    oc = load_model(openclip_dir, device="cpu")
    record = oc.provenance()
    assert record["backend"] == "open_clip" and record["random_weights"] is False
    assert {"tokenizer", "context_length", "padding", "normalisation"} <= set(record["text"])
    assert {"size", "mean", "std", "interpolation"} <= set(record["image"])
    assert {"torch", "open_clip", "transformers"} <= set(record["libraries"])
    assert oc.fingerprint() == load_model(openclip_dir, device="cpu").fingerprint()
    assert oc.fingerprint() != load_model(openclip_dir, device="cpu", precision="bf16").fingerprint()
    hf = load_model(siglip_dir, device="cpu").provenance()
    assert hf["backend"] == "transformers" and hf["image"]["processor"] == "SiglipImageProcessorPil"
    with pytest.raises(ModelError, match="unknown precision"):
        load_model(openclip_dir, device="cpu", precision="fp8")


def test_provenance_hashed_in_the_background_is_the_same_record(openclip_dir, monkeypatch):
    from lgip_metric.models import base

    calls, release, digest = [], threading.Event(), base.weights_digest

    def slow_digest(model):
        calls.append(1)
        release.wait(10)  # the main thread goes on while the hash runs
        return digest(model)

    expected = load_model(openclip_dir, device="cpu")
    record, fingerprint = expected.provenance(), expected.fingerprint()
    background = load_model(openclip_dir, device="cpu")
    monkeypatch.setattr(base, "weights_digest", slow_digest)
    background.identify_in_background()
    background.identify_in_background()  # once only
    assert not background._identifying.done()
    release.set()
    assert background.provenance() == record
    assert background.fingerprint() == fingerprint and calls == [1]
    assert "_identifying" not in background.__getstate__()  # a spawned DataLoader worker gets no future


def test_hub_model_offline_is_a_clear_error():
    with pytest.raises(ModelError, match="could not load the transformers config of 'google/siglip-base-patch16-224'"):
        load_model("random:siglip-b16-224", device="cpu")


def test_pretrained_none_on_a_transformers_folder_gives_random_weights(siglip_dir):
    encoder = load_model(siglip_dir, pretrained="none", device="cpu")
    assert encoder.random_weights and encoder.provenance()["random_weights"] is True


def test_one_ahead_launches_the_next_batch_before_taking_a_result():
    """The engine's pipeline: batch k+1 is queued on the device before batch k's embeddings are waited for, every
    result comes back once and in order, and a batch without work (None) passes as None."""
    from lgip_metric.models.base import Pending, one_ahead

    log = []

    class Recorded(Pending):
        def __init__(self, k):
            super().__init__(torch.full((1, 2), float(k)))
            self.k = k
            log.append(f"start {k}")

        def result(self):
            log.append(f"take {self.k}")
            return super().result()

    def started():
        for k in range(4):
            yield k, (Recorded(k) if k != 2 else None)

    got = [(k, None if emb is None else int(emb[0, 0])) for k, emb in one_ahead(started())]
    assert got == [(0, 0), (1, 1), (2, None), (3, 3)]
    assert log == ["start 0", "start 1", "take 0", "take 1", "start 3", "take 3"]
    assert list(one_ahead(iter([]))) == []
