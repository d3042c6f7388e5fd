"""transformers backend: CLIP, SigLIP and SigLIP 2 with their own processors; never remote code.

SigLIP text towers attend bidirectionally and pool the last position, so their text is padded
on the right to exactly 64 tokens and given to the model without an attention mask, as in
training; SigLIP 2 text is lower-cased first (its checkpoints ship a Gemma tokenizer that does
not). CLIP text towers are causal and EOT-pooled, so batches are padded to their longest text, and
they take tree-packed batches (:mod:`lgip_metric.models.tree_pack`): the text model's own embeddings
(with position ids by depth), encoder layers (under the additive ancestor mask), final norm and projection.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json

import PIL.Image
import torch
from PIL import Image

from lgip_metric.models.base import Batch, Encoder, ModelError, held_record, library_versions, seeded_init
from lgip_metric.models.pixel_stages import processor_stages
from lgip_metric.models.registry import ModelSpec
from lgip_metric.models.tree_pack import additive_mask, is_tree_batch, pooled_rows

SIGLIP_TEXT_LENGTH = 64
MASKED_ATTENTION = ("eager", "sdpa")  # attention implementations that take an arbitrary additive mask
LEGACY_EOS_ID = 2  # CLIP configs from before transformers PR 24773 pool at the largest id, as their model does
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

    def __init__(self, spec: ModelSpec, device: torch.device, precision: str, tree_packing: bool = True):
        if spec.held:  # a user's model and processor, as they are
            model, processor = spec.held["model"], spec.held["processor"].image_processor
            config, self.tokenizer = _checked_config(model.config, type(model).__name__), spec.held["processor"].tokenizer
            self.held = held_record(model, _held_config(config), [] if config.name_or_path else
                                    ["the checkpoint it was loaded from (config.name_or_path is empty)"])
        else:
            config, model, self.tokenizer, processor = _load(spec)
        super().__init__(model, device, precision, spec.random_weights, tree_packing)
        self.model_id = spec.model_id
        self.model_type = config.model_type
        self.image_transform = _ProcessorTransform(processor)
        self.pixel_stages = processor_stages(processor, library_versions())
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
        eos_id = config.text_config.eos_token_id
        self.pool_rule = ("argmax", None) if eos_id == LEGACY_EOS_ID else ("eos", eos_id)
        self.packing_blocker = _packing_blocker(self.siglip, config.model_type, model.text_model.config._attn_implementation)

    @property
    def text_tower(self) -> torch.nn.Module:
        return self.model.text_model

    def normalize_text(self, text: str) -> str:
        return text.lower() if self.lowercase else text

    def tokenize(self, texts: list[str]) -> list[list[int]]:
        if not texts:  # transformers 5's tokenizers fail on an empty batch
            return []
        return self.tokenizer(texts, truncation=True, max_length=self.max_length, padding=False)["input_ids"]

    def text_batch(self, ids: list[list[int]]) -> Batch:
        padding = "longest" if self.dynamic_padding else "max_length"
        batch = self.tokenizer.pad({"input_ids": ids}, padding=padding, max_length=self.max_length, return_tensors="pt")
        if self.siglip:  # trained without a text attention mask: the padding is part of the input
            return {"input_ids": batch["input_ids"]}
        return {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]}

    def _text_features(self, batch: Batch) -> torch.Tensor:
        if is_tree_batch(batch):
            return _tree_text_features(self.model, batch)
        return self.model.get_text_features(**batch).pooler_output

    def _image_features(self, batch: Batch) -> torch.Tensor:
        return self.model.get_image_features(**batch).pooler_output

    def _image_tower(self, batch: Batch) -> tuple[torch.nn.Module, dict[str, torch.Tensor]]:
        return self.model.vision_model, batch

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
                "pooling": "last position" if self.siglip else ("largest token id (end-token id 2, as the model pools)"
                                                                 if self.pool_rule[0] == "argmax" else "eos token"),
            },
            "image": {
                "processor": type(processor).__name__,
                **{k: _plain(k, getattr(processor, k)) for k in IMAGE_SETTINGS if getattr(processor, k, None) is not None},
            },
            "model_type": self.model_type,
        }


def _packing_blocker(siglip: bool, model_type: str, attention: str) -> str | None:
    """Why the text tower cannot be tree-packed exactly (None when it can)."""
    if siglip:
        return f"the {model_type} text tower is bidirectional: every token sees the whole text"
    if attention not in MASKED_ATTENTION:
        return f"attention implementation {attention!r} takes no arbitrary mask ({', '.join(MASKED_ATTENTION)} do)"
    return None


def _tree_text_features(model, batch: Batch) -> torch.Tensor:
    """CLIPModel's text features over tree-packed inputs: the text model's token and position embeddings
    (at the nodes' depths; called one by one, as the embeddings module refuses sequences longer than its
    position table, which a pack may be), its encoder layers under the additive ancestor mask
    (``[packs, 1, nodes, nodes]``, broadcast over the heads), its final norm (per token) at each text's
    pooled node, and the text projection."""
    text = model.text_model
    embeddings = text.embeddings
    hidden = embeddings.token_embedding(batch["input_ids"]) + embeddings.position_embedding(batch["position_ids"])
    mask = additive_mask(batch["tree_mask"], hidden.dtype)[:, None]
    hidden = text.encoder(inputs_embeds=hidden, attention_mask=mask).last_hidden_state
    return model.text_projection(text.final_layer_norm(pooled_rows(hidden, batch["pooled_index"])))


def _classes() -> dict:
    """The model class of each architecture LGIP scores, by ``model_type``."""
    from transformers import CLIPModel, SiglipModel, Siglip2Model

    return {"clip": CLIPModel, "siglip": SiglipModel, "siglip2": Siglip2Model}


def _checked_config(config, what: str):
    """``config``, refused (naming ``what``) unless it is of an architecture LGIP scores."""
    if config.model_type not in _classes():
        raise ModelError(f"{what} is a {config.model_type!r} model; LGIP scores CLIP, SigLIP and SigLIP 2 "
                         f"architectures ({', '.join(_classes())})")
    return config


def _held_config(config) -> dict:
    """What a held model's config tells of it: its type, where it was loaded from, and its hash."""
    text = config.to_json_string(use_diff=False)
    return {"model_type": config.model_type, "name_or_path": config.name_or_path or None,
            "config_sha256": hashlib.sha256(text.encode()).hexdigest()}


def _load(spec: ModelSpec):
    """Config, model, tokenizer and image processor (PIL backend) of a Hub id or folder."""
    from transformers import AutoImageProcessor, AutoTokenizer

    config, model = _load_model(spec)
    try:
        tokenizer = AutoTokenizer.from_pretrained(spec.identifier, trust_remote_code=False)
        processor = AutoImageProcessor.from_pretrained(spec.identifier, trust_remote_code=False, backend="pil")
    except (OSError, ValueError) as err:
        raise ModelError(f"could not load the tokenizer/image processor of {spec.identifier}: {err}") from err
    return config, model, tokenizer, processor


def _load_model(spec: ModelSpec):
    """Config first (refusing remote code and foreign architectures), then weights or seeded random init."""
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(spec.identifier, trust_remote_code=False)
    except (OSError, ValueError) as err:
        raise ModelError(f"could not load the transformers config of {spec.identifier!r} (remote code is never run): {err}") from err
    cls = _classes()[_checked_config(config, repr(spec.identifier)).model_type]
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
