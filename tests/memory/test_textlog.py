"""The text log: raw conversation as JSON lines, rotated by size and by day, expired."""

from __future__ import annotations

from pathlib import Path

import pytest

from hologram.kernel import ManualClock
from hologram.memory import TextLog

DAY = 86_400.0


async def test_entries_are_read_back_in_order(tmp_path: Path, clock: ManualClock) -> None:
    log = TextLog(tmp_path, clock)
    await log.write("user", "你好", channel="qq")
    await log.write("agent", "hello")
    assert [(r["role"], r["text"]) for r in log.read()] == [("user", "你好"), ("agent", "hello")]
    assert log.read()[0]["channel"] == "qq"


async def test_a_file_that_reaches_max_bytes_continues_in_a_new_part(
    tmp_path: Path, clock: ManualClock
) -> None:
    log = TextLog(tmp_path, clock, max_bytes=200)
    for i in range(6):
        await log.write("user", f"message number {i} " + "x" * 40)
    files = log.files()
    assert len(files) >= 3 and all(f.stat().st_size <= 200 for f in files)
    assert [r["text"][:16] for r in log.read()] == [f"message number {i}" for i in range(6)]


async def test_each_day_gets_its_own_file(tmp_path: Path, clock: ManualClock) -> None:
    log = TextLog(tmp_path, clock)
    await log.write("user", "monday")
    await clock.advance(DAY)
    await log.write("user", "tuesday")
    assert len(log.files()) == 2
    assert [r["text"] for r in log.read()] == ["tuesday"]


async def test_files_older_than_the_retention_are_deleted(
    tmp_path: Path, clock: ManualClock
) -> None:
    log = TextLog(tmp_path, clock, retention_days=2)
    await log.write("user", "day 0")
    await clock.advance(DAY)
    await log.write("user", "day 1")
    await clock.advance(2 * DAY)
    await log.write("user", "day 3")
    days = [p.name.split(".")[0] for p in log.files()]
    assert len(days) == 2 and "day 0" not in str([r["text"] for r in log.read()])


def test_bad_settings_are_refused(tmp_path: Path, clock: ManualClock) -> None:
    with pytest.raises(ValueError, match="positive"):
        TextLog(tmp_path, clock, max_bytes=0)
