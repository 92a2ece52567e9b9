"""Damaged files are found when the kernel opens the data dir: refused with the file named
and the way back from a backup, never opened as a fresh store (issue 15, item 3)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hologram import Kernel
from hologram.kernel import BootError
from hologram.update import DataDirDamaged, ManifestError, prepare
from tests.update import shipped
from tests.update.helpers import hashes

# Records acknowledged inputs, then dies as SIGKILL would leave them: in the write-ahead
# log, not yet in the database file.
RECORD_THEN_KILL = textwrap.dedent(
    """
    import asyncio, os, signal, sys
    from pathlib import Path
    from hologram.agent.journal import InputJournal

    async def main():
        journal = await InputJournal.open(Path(sys.argv[1]) / "inputs.db")
        for n in range(int(sys.argv[2])):
            await journal.record(f"acknowledged {n}", "notebook", 3, "user")
        os.kill(os.getpid(), signal.SIGKILL)

    asyncio.run(main())
    """
)


def _killed_with_wal(tmp_path: Path, inputs: int = 40) -> Path:
    root = shipped.build(tmp_path / "data", turns=5)
    prepare(root)
    result = subprocess.run(
        [sys.executable, "-c", RECORD_THEN_KILL, str(root), str(inputs)], timeout=120
    )
    assert result.returncode == -signal.SIGKILL
    assert (root / "inputs.db-wal").stat().st_size > 4096
    return root


def _journal_count(root: Path) -> int:
    db = sqlite3.connect(root / "inputs.db")
    try:
        return db.execute("SELECT count(*) FROM inputs").fetchone()[0]
    finally:
        db.close()


@pytest.mark.parametrize("name", ["inputs.db", "config.db", "graph.db"])
async def test_a_database_truncated_to_nothing_is_refused_never_recreated(
    tmp_path: Path, name: str
) -> None:
    root = shipped.build(tmp_path / "data")
    prepare(root)
    (root / name).write_bytes(b"")
    before = hashes(root)

    with pytest.raises(BootError, match=rf"{name}: the database is empty.*data restore"):
        await Kernel(root, environ={}).start()

    assert hashes(root) == before and (root / name).stat().st_size == 0


def test_the_turn_store_emptied_or_missing_moves_is_refused(tmp_path: Path) -> None:
    root = shipped.build(tmp_path / "data")
    prepare(root)  # the shipped window and cold documents move into memory/turns.db
    turns = root / "memory" / "turns.db"
    sides = [turns.with_name(turns.name + side) for side in ("", "-wal", "-shm")]
    kept = {path: path.read_bytes() for path in sides if path.exists()}
    with sqlite3.connect(turns) as db:
        db.execute("DELETE FROM moves WHERE seq > 3")
    with pytest.raises(DataDirDamaged, match=r"turns\.db: table moves holds 3 rows.*lost"):
        prepare(root)
    turns.write_bytes(b"")
    with pytest.raises(DataDirDamaged, match=r"turns\.db: the database is empty"):
        prepare(root)
    for path in sides:  # as it was: it opens again
        path.unlink(missing_ok=True)
        if path in kept:
            path.write_bytes(kept[path])
    prepare(root)


def test_inputs_acknowledged_before_a_kill_survive_in_the_log(tmp_path: Path) -> None:
    root = _killed_with_wal(tmp_path)
    prepare(root)
    assert _journal_count(root) == 5 + 40


def test_a_garbled_log_header_after_a_kill_is_refused_naming_the_log(tmp_path: Path) -> None:
    root = _killed_with_wal(tmp_path)
    wal = root / "inputs.db-wal"
    data = bytearray(wal.read_bytes())
    data[8:16] = b"\xff" * 8
    wal.write_bytes(bytes(data))
    before = hashes(root)

    with pytest.raises(DataDirDamaged, match=r"inputs\.db: the header of its write-ahead log"):
        prepare(root)

    assert hashes(root) == before


def test_a_damaged_frame_with_commits_after_it_is_refused(tmp_path: Path) -> None:
    root = _killed_with_wal(tmp_path)
    wal = root / "inputs.db-wal"
    data = bytearray(wal.read_bytes())
    page_size = int.from_bytes(data[8:12], "big")
    data[32 + 24 + 100] ^= 0xFF  # a byte of the first frame's page
    wal.write_bytes(bytes(data))
    with pytest.raises(DataDirDamaged, match=r"frame 1 of its write-ahead log .* would be lost"):
        prepare(root)
    assert page_size >= 512


def test_a_garbled_middle_page_is_refused_naming_the_file(tmp_path: Path) -> None:
    root = shipped.build(tmp_path / "data", turns=3000)
    prepare(root)
    path = root / "inputs.db"
    data = bytearray(path.read_bytes())
    middle = (len(data) // 4096 // 2) * 4096
    data[middle : middle + 4096] = os.urandom(4096)
    path.write_bytes(bytes(data))

    with pytest.raises(DataDirDamaged, match=r"inputs\.db: the database (is damaged|cannot be)"):
        prepare(root)


def test_a_journal_that_lost_acknowledged_rows_is_refused(tmp_path: Path) -> None:
    older = shipped.build(tmp_path / "older", turns=10)
    root = shipped.build(tmp_path / "data", turns=30)
    prepare(older)
    prepare(root)
    # The journal replaced by an older copy of itself: 20 acknowledged inputs gone.
    (root / "inputs.db").write_bytes((older / "inputs.db").read_bytes())
    with pytest.raises(DataDirDamaged, match="holds 10 rows, but 30 were acknowledged"):
        prepare(root)


def test_a_garbled_manifest_is_refused_naming_it(tmp_path: Path) -> None:
    root = shipped.build(tmp_path / "data")
    prepare(root)
    (root / "datadir.json").write_text('{"format": 1, "writ')
    with pytest.raises(ManifestError, match=r"datadir\.json is damaged"):
        prepare(root)
