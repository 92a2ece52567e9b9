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
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from enum import StrEnum
from pathlib import Path

from hologram.eval.unit import Unit, UnitResult, run_unit, run_unit_blocking


class Executor(StrEnum):
    LOCAL = "local"
    DASK = "dask"
    RAY = "ray"


async def run_local(
    units: Sequence[Unit], workers: int, work_dir: Path | None
) -> AsyncIterator[UnitResult]:
    """One worker: each unit in this event loop (a notebook's, too). More: spawned worker
    processes, each with its own event loop and kernels."""
    if workers <= 1:
        for unit in units:
            yield await run_unit(unit, work_dir)
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        directory = None if work_dir is None else str(work_dir)
        futures = [pool.submit(run_unit_blocking, unit, directory) for unit in units]
        for finished in asyncio.as_completed([asyncio.wrap_future(f) for f in futures]):
            yield await finished


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
) -> AsyncIterator[UnitResult]:
    if executor is Executor.LOCAL:
        return run_local(units, workers, work_dir)
    if executor is Executor.DASK:
        return run_dask(units, workers, address)
    raise RuntimeError(
        "the ray executor is not provided: Hologram's distributed sweeps use Dask "
        "(--executor dask, pip install 'hologram[dask]'); see hologram/eval/executors.py"
    )
