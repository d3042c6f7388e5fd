"""The interface every backend implements, and the helpers they share."""
from __future__ import annotations

import contextlib
import copy
import hashlib
import json
from abc import ABC, abstractmethod
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cached_property
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, TypeVar

import torch
import torch.nn.functional as F
from PIL import Image

from lgip_metric.models import tree_pack
from lgip_metric.models.token_identity import tokenizer_digest
from lgip_metric.models.registry import ModelError  # noqa: F401  (re-exported for the backends)

if TYPE_CHECKING:
    from lgip_metric.models.pixel_stages import PixelStages

Batch = dict[str, torch.Tensor]
RANDOM_INIT_SEED = 0  # random-weight models of one architecture are identical in every run and backend
PROBE_IMAGE_SIDE = 224  # the blank image whose preprocessed shape sizes the image tower's activations
T = TypeVar("T")


class Encoder(ABC):
    """A loaded model: turns images and texts into L2-normalised float32 embeddings.

    ``image_transform`` is a picklable callable (PIL image -> dict of tensors, no batch dim) that
    DataLoader workers run; texts go ``normalize_text`` -> ``tokenize`` -> ``text_batch`` ->
    ``encode_texts``. ``dynamic_padding`` says whether a batch may be padded to its longest text
    only (exact for causal, EOT-pooled text towers) instead of the fixed length the model needs.
    ``tree_packing`` says whether ``encode_texts`` also takes :meth:`tree_batch` inputs (each distinct
    token prefix encoded once: :mod:`~lgip_metric.models.tree_pack`): asked for and exact for this
    tower; ``packing_blocker`` says why a tower cannot be packed exactly (None when it can), ``pool_rule``
    which token it pools: ``("argmax", None)`` or ``("eos", eos_id)`` (:data:`tree_pack.POOLS`).
    """

    backend: str
    model_id: str
    held: dict | None = None  # what is known of a model a user passed as an object (:func:`held_record`)
    dynamic_padding: bool
    packing_blocker: str | None
    pool_rule: tuple[str, int | None]
    image_transform: Callable[[Image.Image], Batch]
    pixel_stages: PixelStages | None = None  # image_transform cut where it holds whole pixels (None: it cannot be)

    def __init__(self, model: torch.nn.Module, device: torch.device, precision: str, random_weights: bool,
                 tree_packing: bool = True):
        self.model = model.eval().to(device)
        if device.type == "cuda":
            self.model.to(memory_format=torch.channels_last)
        self.device = device
        self.precision = precision
        self.random_weights = random_weights
        self.packing_asked = tree_packing
        self._identifying: Future | None = None

    def __getstate__(self) -> dict:
        """An encoder pickled for a DataLoader worker (spawn start method) travels without its
        torch modules and its background work: workers only preprocess and tokenise."""
        return {key: value for key, value in self.__dict__.items()
                if not isinstance(value, torch.nn.Module) and key != "_identifying"}

    @cached_property
    def weights_sha256(self) -> str:
        """The weights' identity, hashed on first use only: loading a model for the Space or a
        benchmark never pays for it (seconds for a ViT-L)."""
        return weights_digest(self.model)

    @abstractmethod
    def normalize_text(self, text: str) -> str:
        """The text exactly as the model must see it (e.g. lower-cased for SigLIP 2)."""

    @abstractmethod
    def tokenize(self, texts: list[str]) -> list[list[int]]:
        """Token ids per text: truncated, with special tokens, unpadded when dynamic padding is exact."""

    @abstractmethod
    def text_batch(self, ids: list[list[int]]) -> Batch:
        """Pad token ids into model inputs: to the longest in the batch or to the fixed length."""

    @property
    @abstractmethod
    def text_tower(self) -> torch.nn.Module:
        """The modules that encode a text (its blocks and projections, not the image tower)."""

    @cached_property
    def text_token_bytes(self) -> int:
        """Bytes per token of the text tower's widest activation (its MLP's hidden layer) at this precision."""
        width = max(m.out_features for m in self.text_tower.modules() if isinstance(m, torch.nn.Linear))
        return width * self._activation_bytes

    @cached_property
    def image_row_bytes(self) -> int | None:
        """Bytes per image of the widest output of any module of the image tower (a ViT's MLP hidden layer
        over its patches) at this precision, found by running the tower on one blank image on the meta
        device: shapes only, no compute, no memory. None where the tower cannot run there (an input whose
        values steer the forward, as NaFlex's patch grid)."""
        pixels = self.image_transform(Image.new("RGB", (PROBE_IMAGE_SIDE, PROBE_IMAGE_SIDE)))
        tower, inputs = self._image_tower({key: value[None].to("meta") for key, value in pixels.items()})
        state = {name: torch.empty_like(t, device="meta", dtype=torch.float32 if t.is_floating_point() else t.dtype)
                 for name, t in [*tower.named_parameters(), *tower.named_buffers()]}
        widest = [0]

        def record(module, args, output) -> None:
            if isinstance(output, torch.Tensor):
                widest[0] = max(widest[0], output.numel())

        hooks = [m.register_forward_hook(record) for m in tower.modules() if next(m.children(), None) is None]
        try:
            with torch.inference_mode():
                torch.func.functional_call(tower, state, (), inputs)
        except (NotImplementedError, RuntimeError):
            return None
        finally:
            for hook in hooks:
                hook.remove()
        return widest[0] * self._activation_bytes

    @property
    def _activation_bytes(self) -> int:
        return 4 if self.precision == "fp32" else 2

    @property
    def tree_packing(self) -> bool:
        """Whether the engine gives this encoder tree-packed text batches: asked for and exact."""
        return self.packing_asked and self.packing_blocker is None

    def tree_batch(self, packs: list[list[list[int]]]) -> Batch:
        """Tree-packed model inputs of ``packs`` (lists of ``tokenize`` outputs): see :func:`tree_pack.tree_batch`."""
        return tree_pack.tree_batch(packs, *self.pool_rule)

    @abstractmethod
    def _text_features(self, batch: Batch) -> torch.Tensor:
        """Unnormalised text embeddings of a batch already on the device (a ``text_batch`` or a ``tree_batch``)."""

    @abstractmethod
    def _image_features(self, batch: Batch) -> torch.Tensor:
        """Unnormalised image embeddings of a batch already on the device."""

    @abstractmethod
    def _image_tower(self, batch: Batch) -> tuple[torch.nn.Module, dict[str, torch.Tensor]]:
        """The module of the image tower that ``_image_features`` runs, and its keyword inputs for ``batch``."""

    @abstractmethod
    def settings(self) -> dict:
        """Provenance: text (tokenizer, padding, normalisation) and image preprocessing settings."""

    def encode_texts(self, batch: Batch) -> torch.Tensor:
        """L2-normalised float32 embeddings (on the CPU) of a ``text_batch``, or of a ``tree_batch``'s
        texts in pack order."""
        return self.start_texts(batch).result()

    def encode_images(self, batch: Batch) -> torch.Tensor:
        """L2-normalised float32 embeddings (on the CPU) of stacked ``image_transform`` outputs."""
        return self.start_images(batch).result()

    def start_texts(self, batch: Batch) -> "Pending":
        """:meth:`encode_texts` queued on the device: returns once the work is launched, so that the next batch
        can be launched while this one runs on a GPU; ``result()`` waits for it."""
        return self._start(self._text_features, batch)

    def start_images(self, batch: Batch) -> "Pending":
        """:meth:`encode_images` queued on the device (see :meth:`start_texts`)."""
        return self._start(self._image_features, batch)

    def embed_texts(self, texts: list[str]) -> torch.Tensor:
        """L2-normalised float32 embeddings of ``texts`` in one batch: ``normalize_text`` ->
        ``tokenize`` -> ``text_batch`` -> ``encode_texts``."""
        return self.encode_texts(self.text_batch(self.tokenize([self.normalize_text(t) for t in texts])))

    def embed_images(self, images: list[Image.Image]) -> torch.Tensor:
        """L2-normalised float32 embeddings of ``images`` in one batch, with the model's own preprocessing."""
        pixels = [self.image_transform(image) for image in images]
        return self.encode_images({key: torch.stack([p[key] for p in pixels]) for key in pixels[0]})

    def _start(self, forward: Callable[[Batch], torch.Tensor], batch: Batch) -> "Pending":
        batch = {k: _to_device(v, self.device) for k, v in batch.items()}
        autocast = self.precision != "fp32"
        dtype = torch.bfloat16 if self.precision == "bf16" else torch.float16
        with torch.inference_mode(), torch.autocast(self.device.type, dtype=dtype, enabled=autocast):
            return Pending(F.normalize(forward(batch).float(), dim=-1))

    def identify_in_background(self) -> None:
        """Start computing the provenance record (its weights hash: a ViT-L's 1.7 GB copied off the GPU and
        hashed, seconds) in a thread, so that it overlaps the encoding; :meth:`provenance` and
        :meth:`fingerprint` wait for it."""
        if self._identifying is None and "_identity" not in self.__dict__:
            pool = ThreadPoolExecutor(1, thread_name_prefix="lgip-identity")
            self._identifying = pool.submit(lambda: self._identity)
            pool.shutdown(wait=False)  # the thread ends with its one task

    def _record(self) -> dict:
        """:attr:`_identity`, once a background computation of it (if any) has finished."""
        if self._identifying is not None:
            self._identifying.result()
        return self._identity

    def provenance(self) -> dict:
        """Everything that identifies the embeddings this encoder makes (a copy of :attr:`_identity`)."""
        return copy.deepcopy(self._record())

    @cached_property
    def _identity(self) -> dict:
        """The provenance record, computed once per encoder (library versions, settings, weights hash)."""
        settings = self.settings()
        settings["text"]["tree_packing"] = self._packing_note()
        return {
            "model_id": self.model_id,
            "backend": self.backend,
            "random_weights": self.random_weights,
            "weights_sha256": self.weights_sha256,
            "precision": self.precision,
            "device": str(self.device),
            **settings,
            **({"held": self.held} if self.held else {}),
            "libraries": library_versions(),
        }

    @cached_property
    def token_settings(self) -> dict | None:
        """Everything :meth:`tokenize` depends on: the text settings, the tokenizer's whole vocabulary and rules
        and the libraries' versions (None where the tokenizer cannot be identified: its ids are not shared)."""
        digest = tokenizer_digest(self.tokenizer)
        if digest is None:
            return None
        text = {k: v for k, v in self.settings()["text"].items() if k != "pooling"}
        return {"encoder": type(self).__name__, "text": text, "tokenizer": digest, "libraries": library_versions()}

    def _packing_note(self) -> str:
        """Provenance: whether texts were tree-packed, and why not."""
        if self.tree_packing:
            return ("on: texts sharing a token prefix packed into one sequence (positions by depth, each token "
                    "attending its ancestors); each distinct prefix encoded once")
        if not self.packing_asked:
            return "off: turned off (--no-tree-packing / tree_packing=False)"
        return f"off: {self.packing_blocker}"

    def fingerprint(self) -> str:
        """A hash of the provenance fields that change embeddings (device index excluded)."""
        key = {k: v for k, v in self._record().items() if k != "device"}
        key["device_type"] = self.device.type
        return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:24]


