"""The one way the kernel opens an aiosqlite connection.

aiosqlite runs each connection on a thread of its own, and that thread is not a daemon: a
process whose kernel was never shut down (a script that forgot, a notebook cell that
raised, a test that failed) would print its last line and then wait for those threads
forever. Here the thread is made a daemon, so such a process ends. Nothing acknowledged is
lost by that: every store commits (and fsyncs) before it acknowledges; what an orderly
shutdown adds (flushes, checkpoints) is the shutdown's job, not the thread's.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import aiosqlite


def connect_sqlite(path: Path | str, **options: Any) -> aiosqlite.Connection:
    """`aiosqlite.connect`, awaited the same way, on a daemon thread."""
    connection = aiosqlite.connect(path, **options)
    # aiosqlite builds its thread in the constructor and starts it on first await; the
    # attribute is private, so a release that renames it only loses this guard, and
    # tests/kernel/test_sqlite.py says so.
    thread = getattr(connection, "_thread", None)
    if isinstance(thread, threading.Thread) and not thread.is_alive():
        thread.daemon = True
    return connection
