"""torch.distributed sharding for the engine: ranks encode whole batches and exchange what others need.

Under ``torchrun`` (``WORLD_SIZE`` > 1 in the environment) :func:`setup` joins the process group
(NCCL on CUDA, gloo on CPU); without it everything here is a no-op for one process. The engine
plans the same batches on every rank and gives batch ``b`` to rank ``b % world``: each batch is
exactly the batch one process would run, so every embedding is bit-identical to it. Ranks share
the image embeddings (:meth:`Context.all_gather_rows`), send each other the caption embeddings
their rows need (:meth:`Context.all_gather`), and rank 0 collects the per-row scores
(:meth:`Context.gather_to_main`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist

GATHER_ROWS = 16384  # rows per collective, bounding the memory one gather needs


@dataclass(frozen=True)
class Context:
    """This process's place in the job."""

    rank: int = 0
    world: int = 1
    owns_group: bool = False  # True when setup() created the process group (and must destroy it)

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def shard(self, items: list, rank: int | None = None) -> list:
        """The strided share of ``items`` of this rank (or of ``rank``)."""
        return items[self.rank if rank is None else rank :: self.world]

    def broadcast(self, value: Any) -> Any:
        """Rank 0's ``value`` on every rank."""
        if self.world == 1:
            return value
        box = [value]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def all_gather(self, value: Any) -> list:
        """Every rank's ``value``, in rank order, on every rank."""
        if self.world == 1:
            return [value]
        out: list = [None] * self.world
        dist.all_gather_object(out, value)
        return out

    def gather_to_main(self, value: Any) -> list:
        """Every rank's ``value``, in rank order, on rank 0; other ranks get an empty list."""
        if self.world == 1:
            return [value]
        out: list | None = [None] * self.world if self.is_main else None
        dist.gather_object(value, out, dst=0)
        return out or []

    def all_gather_rows(self, local: torch.Tensor, counts: list[int], device: torch.device) -> list[torch.Tensor]:
        """Every rank's ``local`` rows (rank ``r`` holds ``counts[r]``), in rank order, on every rank."""
        if self.world == 1:
            return [local]
        width, most = local.shape[1], max(counts)
        parts: list[list[torch.Tensor]] = [[] for _ in range(self.world)]
        for start in range(0, most, GATHER_ROWS):
            block = torch.zeros(min(GATHER_ROWS, most - start), width, dtype=local.dtype)
            mine = local[start : start + len(block)]
            block[: len(mine)] = mine
            block = block.to(device)
            received = [torch.empty_like(block) for _ in range(self.world)]
            dist.all_gather(received, block)
            for rank, part in enumerate(received):
                parts[rank].append(part.cpu())
        return [torch.cat(p)[:n] if p else local[:0] for p, n in zip(parts, counts)]

    def close(self) -> None:
        if self.owns_group and dist.is_initialized():
            dist.destroy_process_group()


def setup(device: torch.device) -> Context:
    """Join (or reuse) the torchrun process group; a one-process :class:`Context` otherwise."""
    if dist.is_available() and dist.is_initialized():
        return Context(dist.get_rank(), dist.get_world_size())
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return Context()
    backend = "nccl" if device.type == "cuda" else "gloo"
    if device.type == "cuda":
        torch.cuda.set_device(device)
    dist.init_process_group(backend=backend)
    return Context(dist.get_rank(), dist.get_world_size(), owns_group=True)
