"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell

from hologram import Phase
from hologram.kernel import KernelTasks


@pytest.fixture
async def tasks() -> AsyncIterator[KernelTasks]:
    """A task group of the test's own, for a part built without a kernel (the kernel gives
    each part its group): closed when the test ends, so nothing it started outlives it."""
    group = KernelTasks()
    yield group
    await group.close()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A fresh, empty data directory for one kernel."""
    path = tmp_path / "data"
    path.mkdir()
    return path


@pytest.fixture
async def shell() -> AsyncIterator[InteractiveShell]:
    """A real IPython shell with `%load_ext hologram`. A kernel the test started and did not
    shut down (an assertion failed on the way) is shut down here: its SQLite connections'
    threads would otherwise keep the test process from ever exiting."""
    ipython = InteractiveShell.instance()
    ipython.run_line_magic("load_ext", "hologram")
    try:
        yield ipython
    finally:
        magics = ipython.magics_manager.registry.get("HologramMagics")
        kernel = getattr(magics, "kernel", None)
        if kernel is not None and kernel.phase not in (Phase.STOPPED, Phase.FAILED):
            await kernel.shutdown()
        ipython.run_line_magic("unload_ext", "hologram")
        InteractiveShell.clear_instance()


def _lingering_threads() -> list[threading.Thread]:
    """Threads the interpreter would wait for at exit, but for executors' idle workers,
    which exit when their executor is shut down at exit."""
    return [
        thread
        for thread in threading.enumerate()
        if thread is not threading.main_thread()
        and not thread.daemon
        and thread.is_alive()
        and not thread.name.startswith(("ThreadPoolExecutor", "asyncio_"))
    ]


EXIT_STATUS = pytest.StashKey[int]()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    session.config.stash[EXIT_STATUS] = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """A test that leaves a kernel open leaves its aiosqlite threads (not daemons) running,
    and the process would wait for them forever: CI would spend its whole budget on a run
    whose results were printed long before. Name them, and end the process failed."""
    if EXIT_STATUS not in config.stash:
        return
    lingering = _lingering_threads()
    for thread in lingering:
        thread.join(timeout=2.0)
    lingering = [thread for thread in lingering if thread.is_alive()]
    if not lingering:
        return
    names = ", ".join(sorted({thread.name for thread in lingering}))
    sys.stderr.write(
        f"\nthe tests left {len(lingering)} thread(s) running that would keep this process "
        f"from exiting ({names}): a kernel or connection was not closed\n"
    )
    sys.stderr.flush()
    sys.stdout.flush()
    os._exit(config.stash[EXIT_STATUS] or 1)
