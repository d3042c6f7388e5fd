"""What a tokenizer's output depends on, read from the tokenizer itself: its whole vocabulary and rules.

Two encoders share kept token ids (:class:`~lgip_metric.scoring.input_cache.TokenStore`) only when these
are equal, with the encoder's text settings (context length, padding, normalisation) beside them.
"""
from __future__ import annotations

import hashlib
import json


def tokenizer_digest(tokenizer) -> str | None:
    """SHA-256 of everything ``tokenizer`` turns texts into ids with: a ``tokenizers`` backend's full
    serialisation (transformers' tokenizers, open_clip's ``HFTokenizer``), or open_clip's ``SimpleTokenizer``'s
    vocabulary, merges, special ids and cleaning; None for a tokenizer of another kind (nothing is shared)."""
    inner = getattr(tokenizer, "tokenizer", None)
    backend = getattr(tokenizer, "backend_tokenizer", None) or getattr(inner, "backend_tokenizer", None)
    extra = {name: _plain(getattr(tokenizer, name, None)) for name in ("context_length", "clean_fn", "reduction_fn",
                                                                    "strip_sep_token")}
    if backend is not None:
        rules = hashlib.sha256(backend.to_str().encode()).hexdigest()
    elif hasattr(tokenizer, "encoder") and hasattr(tokenizer, "bpe_ranks"):
        rules = _simple_rules(tokenizer)
    else:
        return None
    digest = hashlib.sha256(bytes.fromhex(rules))
    digest.update(json.dumps({"class": type(tokenizer).__name__, **extra}, sort_keys=True).encode())
    return digest.hexdigest()


_SEEN: list[tuple[dict, dict, list, str]] = []  # the last vocabularies digested: (encoder, merges, special, digest)
SEEN_KEPT = 4


def _simple_rules(tokenizer) -> str:
    """SHA-256 of a ``SimpleTokenizer``'s vocabulary, merges and special ids. Each model of a sweep loads its own
    tokenizer: one whose tables equal (``==``, item by item) those of one digested before gets that digest back
    instead of serialising its ~100,000 entries again (0.1 s a model on 2 CPU cores)."""
    special = [getattr(tokenizer, "sot_token_id", None), getattr(tokenizer, "eot_token_id", None),
               list(getattr(tokenizer, "all_special_ids", []))]
    for encoder, merges, seen_special, digest in _SEEN:
        if special == seen_special and tokenizer.encoder == encoder and tokenizer.bpe_ranks == merges:
            return digest
    text = json.dumps({"encoder": sorted(tokenizer.encoder.items()),
                       "merges": sorted((rank, list(pair)) for pair, rank in tokenizer.bpe_ranks.items()),
                       "special": special})
    digest = hashlib.sha256(text.encode()).hexdigest()
    _SEEN.insert(0, (dict(tokenizer.encoder), dict(tokenizer.bpe_ranks), special, digest))
    del _SEEN[SEEN_KEPT:]
    return digest


def _plain(value):
    """A setting as JSON can hold it: functions by their qualified name."""
    if callable(value):
        return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', type(value).__name__)}"
    return value if value is None or isinstance(value, (int, float, str, bool)) else repr(value)