class Pending:
    """Embeddings on their way to the CPU: on a GPU copied into pinned memory behind the work queued before them
    (an event marks the end of the copy), elsewhere already there. ``result()`` waits and returns them."""

    def __init__(self, features: torch.Tensor):
        self.done: torch.cuda.Event | None = None
        if features.device.type == "cuda":
            self.value = torch.empty(features.shape, dtype=features.dtype, pin_memory=True)
            self.value.copy_(features, non_blocking=True)
            self.done = torch.cuda.Event()
            self.done.record()
        else:
            self.value = features.cpu()

    def result(self) -> torch.Tensor:
        if self.done is not None:
            self.done.synchronize()
        return self.value


def one_ahead(started: Iterable[tuple[T, Pending | None]]) -> Iterator[tuple[T, torch.Tensor | None]]:
    """``(key, pending)`` pairs as ``(key, embeddings)``, each waited for only once the next is launched: on a GPU
    one batch is always queued behind the one whose results the caller takes (None stays None)."""
    held = None
    for item in started:
        if held is not None:
            yield held[0], held[1] and held[1].result()
        held = item
    if held is not None:
        yield held[0], held[1] and held[1].result()


@contextlib.contextmanager
def seeded_init() -> Iterator[None]:
    """Build a model's random initial weights from ``RANDOM_INIT_SEED``, leaving the caller's
    CPU random state as it was."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(RANDOM_INIT_SEED)
        yield


def _to_device(tensor: torch.Tensor, device: torch.device) -> torch.Tensor:
    tensor = tensor.to(device, non_blocking=True)
    if device.type == "cuda" and tensor.ndim == 4:
        tensor = tensor.contiguous(memory_format=torch.channels_last)
    return tensor


def weights_digest(model: torch.nn.Module) -> str:
    """SHA-256 of every parameter and buffer (name, dtype, shape, bytes): the weights' identity."""
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        flat = tensor.detach().to("cpu").contiguous().reshape(-1)
        digest.update(f"{name}|{flat.dtype}|{tuple(tensor.shape)}".encode())
        digest.update(memoryview(flat.view(torch.uint8).numpy()))
    return digest.hexdigest()


def held_record(model: torch.nn.Module, known: dict, unknown: list[str]) -> dict:
    """Provenance of a model a user passed as an object: that it was, its class and size, what its backend
    tells of it (``known``), and what nothing tells (``unknown``); its weights hash is the record's
    ``weights_sha256``."""
    cls = type(model)
    return {"source": "user-supplied object", "class": f"{cls.__module__}.{cls.__qualname__}",
            "parameters": sum(p.numel() for p in model.parameters()), **known,
            "unknown": ["whether the weights are trained (random_weights reads false, unchecked)", *unknown]}


def library_versions() -> dict:
    """Versions of the libraries whose code shapes the embeddings (decoding, resizing, models)."""
    import open_clip
    import PIL
    import torchvision
    import transformers

    return {
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "open_clip": open_clip.__version__,
        "transformers": transformers.__version__,
        "pillow": PIL.__version__,
    }
