"""`python -m hologram serve`: boot, say what booted, run until SIGINT or SIGTERM, shut down."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

from hologram.config import ConfigError
from hologram.facade import Kernel
from hologram.kernel import AssemblyError


def _say(line: str) -> None:
    print(line, flush=True)


async def serve(data_dir: str | os.PathLike[str] | None = None) -> int:
    """Run a kernel until SIGINT or SIGTERM; return the process exit code."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)

    kernel = Kernel(data_dir)
    try:
        await kernel.start()
    except (AssemblyError, ConfigError) as exc:
        print(f"hologram: cannot start: {exc}", file=sys.stderr, flush=True)
        return 1
    for line in kernel.topology():
        _say(line)
    _say(
        f"hologram ready in {kernel.boot_seconds * 1000:.0f} ms on {Path(kernel.data_dir)} "
        f"(pid {os.getpid()}); stop with Ctrl-C or SIGTERM"
    )
    await stop.wait()
    _say("hologram stopping: flushing stores")
    await kernel.shutdown()
    _say("hologram stopped")
    return 0
