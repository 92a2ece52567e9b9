"""Where units run: in this process, in local worker processes, or on a Dask cluster.

Every executor takes the same pending units and yields each `UnitResult` as it finishes, so
the experiment saves it at once (and a run cut short keeps what it finished).

Dask distributed is the engine for sweeps that outgrow one machine (the ``[dask]`` extra):
it is plain Python wheels that install in seconds, a `LocalCluster` starts in-process for
a try-out, and ``Client("tcp://host:8786")`` reaches an existing cluster. Units are coarse
(seconds to minutes each, no shared data), so Ray's object store and actors would buy
nothing here while adding a daemon and a much larger install.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from enum import StrEnum
from functools import partial
from pathlib import Path

from hologram.eval.unit import Unit, UnitResult, run_unit, run_unit_blocking

Progress = Callable[[str, int, int], None]
"""Told ``(unit key, steps done, steps)`` as a unit replays turns and asks probes."""


class Executor(StrEnum):
    LOCAL = "local"
    DASK = "dask"
    RAY = "ray"


async def run_local(
    units: Sequence[Unit], workers: int, work_dir: Path | None, progress: Progress | None = None
) -> AsyncIterator[UnitResult]:
    """One worker: each unit in this event loop (a notebook's, too). More: spawned worker
    processes, each with its own event loop and kernels."""
    if workers <= 1:
        for unit in units:
            told = None if progress is None else partial(progress, unit.key)
            yield await run_unit(unit, work_dir, progress=told)
        return
    context = multiprocessing.get_context("spawn")
    with (
        ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool,
        _relayed(context, progress) as reports,
    ):
        directory = None if work_dir is None else str(work_dir)
        futures = [pool.submit(run_unit_blocking, unit, directory, reports) for unit in units]
        for finished in asyncio.as_completed([asyncio.wrap_future(f) for f in futures]):
            yield await finished


@contextmanager
def _relayed(context: multiprocessing.context.SpawnContext, progress: Progress | None) -> Iterator:
    """A queue the worker processes report progress to, relayed onto this event loop by a
    thread (so `progress` runs where the experiment does); None when nobody listens."""
    if progress is None:
        yield None
        return
    loop = asyncio.get_running_loop()
    with context.Manager() as manager:
        reports = manager.Queue()

        def relay() -> None:
            while (item := reports.get()) is not None:
                loop.call_soon_threadsafe(progress, *item)

        thread = threading.Thread(target=relay, name="eval-progress", daemon=True)
        thread.start()
        try:
            yield reports
        finally:
            reports.put(None)
            thread.join(timeout=5)


async def run_dask(
    units: Sequence[Unit], workers: int, address: str | None
) -> AsyncIterator[UnitResult]:
    try:
        from dask.distributed import Client, LocalCluster
        from dask.distributed import as_completed as dask_completed
    except ImportError:
        raise RuntimeError(
            "the dask executor needs Dask distributed: pip install 'hologram[dask]'"
        ) from None
    cluster = None
    if address is None:
        cluster = LocalCluster(
            n_workers=max(workers, 1), threads_per_worker=1, processes=True, dashboard_address=None
        )
    client = Client(address or cluster)
    loop = asyncio.get_running_loop()
    try:
        futures = client.map(run_unit_blocking, list(units), pure=False)
        # Each result as it finishes (the iterator blocks, so it is stepped in a thread).
        pending = dask_completed(futures)
        for _ in range(len(futures)):
            future = await loop.run_in_executor(None, next, pending)
            yield future.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def executor_stream(
    executor: Executor,
    units: Sequence[Unit],
    *,
    workers: int = 1,
    work_dir: Path | None = None,
    address: str | None = None,
    progress: Progress | None = None,
) -> AsyncIterator[UnitResult]:
    """Each unit's result as it finishes. A cluster's units report no progress of their own
    (the experiment counts each as done when its result arrives)."""
    if executor is Executor.LOCAL:
        return run_local(units, workers, work_dir, progress)
    if executor is Executor.DASK:
        return run_dask(units, workers, address)
    raise RuntimeError(
        "the ray executor is not provided: Hologram's distributed sweeps use Dask "
        "(--executor dask, pip install 'hologram[dask]'); see hologram/eval/executors.py"
    )
