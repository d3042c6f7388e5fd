"""Spread a build's per-caption work over forked worker processes, with results in input order.

The workers are forked, so they inherit the work's state (the perturber and its statistics) instead of
receiving a pickled copy, and the process's string hashing, so a set iterates as it does here: the
results are those of the same work done in this process. They ignore Ctrl-C; this process stops them.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

_job: tuple[Callable, object] | None = None  # (work, state) of a worker process


def default_workers() -> int:
    """One worker per CPU core this process may use (its CPU affinity where the system has one): also the
    most :func:`map_chunks` starts."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@contextmanager
def map_chunks(work: Callable, state: object, items: Sequence, workers: int, bar, chunk_size: int,
               background: bool = False) -> Iterator[Iterator]:
    """A context giving the results ``work(chunk, state)`` of the chunks of ``chunk_size`` items, in order,
    each advancing the tqdm ``bar`` by its items. With ``workers`` > 1, or ``background``, a pool of forked
    processes starts on entry and works ahead (also while this process does other work); it is stopped on
    exit. Otherwise, with one chunk, or with no fork (Windows) the chunks are worked here as the results are
    read."""
    chunks = [items[i:i + chunk_size] for i in range(0, len(items), chunk_size)]
    if (workers == 1 and not background) or len(chunks) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        yield _advance(bar, chunks, (work(chunk, state) for chunk in chunks))
        return
    processes = min(workers, len(chunks), default_workers())
    with multiprocessing.get_context("fork").Pool(processes, _start_worker, (work, state)) as pool:
        yield _advance(bar, chunks, pool.imap(_run, chunks))


def _advance(bar, chunks: list[Sequence], results: Iterator) -> Iterator:
    for chunk, result in zip(chunks, results):
        bar.update(len(chunk))
        yield result


def _start_worker(work: Callable, state: object) -> None:
    """Set a forked worker's job (inherited, not pickled) and leave Ctrl-C to the parent."""
    global _job
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _job = (work, state)


def _run(chunk: Sequence):
    work, state = _job
    return work(chunk, state)
