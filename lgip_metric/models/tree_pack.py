"""Tree-packed text inputs for causal, EOT-pooled text towers: each distinct token prefix encoded once.

In a causal text tower a token's hidden state depends only on the tokens before it, so texts that
share their first tokens (a caption and its flips, a template's paraphrases) share those hidden
states. :func:`tree_batch` merges the token ids of each pack of texts into a trie, one node per
distinct prefix, and lays the nodes out as one sequence: token id and position (the node's depth)
per node, and an attention mask under which a node sees exactly its ancestors and itself. Run
through the tower's own blocks, every node's hidden state equals the one of its prefix encoded
alone, and each text's feature is read at the node of its pooled (EOT) token. Packs are padded to
the batch's longest; a padding node sees only itself and no real node sees it.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

POOLS = ("argmax", "eos")  # the pooled token: the largest id (CLIP's EOT), or the first eos id


def pooled_position(ids: Sequence[int], pool: str, eos_id: int | None) -> int:
    """Index of the pooled token in ``ids``, as the tower picks it: the first largest id
    (``argmax``) or the first ``eos_id`` (``eos``; 0 where there is none, as argmax of a zero row)."""
    if pool == "argmax":
        return int(np.argmax(ids))
    return next((i for i, token in enumerate(ids) if token == eos_id), 0)


def shared_prefix(first: Sequence[int], second: Sequence[int]) -> int:
    """How many leading token ids ``first`` and ``second`` have in common."""
    shared = 0
    for a, b in zip(first, second):
        if a != b:
            break
        shared += 1
    return shared


def _trie(texts: Sequence[Sequence[int]], ends: Sequence[int]) -> tuple[list[int], list[int], list[int], list[int]]:
    """The trie of ``texts`` up to each one's ``ends`` index: per node its token id, depth and parent
    (-1 for a root); per text the node of its token at ``ends``."""
    tokens, depths, parents, pooled = [], [], [], []
    children: dict[tuple[int, int], int] = {}
    for ids, end in zip(texts, ends):
        node = -1
        for depth, token in enumerate(ids[: end + 1]):
            key = (node, token)
            if key not in children:
                children[key] = len(tokens)
                tokens.append(token)
                depths.append(depth)
                parents.append(node)
            node = children[key]
        pooled.append(node)
    return tokens, depths, parents, pooled


def trie_size(texts: Sequence[Sequence[int]]) -> int:
    """The number of distinct prefixes (trie nodes) of ``texts``: the tokens a packed forward computes."""
    return len(_trie(texts, [len(ids) - 1 for ids in texts])[0])


def tree_batch(packs: Sequence[Sequence[Sequence[int]]], pool: str, eos_id: int | None) -> dict[str, torch.Tensor]:
    """Model inputs of ``packs`` (each a list of token-id lists): ``input_ids`` and ``position_ids``
    ``[packs, nodes]``, ``tree_mask`` ``[packs, nodes, nodes]`` (True: the query node may attend the
    key node, its ancestor or itself), ``pooled_index``: per text, in pack order, the flat index
    (``pack * nodes + node``) of its pooled token's node, and for a last layer run at the pooled nodes
    alone (:func:`pooled_queries`) ``pooled_nodes`` ``[packs, most texts]`` (each pack's pooled nodes, in
    text order, padded with its last one) and ``pooled_slot``: per text, its flat index
    (``pack * most texts + k``) in them. Nodes after a text's pooled token are left out: a causal tower's
    pooled feature never sees them."""
    tries = [_trie(pack, [pooled_position(ids, pool, eos_id) for ids in pack]) for pack in packs]
    width = max(len(tokens) for tokens, *_ in tries)
    input_ids = np.zeros((len(packs), width), np.int64)
    positions = np.zeros((len(packs), width), np.int64)
    mask = np.zeros((len(packs), width, width), bool)
    mask[:, np.arange(width), np.arange(width)] = True  # every node (padding included) sees itself
    most = max(len(pack) for pack in packs)
    pooled_nodes = np.zeros((len(packs), most), np.int64)
    pooled, slots = [], []
    for p, (tokens, depths, parents, ends) in enumerate(tries):
        input_ids[p, : len(tokens)] = tokens
        positions[p, : len(tokens)] = depths
        for node, parent in enumerate(parents):
            if parent >= 0:  # a node's ancestors are its parent's ancestors and the parent itself
                mask[p, node, :node] = mask[p, parent, :node]
        pooled.extend(p * width + end for end in ends)
        pooled_nodes[p] = ends + ends[-1:] * (most - len(ends))
        slots.extend(range(p * most, p * most + len(ends)))
    return {"input_ids": torch.from_numpy(input_ids), "position_ids": torch.from_numpy(positions),
            "tree_mask": torch.from_numpy(mask), "pooled_index": torch.tensor(pooled, dtype=torch.long),
            "pooled_nodes": torch.from_numpy(pooled_nodes), "pooled_slot": torch.tensor(slots, dtype=torch.long)}


def is_tree_batch(batch: dict[str, torch.Tensor]) -> bool:
    """Whether ``batch`` was made by :func:`tree_batch`."""
    return "tree_mask" in batch


def additive_mask(tree_mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``tree_mask`` as the additive float mask attention layers take: 0 where a node may attend,
    -inf elsewhere (every row attends at least the node itself, so no row is all -inf)."""
    return torch.zeros(tree_mask.shape, dtype=dtype, device=tree_mask.device).masked_fill_(~tree_mask, float("-inf"))


def pooled_rows(hidden: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """The hidden states ``[packs, rows, width]`` at flat row indices, in text order: ``pooled_index`` over all
    nodes, or ``pooled_slot`` over the :func:`pooled_queries`."""
    return hidden.reshape(-1, hidden.shape[-1])[index]


def pooled_queries(hidden: torch.Tensor, mask: torch.Tensor, pooled_nodes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The hidden states ``[packs, nodes, width]`` and the rows of the additive ``mask`` ``[packs, nodes, nodes]``
    at each pack's ``pooled_nodes`` ``[packs, most texts]``: the queries of a last layer whose output is read
    only there (every node stays a key)."""
    return (torch.take_along_dim(hidden, pooled_nodes[..., None], dim=1),
            torch.take_along_dim(mask, pooled_nodes[..., None], dim=1))

