"""Text side of the engine: tokenise unique texts once, batch them by token length."""
from __future__ import annotations

from typing import Callable

from tqdm.auto import tqdm

TOKENIZE_CHUNK = 4096


def tokenize_all(tokenize: Callable[[list[str]], list[list[int]]], texts: list[str], show: bool) -> list[list[int]]:
    """Token ids of every text, tokenised in chunks (with a progress bar on long lists)."""
    ids: list[list[int]] = []
    with tqdm(total=len(texts), desc="tokenize", unit="text", disable=not show or None, leave=False) as bar:
        for start in range(0, len(texts), TOKENIZE_CHUNK):
            chunk = texts[start : start + TOKENIZE_CHUNK]
            ids.extend(tokenize(chunk))
            bar.update(len(chunk))
    return ids


def length_batches(ids: list[list[int]], batch_size: int, by_length: bool) -> list[list[int]]:
    """Batches of indices into ``ids``: longest first when ``by_length`` (so padding is minimal)."""
    order = sorted(range(len(ids)), key=lambda i: (-len(ids[i]), i)) if by_length else list(range(len(ids)))
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
