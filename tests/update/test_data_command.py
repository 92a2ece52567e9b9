"""`python -m hologram data …`, run as the user runs it."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.update import shipped
from tests.update.helpers import hashes


def hologram(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hologram", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_versions_prints_each_store_beside_what_this_release_expects(tmp_path: Path) -> None:
    root = shipped.build(tmp_path / "data", graph_version=3)
    text = hologram("data", "versions", "--data", str(root))
    assert text.returncode == 0, text.stderr
    assert "written by (unversioned" in text.stdout
    graph_line = next(line for line in text.stdout.splitlines() if line.startswith("graph "))
    assert graph_line.split() == ["graph", "graph.db", "3", "6", "older"]

    result = hologram("data", "versions", "--json", "--data", str(root))
    stores = {s["name"]: s for s in json.loads(result.stdout)["stores"]}
    assert stores["input-journal"] == {
        "name": "input-journal",
        "path": "inputs.db",
        "kind": "sqlite",
        "found": 0,
        "expected": 3,
        "status": "older",
    }
    assert stores["media"]["status"] == "absent"


def test_migrate_dry_run_says_what_it_would_do_and_changes_nothing(tmp_path: Path) -> None:
    root = shipped.build(tmp_path / "data", graph_version=4)
    before = hashes(root)
    result = hologram("data", "migrate", "--dry-run", "--data", str(root))
    assert result.returncode == 0, result.stderr
    assert "would migrate graph (graph.db) 4 → 6" in result.stdout
    assert hashes(root) == before and not (root / "backups").exists()


def test_migrate_then_versions_are_current(tmp_path: Path) -> None:
    root = shipped.build(tmp_path / "data", graph_version=4)
    result = hologram("data", "migrate", "--data", str(root))
    assert result.returncode == 0, result.stderr
    assert "migrated graph 4 → 6" in result.stdout and "kept in" in result.stdout
    report = json.loads(hologram("data", "versions", "--json", "--data", str(root)).stdout)
    assert {s["status"] for s in report["stores"]} <= {"current", "absent"}
    assert report["written_by"] == report["release"]


def test_backup_then_restore_gives_back_every_byte(tmp_path: Path) -> None:
    root = shipped.build(tmp_path / "data")
    before = hashes(root)
    saved = tmp_path / "saved"
    assert hologram("data", "backup", str(saved), "--data", str(root)).returncode == 0
    (root / "inputs.db").write_bytes(b"")
    (root / "stray.txt").write_text("made after the backup")

    result = hologram("data", "restore", str(saved), "--data", str(root))

    assert result.returncode == 0, result.stderr
    assert hashes(root) == before
    # What the restore replaced is kept too.
    (kept,) = (root / "backups").iterdir()
    assert (kept / "files" / "stray.txt").read_text() == "made after the backup"


def test_a_newer_data_dir_is_refused_by_migrate_with_a_clear_error(tmp_path: Path) -> None:
    root = shipped.build(tmp_path / "data")
    assert hologram("data", "migrate", "--data", str(root)).returncode == 0
    db = sqlite3.connect(root / "inputs.db")
    db.execute("PRAGMA user_version = 4")
    db.close()
    result = hologram("data", "migrate", "--data", str(root))
    assert result.returncode == 2
    assert "store 'input-journal' (inputs.db) is at schema version 4" in result.stderr


async def test_a_backup_beside_a_running_kernel_uses_the_online_api(tmp_path: Path) -> None:
    import asyncio

    from hologram import Kernel

    root = tmp_path / "data"
    saved = tmp_path / "saved"
    async with Kernel(root, environ={}) as kernel:
        for n in range(5):
            await kernel.inputs.journal.record(f"while running {n}", "notebook", 3, "user")
        result = await asyncio.to_thread(
            hologram, "data", "backup", str(saved), "--data", str(root)
        )
        refused = await asyncio.to_thread(
            hologram, "data", "restore", str(saved), "--data", str(root)
        )
    assert result.returncode == 0, result.stderr
    assert "(online)" in result.stdout
    db = sqlite3.connect(saved / "files" / "inputs.db")
    assert db.execute("SELECT count(*) FROM inputs").fetchone()[0] == 5
    db.close()
    assert not (saved / "files" / "inputs.db-wal").exists()
    # A restore under a running kernel is refused: it would pull the files from under it.
    assert refused.returncode == 2 and "in use by another Hologram kernel" in refused.stderr


def test_config_set_on_a_damaged_data_dir_is_refused_not_recreated(tmp_path: Path) -> None:
    root = shipped.build(tmp_path / "data")
    assert hologram("data", "migrate", "--data", str(root)).returncode == 0
    (root / "config.db").write_bytes(b"")
    result = hologram("config", "set", "core.agent.max_tool_rounds", "4", "--data", str(root))
    assert result.returncode == 2 and "config.db: the database is empty" in result.stderr
    assert (root / "config.db").stat().st_size == 0
