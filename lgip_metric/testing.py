"""Tiny real models and datasets for tests and offline demos (random weights, built locally, seconds on CPU).

- ``make_tiny_openclip()`` -> ``"random:tiny-clip"``: a 2-layer open_clip CLIP (32x32 images, the CLIP
  BPE vocabulary) usable by name in any process, including ``lgip score``/``lgip evaluate``
  subprocesses and ``torchrun``. With a folder it writes an open_clip ``local-dir`` model instead
  (config + seeded random weights file) and returns ``"local-dir:<folder>"``;
  ``make_random_openclip(folder, "ViT-B-16")`` does the same for a real-size open_clip architecture.
- ``make_tiny_siglip(folder)`` -> a transformers SigLIP folder (``SiglipModel``, a SentencePiece
  ``SiglipTokenizer`` trained on COCO captions, ``SiglipImageProcessor``); ``version=2`` gives a
  SigLIP 2 fixed-resolution folder (``SiglipModel`` + a ``GemmaTokenizer``), ``naflex=True`` a
  ``Siglip2Model`` with its NaFlex image processor.
- ``make_tiny_hf_clip(folder)`` -> a transformers ``CLIPModel`` folder with the real CLIP BPE.
- ``make_tiny_dataset(folder, coco_dir)`` -> a Hub-layout LGIP folder (``images`` + ``pairs``)
  from real COCO val2017 images and captions, optionally with a corrupt image row.

Folders load through the same ``from_pretrained`` / ``open_clip`` paths users take, e.g.
``score_dataset(make_tiny_siglip(tmp), dataset, out)``. Every score made with them is marked
``random_weights: true``.
"""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from lgip_dataset import schema
from lgip_dataset.writing.card import write_minimal_card
from lgip_metric.models.base import seeded_init
from lgip_metric.models.registry import TINY_CLIP_CONFIG

if TYPE_CHECKING:
    import pandas as pd

TINY_LAYERS = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2}


def make_tiny_openclip(folder: str | Path | None = None, layers: int = 2) -> str:
    """The tiny open_clip model's name, or (with ``folder``) a ``local-dir:`` model written there, with ``layers``
    blocks in each tower (models of other depths share its preprocessing and tokenizer)."""
    if folder is None and layers == 2:
        return "random:tiny-clip"
    if folder is None:
        raise ValueError("a tiny model of another depth is written to a folder: give folder=")
    config = {**TINY_CLIP_CONFIG, **{tower: {**TINY_CLIP_CONFIG[tower], "layers": layers} for tower in ("vision_cfg", "text_cfg")}}
    return _save_openclip(folder, config, {"mean": [0.5] * 3, "std": [0.5] * 3})


# Tiny towers (2 layers, 32 px images) projected to a wide embedding: memory behaves like a large model's.
WIDE_TINY_CONFIG = {
    "vision_cfg": {"image_size": 32, "layers": 2, "width": 64, "head_width": 32, "patch_size": 8},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 2},
}


