"""A process whose kernel was never shut down still ends (aiosqlite's threads are daemons)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from hologram.kernel import connect_sqlite

FORGETFUL_SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from hologram import Kernel

    async def main():
        kernel = Kernel(sys.argv[1])
        await kernel.start()
        await kernel.say("hello")
        print("started and answered, never shut down", flush=True)

    asyncio.run(main())
    """
)


async def test_the_connection_thread_is_a_daemon(tmp_path: Path) -> None:
    connection = connect_sqlite(tmp_path / "x.db")
    assert connection._thread.daemon  # a renamed attribute in a new aiosqlite fails here
    async with connection as db:
        assert (await (await db.execute("SELECT 1")).fetchone()) == (1,)


def test_a_process_that_never_shuts_its_kernel_down_exits(data_dir: Path) -> None:
    # Before the daemon threads, this process printed its line and then waited forever on
    # the config and graph connections' threads; the timeout turns that into a failure.
    done = subprocess.run(
        [sys.executable, "-c", FORGETFUL_SCRIPT, str(data_dir)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "never shut down" in done.stdout, done.stderr[-2000:]
    assert done.returncode == 0, done.stderr[-2000:]
