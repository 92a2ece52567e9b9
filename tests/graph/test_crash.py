"""The graph survives a SIGKILL in the middle of a commit: WAL keeps whole transactions."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from hologram.kernel import KernelTasks, ManualClock
from hologram.memory import GraphStore
from tests.memory.helpers import AxisEmbedder

ROOT = Path(__file__).resolve().parents[2]


async def test_the_graph_survives_a_sigkill_during_a_commit_with_no_partial_triple(
    tmp_path: Path,
    tasks: KernelTasks,
) -> None:
    path = tmp_path / "graph.db"
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.graph.crash_child", str(path), "3"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().split() == ["COMMITTED", "3"]
        assert child.stdout.readline().strip() == "IN_TRANSACTION"
        # The fourth batch's rows are written inside the open transaction right now.
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=10) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
    assert os.path.exists(f"{path}-wal"), "the database runs in WAL mode"  # noqa: ASYNC240
    store = await GraphStore.open_at(
        path, AxisEmbedder(), ManualClock(), tasks=tasks.scope("graph")
    )
    try:
        assert (await store.stats())["current_facts"] == 60
        db = sqlite3.connect(path)
        batches = db.execute(
            "SELECT sentence_text, COUNT(*) FROM relations GROUP BY sentence_text"
        ).fetchall()
        assert sorted(batches) == [("batch 0", 20), ("batch 1", 20), ("batch 2", 20)]
        orphans = db.execute("SELECT COUNT(*) FROM entities WHERE name LIKE 'b3-%'").fetchone()
        assert orphans == (0,), "the killed batch left no entity behind either"
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        await store.close()
