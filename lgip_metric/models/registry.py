"""The model registry (the paper's nine models by short name) and name resolution.

``resolve_model`` turns what a user typed into a :class:`ModelSpec`:

- a registry short name (``clip-vit-b16``, ``siglip2-b16-224``, ... see ``REGISTRY``);
- any open_clip name: ``NAME`` with ``pretrained=TAG``, ``NAME/TAG``, ``hf-hub:org/repo`` or
  ``local-dir:/path`` (a folder with ``open_clip_config.json`` is recognised without the prefix);
- any transformers Hub id or local folder with a CLIP, SigLIP or SigLIP 2 architecture.

``random:<name>`` or ``pretrained="none"`` builds the same architecture with seeded random weights.

``held_model`` makes the spec of a model a user already holds (an open_clip model with its preprocess
and tokenizer, a transformers model with its processor): the same encoders are built from the objects.
"""
from __future__ import annotations

import difflib
import importlib.util
import json
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from lgip_dataset.errors import LGIPError

OPEN_CLIP, TRANSFORMERS = "open_clip", "transformers"
RANDOM_PREFIX = "random:"
SCHEMAS = ("hf-hub:", "local-dir:")
CHECKPOINT_GLOBS = ("*.safetensors", "*.bin", "*.pth")  # what open_clip looks for in a local-dir: folder
PRECISIONS = ("fp32", "fp16", "bf16")


class ModelError(LGIPError):
    """A model cannot be resolved or loaded as asked (unknown name, unsafe repo, wrong settings)."""


@dataclass(frozen=True)
class ModelSpec:
    """A resolved model: which backend loads what, with which weights."""

    name: str
    backend: str
    identifier: str
    pretrained: str | None = None  # open_clip tag or checkpoint file
    random_weights: bool = False
    paper_row: str | None = None
    config: dict | None = field(default=None, compare=False)  # inline open_clip architecture
    held: dict | None = field(default=None, compare=False, repr=False)  # a user's objects (``held_model``)

    @property
    def model_id(self) -> str:
        """``backend:identifier[/pretrained]``: the canonical name written into provenance."""
        suffix = f"/{self.pretrained}" if self.pretrained and not self.random_weights else ""
        return f"{self.backend}:{self.identifier}{suffix}"


# A tiny CLIP (real open_clip code, 2 layers, 32x32 images, CLIP BPE vocabulary) for tests and
# offline demos; it has no weights, so it always runs with seeded random weights.
TINY_CLIP_CONFIG = {
    "embed_dim": 32,
    "vision_cfg": {"image_size": 32, "layers": 2, "width": 64, "head_width": 32, "patch_size": 8},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 2},
}

_ENTRIES = (
    ("clip-vit-b16", OPEN_CLIP, "ViT-B-16-quickgelu", "openai", "CLIP ViT-B/16 (OpenAI)"),
    ("clip-vit-l14", OPEN_CLIP, "ViT-L-14-quickgelu", "openai", "CLIP ViT-L/14 (OpenAI)"),
    ("openclip-vit-l14-laion2b", OPEN_CLIP, "ViT-L-14", "laion2b_s32b_b82k", "OpenCLIP ViT-L/14 (LAION-2B)"),
    ("openclip-vit-h14-laion2b", OPEN_CLIP, "ViT-H-14", "laion2b_s32b_b79k", "OpenCLIP ViT-H/14 (LAION-2B)"),
    ("eva02-l14", OPEN_CLIP, "EVA02-L-14", "merged2b_s4b_b131k", "EVA02-CLIP L/14"),
    ("siglip-b16-224", TRANSFORMERS, "google/siglip-base-patch16-224", None, "SigLIP base-p16-224"),
    ("siglip-b16-384", TRANSFORMERS, "google/siglip-base-patch16-384", None, "SigLIP base-p16-384"),
    ("siglip-l16-384", TRANSFORMERS, "google/siglip-large-patch16-384", None, "SigLIP large-p16-384"),
    ("siglip2-b16-224", TRANSFORMERS, "google/siglip2-base-patch16-224", None, "SigLIP2 base-p16-224"),
)

