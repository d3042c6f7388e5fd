"""open_clip backend: the factory's own transforms and tokenizer, QuickGELU checked.

Causal, EOT-pooled text towers (CLIP, OpenCLIP, EVA02) run each batch at its longest text: with
a causal mask the pooled EOT position never sees the padding after it, so the result equals
padding to the full context. Other towers (SigLIP in open_clip, HF text towers) get the
tokenizer's fixed length. The causal towers also take tree-packed batches
(:mod:`lgip_metric.models.tree_pack`): the tower's own embedding, blocks, final norm and projection
run over each pack's trie with an additive ancestor mask and positions by depth.
"""
from __future__ import annotations

import json
import tempfile
from dataclasses import asdict
from pathlib import Path

import torch
from PIL import Image

from lgip_metric.models.base import Batch, Encoder, ModelError, held_record, library_versions, seeded_init
from lgip_metric.models.pixel_stages import torchvision_stages
from lgip_metric.models.registry import ModelSpec
from lgip_metric.models.tree_pack import POOLS, additive_mask, is_tree_batch, pooled_queries, pooled_rows


class _PixelTransform:
    """Picklable PIL -> {"pixel_values": CHW tensor} wrapper around a torchvision transform."""

    def __init__(self, transform):
        self.transform = transform

    def __call__(self, image: Image.Image) -> Batch:
        return {"pixel_values": self.transform(image)}