def make_wide_tiny_openclip(folder: str | Path, width: int = 1024) -> str:
    """A ``random:local-dir:`` open_clip model described in ``folder``: tiny towers, ``width``-wide embeddings
    (random weights at every load; the memory checks' model)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    config = {"model_cfg": {"embed_dim": width, **WIDE_TINY_CONFIG}, "preprocess_cfg": {}}
    (folder / "open_clip_config.json").write_text(json.dumps(config), encoding="utf-8")
    return f"random:local-dir:{folder}"


def make_random_openclip(folder: str | Path, architecture: str) -> str:
    """A ``local-dir:`` open_clip model written in ``folder``: the open_clip architecture ``architecture``
    (a name of open_clip's model configs, e.g. ``"ViT-B-16"``) with seeded random weights and OpenAI's
    image normalisation, as its pretrained CLIP weights use; returns ``"local-dir:<folder>"``."""
    import open_clip
    from open_clip.constants import OPENAI_DATASET_MEAN, OPENAI_DATASET_STD

    config = open_clip.get_model_config(architecture)
    if config is None:
        raise ValueError(f"{architecture!r} is not an open_clip architecture; e.g. {open_clip.list_models()[:5]}")
    return _save_openclip(folder, config, {"mean": list(OPENAI_DATASET_MEAN), "std": list(OPENAI_DATASET_STD)})


def _save_openclip(folder: str | Path, model_cfg: dict, preprocess_cfg: dict) -> str:
    """Write ``open_clip_config.json`` and seeded random weights of ``model_cfg`` into ``folder``."""
    import open_clip
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    config = {"model_cfg": model_cfg, "preprocess_cfg": preprocess_cfg}
    (folder / "open_clip_config.json").write_text(json.dumps(config), encoding="utf-8")
    with seeded_init():
        model = open_clip.create_model(f"local-dir:{folder}", load_weights=False)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(folder / "open_clip_model.safetensors"))
    return f"local-dir:{folder}"


def make_tiny_siglip(
    folder: str | Path, *, version: int = 1, naflex: bool = False, captions: Iterable[str] | None = None
) -> str:
    """Write a tiny transformers SigLIP (``version=1``) or SigLIP 2 model folder; return its path."""
    from transformers import (
        SiglipConfig,
        SiglipImageProcessorPil,
        SiglipModel,
        Siglip2Config,
        Siglip2ImageProcessorPil,
        Siglip2Model,
    )

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    texts = list(captions) if captions is not None else _sample_captions()
    tokenizer = _sentencepiece_tokenizer(texts, folder) if version == 1 else _gemma_tokenizer(texts)
    text = {**TINY_LAYERS, **_special_ids(tokenizer), "vocab_size": len(tokenizer), "max_position_embeddings": 64}
    if naflex:
        vision = {**TINY_LAYERS, "num_patches": 16, "patch_size": 8}
        config, model_cls = Siglip2Config(text_config=text, vision_config=vision), Siglip2Model
        processor = Siglip2ImageProcessorPil(patch_size=8, max_num_patches=16)
    else:
        vision = {**TINY_LAYERS, "image_size": 32, "patch_size": 8}
        config, model_cls = SiglipConfig(text_config=text, vision_config=vision), SiglipModel
        processor = SiglipImageProcessorPil(size={"height": 32, "width": 32})
    _save_random(model_cls, config, folder)
    tokenizer.save_pretrained(folder)
    processor.save_pretrained(folder)
    return str(folder)


def make_untrained_siglip(folder: str | Path, captions: Iterable[str], vocab_size: int = 8000) -> str:
    """Write the config of the real SigLIP B/16-224 architecture (transformers' ``SiglipConfig`` defaults:
    12-layer 768-wide towers, 224 px, patch 16, 64 text positions) with a SentencePiece tokenizer trained
    here on ``captions`` (the real one cannot be downloaded offline) and its 224 px processor; return the
    folder, to be scored with ``pretrained="none"`` (seeded random weights)."""
    from transformers import SiglipConfig, SiglipImageProcessorPil

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = _sentencepiece_tokenizer(list(captions), folder, vocab_size)
    config = SiglipConfig(text_config={**_special_ids(tokenizer), "vocab_size": len(tokenizer)})
    config.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    SiglipImageProcessorPil(size={"height": 224, "width": 224}).save_pretrained(folder)
    return str(folder)


def make_tiny_hf_clip(folder: str | Path) -> str:
    """Write a tiny transformers CLIP folder (real CLIP BPE vocabulary from open_clip); return its path."""
    import open_clip
    from transformers import CLIPConfig, CLIPImageProcessorPil, CLIPModel, CLIPTokenizer

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    bpe = open_clip.SimpleTokenizer()
    names = {"<start_of_text>": "<|startoftext|>", "<end_of_text>": "<|endoftext|>"}
    vocab = {names.get(token, token): index for token, index in bpe.encoder.items()}
    merges = [pair for pair, _ in sorted(bpe.bpe_ranks.items(), key=lambda item: item[1])]
    tokenizer = CLIPTokenizer(vocab=vocab, merges=merges, model_max_length=77)
    text = {**TINY_LAYERS, **_special_ids(tokenizer), "vocab_size": len(vocab), "max_position_embeddings": 77}
    vision = {**TINY_LAYERS, "image_size": 32, "patch_size": 8}
    _save_random(CLIPModel, CLIPConfig(text_config=text, vision_config=vision, projection_dim=32), folder)
    tokenizer.save_pretrained(folder)
    CLIPImageProcessorPil(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}).save_pretrained(folder)
    return str(folder)


def _special_ids(tokenizer) -> dict:
    return {f"{name}_token_id": getattr(tokenizer, f"{name}_token_id") for name in ("bos", "eos", "pad")}


def _save_random(model_cls, config, folder: Path) -> None:
    with seeded_init():
        model_cls(config).save_pretrained(folder)


def _sentencepiece_tokenizer(texts: list[str], folder: Path, vocab_size: int = 400):
    """A SiglipTokenizer over a unigram SentencePiece model trained on ``texts`` (SigLIP's id layout)."""
    import sentencepiece as spm
    from transformers import SiglipTokenizer

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(texts), model_writer=model, vocab_size=vocab_size, model_type="unigram",
        pad_id=0, eos_id=1, unk_id=2, bos_id=-1, hard_vocab_limit=False, minloglevel=2,
    )
    path = folder / "spiece.model"
    path.write_bytes(model.getvalue())
    return SiglipTokenizer(vocab_file=str(path))


def _gemma_tokenizer(texts: list[str]):
    """A GemmaTokenizer (SigLIP 2's tokenizer class) over a byte-fallback BPE trained on ``texts``."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers
    from transformers import GemmaTokenizer

    specials = ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>"]
    bpe = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    bpe.normalizer = normalizers.Replace(" ", "▁")
    bpe.pre_tokenizer = pre_tokenizers.Split(pattern="▁", behavior="merged_with_next")
    bpe.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=600, special_tokens=specials))
    state = json.loads(bpe.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in state["merges"]]
    return GemmaTokenizer(vocab=state["vocab"], merges=merges)


def _sample_captions() -> list[str]:
    import pyarrow.parquet as pq

    from lgip_dataset import SAMPLE_DIR

    shards = sorted((SAMPLE_DIR / schema.PAIRS).glob("*.parquet"))
    if not shards:
        raise FileNotFoundError(f"no embedded sample at {SAMPLE_DIR}; pass captions= to train the tokenizer")
    return sorted({x for s in shards for x in pq.read_table(s, columns=["caption"]).column(0).to_pylist()})


def make_tiny_dataset(
    folder: str | Path, coco_dir: str | Path, *, n_images: int = 4, captions_per_image: int = 2, corrupt_image: bool = True
) -> Path:
    """A Hub-layout LGIP folder (``images`` + ``pairs`` configs, README YAML) from real COCO val2017 files.

    Each caption gets two paraphrases and two flips of very different lengths (one longer than
    CLIP's 77-token context). With ``corrupt_image`` one extra image row holds a truncated JPEG.
    """
    import datasets

    folder, coco_dir = Path(folder), Path(coco_dir)
    annotations = json.loads((coco_dir / "annotations" / "captions_val2017.json").read_text(encoding="utf-8"))
    files = sorted((coco_dir / "val2017_images").glob("*.jpg"))[:n_images]
    by_image: dict[int, list[str]] = {}
    for ann in sorted(annotations["annotations"], key=lambda a: a["id"]):
        by_image.setdefault(ann["image_id"], []).append(ann["caption"].strip())
    images = {int(f.stem): f.read_bytes() for f in files}
    if corrupt_image:
        images[1] = images[int(files[0].stem)][:2000]  # a truncated JPEG: decodable header, missing data
        by_image[1] = ["A corrupt picture of a cat."]
    rows = [
        row
        for image_id in images
        for c, caption in enumerate(by_image[image_id][:captions_per_image])
        for row in _variant_rows(image_id, f"{image_id}-{c}", caption)
    ]
    image_columns = {
        "image_id": list(images),
        "image": [{"bytes": data, "path": None} for data in images.values()],
        "file_name": [f"{i:012d}.jpg" for i in images],
        "width": [0] * len(images), "height": [0] * len(images),
        "license": ["test"] * len(images), "license_url": [""] * len(images), "flickr_url": [""] * len(images),
        "converted_from": [None] * len(images),
    }
    pair_columns = {key: [row.get(key) for row in rows] for key in schema.PAIR_FEATURES}  # no labels: judged null
    for config, columns in ((schema.IMAGES, image_columns), (schema.PAIRS, pair_columns)):
        (folder / config).mkdir(parents=True, exist_ok=True)
        dataset = datasets.Dataset.from_dict(columns, features=schema.FEATURES[config])
        dataset.to_parquet(str(folder / config / f"{schema.SPLIT}-00000-of-00001.parquet"))
    write_minimal_card(folder, (schema.IMAGES, schema.PAIRS), "# tiny LGIP test dataset")
    return folder


def _variant_rows(image_id: int, caption_id: str, caption: str) -> list[dict]:
    body = caption[0].lower() + caption[1:].rstrip(".")
    long_tail = ", ".join(["with a small red ball and a large blue box beside a green tree"] * 6)
    variants = [
        ("paraphrase", "template", f"A photo of {body}.", "", ""),
        ("paraphrase", "marker", f"{body} in the scene, {long_tail}.", "", ""),
        ("flip", "color", f"{body} next to a purple wall.", "red", "purple"),
        ("flip", "count", f"Two {body}", "one", "two"),
    ]
    return [
        {
            "row_id": f"{caption_id}-{v}", "caption_id": caption_id, "image_id": image_id, "caption": caption,
            "variant_id": f"{caption_id}-{v}", "kind": kind, "type": vtype,
            "original": original, "replacement": replacement, "span_start": 0, "span_end": 0, "variant": text,
        }
        for v, (kind, vtype, text, original, replacement) in enumerate(variants)
    ]





def straightforward_scores(model: str, dataset: str | Path, batch_size: int) -> "pd.DataFrame":
    """``s_original``/``s_variant``/``t_sim`` per scored ``row_id``, computed the plain way from one table of
    every embedding: the engine's batches (images in id order, texts tokenised at once and sorted by
    length), all rows scored in one float64 product. An independent check of the streamed engine."""
    import pandas as pd
    import pyarrow.parquet as pq
    import torch

    from lgip_dataset.files.images import ImageError, decode_image
    from lgip_metric.models import load_model
    from lgip_metric.scoring.image_data import image_batch_size

    encoder = load_model(model, device="cpu")
    rows, cells = (pq.read_table(next((Path(dataset) / c).glob("*.parquet"))).to_pandas() for c in (schema.PAIRS, schema.IMAGES))
    cell_of = dict(zip(cells["image_id"], cells["image"]))
    image_ids = sorted(set(rows["image_id"]))
    image_emb: dict[int, torch.Tensor] = {}
    images_per_batch = image_batch_size(encoder, batch_size)
    for start in range(0, len(image_ids), images_per_batch):
        decoded = {}
        for image_id in image_ids[start : start + images_per_batch]:
            try:
                decoded[image_id] = encoder.image_transform(decode_image(cell_of[image_id]["bytes"]))
            except ImageError:
                continue
        if decoded:
            batch = {k: torch.stack([d[k] for d in decoded.values()]) for k in next(iter(decoded.values()))}
            image_emb.update(zip(decoded, encoder.encode_images(batch)))
    texts = sorted({encoder.normalize_text(t) for t in [*rows["caption"], *rows["variant"]]})
    ids = encoder.tokenize(texts)
    order = sorted(range(len(ids)), key=lambda i: (-len(ids[i]), i) if encoder.dynamic_padding else i)
    text_emb = torch.zeros(len(texts), image_emb[next(iter(image_emb))].shape[0])
    for start in range(0, len(order), batch_size):
        batch = order[start : start + batch_size]
        text_emb[batch] = encoder.encode_texts(encoder.text_batch([ids[i] for i in batch]))
    where = {t: i for i, t in enumerate(texts)}
    rows = rows[rows["image_id"].isin(image_emb)]
    images = torch.stack([image_emb[i] for i in rows["image_id"]]).double()
    captions = text_emb[[where[encoder.normalize_text(t)] for t in rows["caption"]]].double()
    variants = text_emb[[where[encoder.normalize_text(t)] for t in rows["variant"]]].double()
    return pd.DataFrame({
        "row_id": rows["row_id"].to_numpy(),
        "s_original": (images * captions).sum(dim=1).numpy(),
        "s_variant": (images * variants).sum(dim=1).numpy(),
        "t_sim": (captions * variants).sum(dim=1).numpy(),
    })


def same_scores(scores: "pd.DataFrame", reference: "pd.DataFrame") -> bool:
    """Whether a score table holds exactly (bit for bit) the reference's rows and values."""
    columns = list(reference.columns)
    return scores[columns].reset_index(drop=True).equals(reference.reset_index(drop=True))