REGISTRY: dict[str, ModelSpec] = {
    name: ModelSpec(name, backend, identifier, pretrained, paper_row=row)
    for name, backend, identifier, pretrained, row in _ENTRIES
}
REGISTRY["tiny-clip"] = ModelSpec("tiny-clip", OPEN_CLIP, "lgip-tiny-clip", random_weights=True, config=TINY_CLIP_CONFIG)

PAPER_MODELS = tuple(name for name, spec in REGISTRY.items() if spec.paper_row)


HELD_PREFIX = "user-supplied:"  # the identifier of a held model: its class, as nothing names its weights


def held_model(model, *, preprocess=None, tokenizer=None, processor=None) -> ModelSpec:
    """The spec of a model object a user holds: an open_clip model with its ``preprocess`` (the image transform
    ``open_clip.create_model_and_transforms`` returns) and ``tokenizer`` (``open_clip.get_tokenizer``), or a
    transformers CLIP / SigLIP / SigLIP 2 model with its ``processor`` (``AutoProcessor``: tokenizer and image
    processor). The objects are used as they are; nothing is downloaded."""
    cls = type(model).__name__
    if processor is not None:
        if preprocess is not None or tokenizer is not None:
            raise ModelError("give a transformers model with processor=, or an open_clip model with preprocess= and "
                             "tokenizer=, not both")
        if not (hasattr(model, "config") and hasattr(model, "get_image_features")):
            raise ModelError(f"processor= goes with a transformers model (CLIPModel, SiglipModel, Siglip2Model); "
                             f"model is a {cls}")
        for part in ("tokenizer", "image_processor"):
            if getattr(processor, part, None) is None:
                raise ModelError(f"processor= must hold a tokenizer and an image processor (AutoProcessor."
                                 f"from_pretrained); this {type(processor).__name__} has no {part}")
        backend, objects = TRANSFORMERS, {"model": model, "processor": processor}
    elif preprocess is not None and tokenizer is not None:
        if not (hasattr(model, "encode_image") and hasattr(model, "encode_text") and hasattr(model, "visual")):
            raise ModelError(f"preprocess= and tokenizer= go with an open_clip model (encode_image, encode_text); "
                             f"model is a {cls}")
        if not callable(preprocess) or not callable(tokenizer):
            raise ModelError("preprocess= must be the image transform and tokenizer= the tokenizer open_clip returns "
                             "(open_clip.create_model_and_transforms, open_clip.get_tokenizer)")
        backend, objects = OPEN_CLIP, {"model": model, "preprocess": preprocess, "tokenizer": tokenizer}
    else:
        raise ModelError(f"a model object ({cls}) needs what turns images and texts into its inputs: processor= for a "
                         "transformers model, preprocess= and tokenizer= for an open_clip model")
    return ModelSpec(f"{cls} object", backend, f"{HELD_PREFIX}{cls}", held=objects)


def resolve_model(model: str | ModelSpec, pretrained: str | None = None) -> ModelSpec:
    """Resolve a model name (and optional open_clip tag, or ``"none"``) to a :class:`ModelSpec`; a spec (of a
    held model, :func:`held_model`) is its own resolution."""
    if isinstance(model, ModelSpec):
        if pretrained is not None:
            raise ModelError(f"--pretrained {pretrained!r} applies to a model name, not to {model.name}")
        return model
    name = model.strip()
    random = name.startswith(RANDOM_PREFIX)
    name = name[len(RANDOM_PREFIX):] if random else name
    if pretrained is not None and pretrained.strip().lower() == "none":
        random, pretrained = True, None
    spec = _lookup(name, pretrained)
    if pretrained and (random or spec.random_weights):
        raise ModelError(f"--pretrained {pretrained!r} would be ignored: {model.strip()!r} is built with random weights; "
                         "drop --pretrained, or name a model that loads weights")
    if spec.backend == TRANSFORMERS and pretrained:
        raise ModelError(f"--pretrained {pretrained!r} applies to open_clip models only; {name!r} is a transformers model")
    if pretrained and spec.backend == OPEN_CLIP:
        spec = replace(spec, pretrained=pretrained)
    spec = replace(spec, name=model.strip(), random_weights=spec.random_weights or random)
    _check_weights(spec)
    return spec