class OpenClipEncoder(Encoder):
    """An open_clip model with its factory transforms and tokenizer."""

    backend = "open_clip"

    def __init__(self, spec: ModelSpec, device: torch.device, precision: str, tree_packing: bool = True):
        import open_clip
        from open_clip.transform import PreprocessCfg, image_transform_v2

        if spec.held:  # a user's model, transform and tokenizer, as they are
            model, transform, self.tokenizer = spec.held["model"], spec.held["preprocess"], spec.held["tokenizer"]
            self._preprocess = dict(getattr(model.visual, "preprocess_cfg", {}))
            self._preprocess_source = f"user-supplied preprocess: {transform!r}"
            self.held = held_record(model, {"preprocess_cfg": self._preprocess},
                                    ["the open_clip architecture name and pretrained tag it was made from"])
        else:
            model, self._preprocess, self._preprocess_source = _create(spec)
            self.tokenizer = open_clip.get_tokenizer(spec.identifier)
            transform = image_transform_v2(PreprocessCfg(**self._preprocess), is_train=False)
        super().__init__(model, device, precision, spec.random_weights, tree_packing)
        self.model_id = spec.model_id
        self.image_transform = _PixelTransform(transform)
        if not spec.held:  # a user's transform may hold settings its repr does not show: its pixels are not shared
            self.pixel_stages = torchvision_stages(transform, {"preprocess": self._preprocess, "libraries": library_versions()})
        self._text = getattr(model, "text", model)
        self._pool = getattr(self._text, "text_pool_type", getattr(self._text, "pool_type", None))
        self._eos_id = getattr(self._text, "text_eos_id", getattr(self._text, "eos_id", None))
        self.dynamic_padding = (
            getattr(self._text, "attn_mask", None) is not None
            and self._pool in POOLS
            and getattr(self._text, "cls_emb", None) is None
            and not getattr(self._text, "use_pad_mask", False)
        )
        self.pool_rule = (self._pool, self._eos_id)
        self.packing_blocker = _packing_blocker(self._text, self.dynamic_padding)

    @property
    def text_tower(self) -> torch.nn.Module:
        return self._text.transformer

    def normalize_text(self, text: str) -> str:
        return text

    def tokenize(self, texts: list[str]) -> list[list[int]]:
        tokens = self.tokenizer(texts)
        if not self.dynamic_padding:
            return tokens.tolist()
        ends = _eot_positions(tokens, self._pool, self._eos_id) + 1
        return [row[:end] for row, end in zip(tokens.tolist(), ends.tolist())]

    def text_batch(self, ids: list[list[int]]) -> Batch:
        width = max(map(len, ids))
        batch = torch.zeros(len(ids), width, dtype=torch.long)
        for i, row in enumerate(ids):
            batch[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        return {"input_ids": batch}

    def _text_features(self, batch: Batch) -> torch.Tensor:
        text = batch["input_ids"]
        if is_tree_batch(batch):
            return _tree_text_features(self._text, batch)
        if not self.dynamic_padding:
            return self.model.encode_text(text)
        return _causal_text_features(self._text, text, self._pool, self._eos_id)

    def _image_features(self, batch: Batch) -> torch.Tensor:
        return self.model.encode_image(batch["pixel_values"])

    def _image_tower(self, batch: Batch) -> tuple[torch.nn.Module, dict[str, torch.Tensor]]:
        return self.model.visual, {"x": batch["pixel_values"]}

    def settings(self) -> dict:
        tok = self.tokenizer
        clean = getattr(getattr(tok, "clean_fn", None), "__name__", "").removeprefix("_clean_") or "none"
        return {
            "text": {
                "tokenizer": type(tok).__name__,
                "context_length": int(tok.context_length),
                "padding": "dynamic: each length-sorted batch padded to its longest text (exact: causal mask, EOT pooling)"
                if self.dynamic_padding
                else f"fixed: max_length={tok.context_length}",
                "normalisation": f"none before the tokenizer; tokenizer cleaning '{clean}'",
                "pooling": self._pool,
            },
            "image": {**self._preprocess, "source": self._preprocess_source,
                      "transform": "user-supplied" if self.held else "open_clip.image_transform_v2"},
        }


def _packing_blocker(tower, causal: bool) -> str | None:
    """Why ``tower`` cannot be tree-packed exactly (None when it can)."""
    if not causal:
        return "the text tower is not causal with EOT pooling (bidirectional, class token or padding mask)"
    if getattr(tower, "positional_embedding", None) is None or tower.positional_embedding.ndim != 2:
        return "the text tower has no learned absolute position table to index by depth"
    return None


def _create(spec: ModelSpec) -> tuple[torch.nn.Module, dict, str]:
    """Build the model; return it with its final preprocessing config and where that came from."""
    import open_clip

    if spec.config is not None:
        _register_config(spec.identifier, spec.config)
    tag_cfg = _tag_config(spec)
    if tag_cfg:
        _check_quick_gelu(spec, tag_cfg)
    kwargs: dict = {"pretrained": None if spec.random_weights or _has_schema(spec) else spec.pretrained}
    if spec.random_weights:
        # no weights, but the tag's preprocessing (mean/std differ per tag, e.g. ViT-L-14 laion2b)
        kwargs.update(load_weights=False, force_preprocess_cfg=_tag_preprocess(spec))
    try:
        with _skipped_init() if _checkpoint_follows(spec) else seeded_init():
            model = open_clip.create_model(spec.identifier, **kwargs)
    except Exception as err:  # noqa: BLE001 - torch.load and open_clip raise any type for a file that is no checkpoint
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        weights = f" with --pretrained {spec.pretrained}" if spec.pretrained else ""
        raise ModelError(f"could not load open_clip model {spec.model_id}{weights}: {reason}; --pretrained takes an "
                         "open_clip pretrained tag or a checkpoint file open_clip can read (.pt, .bin, .safetensors)") from None
    source = f"pretrained tag {spec.pretrained!r}" if tag_cfg else "model config"
    return model, dict(model.visual.preprocess_cfg), source


BIG_VISION_SUFFIXES = (".npz", ".npy")  # the files open_clip's load_checkpoint loads tensor by tensor, not strictly


def _checkpoint_follows(spec: ModelSpec) -> bool:
    """Whether open_clip overwrites every weight from a checkpoint, with a strict load: a ``local-dir:`` folder
    (the registry has checked that it holds a weights file open_clip reads) or a checkpoint file. Not a pretrained
    tag (its file is known only once downloaded, and may be big_vision's ``.npz``, loaded tensor by tensor) nor
    ``hf-hub:`` (open_clip goes on with the initial weights where the weights download fails)."""
    if spec.random_weights:
        return False
    if spec.identifier.startswith("local-dir:"):
        return True
    path = Path(spec.pretrained) if spec.pretrained and not _has_schema(spec) else None
    return path is not None and path.suffix not in BIG_VISION_SUFFIXES and path.is_file()


def _skipped_init():
    """A context in which torch's weight initialisers do nothing (transformers' ``no_init_weights``): random values
    that a checkpoint overwrites are never drawn (up to 2 s for a ViT-B/16 on 2 CPU cores)."""
    try:
        from transformers.initialization import no_init_weights
    except ImportError:  # transformers < 5
        from transformers.modeling_utils import no_init_weights
    return no_init_weights()


def _has_schema(spec: ModelSpec) -> bool:
    return spec.identifier.startswith(("hf-hub:", "local-dir:"))


def _tag_config(spec: ModelSpec) -> dict:
    """open_clip's record of the pretrained tag (weights source, preprocessing, quick_gelu); {} if none."""
    from open_clip.pretrained import get_pretrained_cfg

    if _has_schema(spec) or not spec.pretrained:
        return {}
    return get_pretrained_cfg(spec.identifier, spec.pretrained) or {}


def _tag_preprocess(spec: ModelSpec) -> dict:
    """The preprocessing settings the pretrained tag prescribes (mean, std, interpolation, ...)."""
    from open_clip.transform import PreprocessCfg

    keys = set(asdict(PreprocessCfg()))
    return {k: v for k, v in _tag_config(spec).items() if k in keys}


def _check_quick_gelu(spec: ModelSpec, tag_cfg: dict) -> None:
    """OpenAI weights were trained with QuickGELU; a plain-GELU config silently changes results.

    The project's only QuickGELU check. It compares what open_clip's own mismatch warning compares
    (the config's and the tag's ``quick_gelu``), but before any weights are downloaded, and for
    random-weight builds of a tag too, where open_clip does not check at all."""
    from open_clip.factory import get_model_config

    model_quick = bool((get_model_config(spec.identifier) or {}).get("quick_gelu", False))
    tag_quick = bool(tag_cfg.get("quick_gelu", False))
    if model_quick != tag_quick:
        fix = f"{spec.identifier}-quickgelu" if tag_quick else spec.identifier.removesuffix("-quickgelu")
        raise ModelError(
            f"QuickGELU mismatch: weights {spec.pretrained!r} were trained with quick_gelu={tag_quick} but config "
            f"{spec.identifier!r} has quick_gelu={model_quick}; use {fix!r}"
        )


def _register_config(name: str, config: dict) -> None:
    """Make an inline architecture known to open_clip under ``name`` (through its public API)."""
    import open_clip

    if name in open_clip.list_models():
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{name}.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        open_clip.add_model_config(path)


def _eot_positions(tokens: torch.Tensor, pool: str, eos_id: int | None) -> torch.Tensor:
    """Index of the pooled token in each row, exactly as ``text_global_pool`` picks it."""
    if pool == "argmax":
        return tokens.argmax(dim=-1)
    return (tokens == eos_id).int().argmax(dim=-1)


def _causal_text_features(tower, text: torch.Tensor, pool: str, eos_id: int | None) -> torch.Tensor:
    """open_clip's causal text forward on a batch shorter than the context (mask and positions sliced)."""
    from open_clip.transformer import text_global_pool

    length = text.shape[1]
    cast_dtype = tower.transformer.get_cast_dtype()
    x = tower.token_embedding(text).to(cast_dtype) + tower.positional_embedding[:length].to(cast_dtype)
    x = tower.transformer(x, attn_mask=tower.attn_mask[:length, :length])
    return _projected(tower, text_global_pool(tower.ln_final(x), text, pool, eos_token_id=eos_id))


def _tree_text_features(tower, batch: Batch) -> torch.Tensor:
    """open_clip's causal text forward over tree-packed inputs: token embeddings plus the position table
    at each node's depth, the tower's blocks under the ancestor mask (additive, one per head: the blocks'
    attention takes ``[packs * heads, nodes, nodes]``), the last of them at the pooled nodes alone
    (:func:`_pooled_block`; other block types than ``ResidualAttentionBlock`` run whole), the final norm (per
    token) at each text's pooled node."""
    from open_clip.transformer import ResidualAttentionBlock

    cast_dtype = tower.transformer.get_cast_dtype()
    x = tower.token_embedding(batch["input_ids"]).to(cast_dtype)
    x = x + tower.positional_embedding[batch["position_ids"]].to(cast_dtype)
    *blocks, last = tower.transformer.resblocks
    heads = last.attn.num_heads
    mask = additive_mask(batch["tree_mask"], x.dtype)
    per_head = mask.repeat_interleave(heads, 0)
    if type(last) is not ResidualAttentionBlock:  # qk_norm, scaled attention: open_clip's custom block
        x = tower.transformer(x, attn_mask=per_head)
        return _projected(tower, tower.ln_final(pooled_rows(x, batch["pooled_index"])))
    for block in blocks:
        x = block(x, attn_mask=per_head)
    x = _pooled_block(last, x, *pooled_queries(x, mask, batch["pooled_nodes"]), heads)
    return _projected(tower, tower.ln_final(pooled_rows(x, batch["pooled_slot"])))


def _pooled_block(block, x: torch.Tensor, queries: torch.Tensor, query_mask: torch.Tensor, heads: int) -> torch.Tensor:
    """An open_clip ``ResidualAttentionBlock`` whose output is needed only at ``queries`` (rows of ``x``, the
    block's input): their attention over every node of ``x`` under ``query_mask`` and their MLP, the block's
    own modules and weights (a text's pooled feature reads the last block at its pooled node alone)."""
    keys = block.ln_1(x)
    queries = queries + block.ls_1(block.attention(q_x=block.ln_1(queries), k_x=keys, v_x=keys,
                                                   attn_mask=query_mask.repeat_interleave(heads, 0)))
    return queries + block.ls_2(block.mlp(block.ln_2(queries)))


def _projected(tower, pooled: torch.Tensor) -> torch.Tensor:
    """The pooled text features through the tower's projection (a matrix, a Linear, or none)."""
    projection = tower.text_projection
    if projection is None:
        return pooled
    return projection(pooled) if isinstance(projection, torch.nn.Module) else pooled @ projection
