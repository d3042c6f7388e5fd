"""transformers backend: CLIP, SigLIP and SigLIP 2 with their own processors; never remote code.

SigLIP text towers attend bidirectionally and pool the last position, so their text is padded
on the right to exactly 64 tokens and given to the model without an attention mask, as in
training; SigLIP 2 text is lower-cased first (its checkpoints ship a Gemma tokenizer that does
not). CLIP text towers are causal and EOT-pooled, so batches are padded to their longest text.
"""
from __future__ import annotations

import dataclasses
import json

import PIL.Image
import torch
from PIL import Image

from lgip_metric.models.base import Batch, Encoder, ModelError, seeded_init
from lgip_metric.models.registry import ModelSpec

SIGLIP_TEXT_LENGTH = 64
GEMMA_TOKENIZERS = ("GemmaTokenizer", "GemmaTokenizerFast", "Siglip2Tokenizer")
IMAGE_SETTINGS = (
    "size", "crop_size", "do_center_crop", "resample", "do_rescale", "rescale_factor",
    "do_normalize", "image_mean", "image_std", "do_convert_rgb", "max_num_patches", "patch_size",
)


class _ProcessorTransform:
    """Picklable PIL -> dict of tensors (batch dim dropped) wrapper around an image processor."""

    def __init__(self, processor):
        self.processor = processor

    def __call__(self, image: Image.Image) -> Batch:
        out = self.processor(images=[image], return_tensors="pt")
        return {key: value[0] for key, value in out.items()}


class TransformersEncoder(Encoder):
    """A transformers CLIPModel / SiglipModel / Siglip2Model with its tokenizer and image processor."""

    backend = "transformers"

    def __init__(self, spec: ModelSpec, device: torch.device, precision: str):
        from transformers import AutoImageProcessor, AutoTokenizer

        config, model = _load_model(spec)
        super().__init__(model, device, precision, spec.random_weights)
        self.model_id = spec.model_id
        self.model_type = config.model_type
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(spec.identifier, trust_remote_code=False)
            processor = AutoImageProcessor.from_pretrained(spec.identifier, trust_remote_code=False, backend="pil")
        except (OSError, ValueError) as err:
            raise ModelError(f"could not load the tokenizer/image processor of {spec.identifier}: {err}") from err
        self.image_transform = _ProcessorTransform(processor)
        self._image_processor = processor
        self.siglip = config.model_type in ("siglip", "siglip2")
        self.lowercase = config.model_type == "siglip2" or type(self.tokenizer).__name__ in GEMMA_TOKENIZERS
        self.dynamic_padding = not self.siglip
        if self.siglip:
            positions = config.text_config.max_position_embeddings
            if positions < SIGLIP_TEXT_LENGTH:
                raise ModelError(f"{spec.identifier}: SigLIP text needs {SIGLIP_TEXT_LENGTH} positions, model has {positions}")
            self.max_length = SIGLIP_TEXT_LENGTH
            self.tokenizer.padding_side = "right"
        else:
            self.max_length = config.text_config.max_position_embeddings

    def normalize_text(self, text: str) -> str:
        return text.lower() if self.lowercase else text

    def tokenize(self, texts: list[str]) -> list[list[int]]:
        return self.tokenizer(texts, truncation=True, max_length=self.max_length, padding=False)["input_ids"]

    def text_batch(self, ids: list[list[int]]) -> Batch:
        padding = "longest" if self.dynamic_padding else "max_length"
        batch = self.tokenizer.pad({"input_ids": ids}, padding=padding, max_length=self.max_length, return_tensors="pt")
        if self.siglip:  # trained without a text attention mask: the padding is part of the input
            return {"input_ids": batch["input_ids"]}
        return {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]}

    def _text_features(self, batch: Batch) -> torch.Tensor:
        return self.model.get_text_features(**batch).pooler_output

    def _image_features(self, batch: Batch) -> torch.Tensor:
        return self.model.get_image_features(**batch).pooler_output

    def settings(self) -> dict:
        processor = self._image_processor
        return {
            "text": {
                "tokenizer": type(self.tokenizer).__name__,
                "context_length": self.max_length,
                "padding": f"fixed: max_length={self.max_length}, right, no attention mask"
                if self.siglip
                else "dynamic: each length-sorted batch padded to its longest text (exact: causal mask, EOS pooling)",
                "normalisation": ("lower-case before the tokenizer" if self.lowercase else "none before the tokenizer")
                + f"; tokenizer normaliser {_tokenizer_normaliser(self.tokenizer)}",
                "pooling": "last position" if self.siglip else "eos token",
            },
            "image": {
                "processor": type(processor).__name__,
                **{k: _plain(k, getattr(processor, k)) for k in IMAGE_SETTINGS if getattr(processor, k, None) is not None},
            },
            "model_type": self.model_type,
        }


def _load_model(spec: ModelSpec):
    """Config first (refusing remote code and foreign architectures), then weights or seeded random init."""
    from transformers import AutoConfig, CLIPModel, SiglipModel, Siglip2Model

    classes = {"clip": CLIPModel, "siglip": SiglipModel, "siglip2": Siglip2Model}
    try:
        config = AutoConfig.from_pretrained(spec.identifier, trust_remote_code=False)
    except (OSError, ValueError) as err:
        raise ModelError(f"could not load the transformers config of {spec.identifier!r} (remote code is never run): {err}") from err
    if config.model_type not in classes:
        raise ModelError(
            f"{spec.identifier!r} is a {config.model_type!r} model; LGIP scores CLIP, SigLIP and SigLIP 2 "
            f"architectures ({', '.join(classes)})"
        )
    cls = classes[config.model_type]
    if spec.random_weights:
        with seeded_init():
            return config, cls(config)
    try:
        return config, cls.from_pretrained(spec.identifier, config=config, dtype=torch.float32)
    except (OSError, ValueError) as err:
        raise ModelError(f"could not load the weights of {spec.identifier!r}: {err}") from err


def _tokenizer_normaliser(tokenizer) -> str:
    """What the tokenizer itself does to text before splitting it."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None and backend.normalizer is not None:
        return json.dumps(json.loads(backend.normalizer.__getstate__()), ensure_ascii=False)
    if getattr(tokenizer, "do_lower_case", False):
        return "canonicalize_text (lower-case, punctuation removed)"
    return "none"


def _plain(key: str, value):
    """JSON-friendly copy of a processor setting (size dicts flattened, resampling named)."""
    if key == "resample":
        return PIL.Image.Resampling(value).name.lower()
    if dataclasses.is_dataclass(value):
        value = dataclasses.asdict(value)
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return list(value)
    return value