def _lookup(name: str, pretrained: str | None) -> ModelSpec:
    if name in REGISTRY:
        return REGISTRY[name]
    if name.startswith(SCHEMAS):
        return ModelSpec(name, OPEN_CLIP, name)
    path = Path(name).expanduser()
    if path.is_dir():
        if (path / "open_clip_config.json").is_file():
            return ModelSpec(name, OPEN_CLIP, f"local-dir:{path}")
        if (path / "config.json").is_file():
            return ModelSpec(name, TRANSFORMERS, str(path))
        raise ModelError(f"{path} has neither open_clip_config.json (open_clip) nor config.json (transformers)")
    open_clip_names = _open_clip_names()
    arch, _, tag = name.partition("/")
    if arch in open_clip_names:
        return ModelSpec(name, OPEN_CLIP, arch, tag or pretrained)
    if "/" in name and not path.exists():
        return ModelSpec(name, TRANSFORMERS, name)
    candidates = sorted({*REGISTRY, *(s.identifier for s in REGISTRY.values()), *open_clip_names})
    close = difflib.get_close_matches(name, candidates, n=6, cutoff=0.5)
    hint = f"; did you mean: {', '.join(close)}?" if close else ""
    raise ModelError(
        f"unknown model {name!r}{hint} (registry: {', '.join(REGISTRY)}; also any open_clip name, "
        "hf-hub:/local-dir: path, or transformers id/folder with a CLIP or SigLIP architecture)"
    )


def _check_weights(spec: ModelSpec) -> None:
    """Refuse specs that would silently run with random weights (and local folders open_clip cannot read)."""
    if spec.identifier.startswith("local-dir:"):
        _check_local_config(Path(spec.identifier[len("local-dir:"):]))
    if spec.random_weights or spec.backend != OPEN_CLIP:
        return
    if spec.identifier.startswith("local-dir:"):
        folder = Path(spec.identifier[len("local-dir:"):])
        if not any(any(folder.glob(g)) for g in CHECKPOINT_GLOBS):
            raise ModelError(f"{folder} holds no weights file open_clip reads ({', '.join(CHECKPOINT_GLOBS)}); save "
                             "the weights as one of them, or pass --pretrained none for random weights")
    elif not spec.identifier.startswith("hf-hub:") and not spec.pretrained:
        import open_clip

        tags = open_clip.list_pretrained_tags_by_model(spec.identifier)
        raise ModelError(
            f"open_clip model {spec.identifier!r} needs --pretrained TAG (known tags: {', '.join(tags) or 'none'}) "
            "or --pretrained none for random weights"
        )


def _check_local_config(folder: Path) -> None:
    """An open_clip ``local-dir:`` folder needs ``open_clip_config.json`` with a ``model_cfg`` object holding
    ``embed_dim``, ``vision_cfg`` and ``text_cfg`` (what open_clip reads); refuse it here, naming the key."""
    path = folder / "open_clip_config.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelError(f"{path} not found: a local-dir: model folder needs open_clip's config file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ModelError(f"{path}: not valid JSON ({err})") from None
    model_cfg = config.get("model_cfg") if isinstance(config, dict) else None
    if not isinstance(model_cfg, dict):
        raise ModelError(f"{path}: needs a 'model_cfg' object (open_clip's model config)")
    missing = [k for k in ("embed_dim", "vision_cfg", "text_cfg") if k not in model_cfg]
    if missing:
        raise ModelError(f"{path}: 'model_cfg' lacks {missing}; open_clip needs embed_dim, vision_cfg and text_cfg")


def _open_clip_names() -> list[str]:
    """open_clip's architecture names. Until open_clip is imported they are read from the model
    configs it ships, as ``open_clip.list_models()`` reads them, so a bad name is reported without
    paying for importing open_clip and torch."""
    if "open_clip" in sys.modules:
        return sys.modules["open_clip"].list_models()
    configs = Path(importlib.util.find_spec("open_clip").origin).parent / "model_configs"
    return sorted(path.stem for path in configs.glob("*.json")
                  if {"embed_dim", "vision_cfg", "text_cfg"} <= json.loads(path.read_text(encoding="utf-8")).keys())
