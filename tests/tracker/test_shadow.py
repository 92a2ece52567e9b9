"""The shadow between runs: the snapshot a stop writes spares the next start from hashing
the sandbox again, is checked against the disk entry by entry, and a damaged one only costs
the full scan. And the tracker follows the firewall's write roots when they change."""

from __future__ import annotations

from pathlib import Path

import pytest

from hologram import Kernel
from hologram.media import BlobStore
from hologram.sdk import Event, EventType, ToolCall
from hologram.tracker import ChangeLog, Kind, Tracker
from hologram.tracker import shadow as shadow_module
from tests.plugins.conftest import wait_for
from tests.tracker.conftest import edit_tool


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many file contents were hashed (read in full) since the last reset."""
    count = [0]
    real = shadow_module.digest_of

    def counting(data: bytes) -> str:
        count[0] += 1
        return real(data)

    monkeypatch.setattr(shadow_module, "digest_of", counting)
    return count


def fill(root: Path, files: int) -> None:
    for n in range(files):
        (root / f"d{n % 3}").mkdir(parents=True, exist_ok=True)
        (root / f"d{n % 3}" / f"f{n}.txt").write_text(f"file {n}\n")


def make_tracker(tmp: Path, published: list[Event]) -> Tracker:
    return Tracker(
        [tmp / "workspace"],
        BlobStore(tmp / "media"),
        ChangeLog(tmp / "tracker.db"),
        tmp / "tracker",
        published.append,
    )


def run(tmp: Path, published: list[Event]) -> Tracker:
    tracker = make_tracker(tmp, published)
    tracker.start()
    tracker.stop()
    tracker.log.close()
    return tracker


def test_a_restart_reads_only_the_files_changed_since_the_last_stop(
    tmp_path: Path, hashed: list[int]
) -> None:
    workspace = tmp_path / "workspace"
    fill(workspace, 30)
    run(tmp_path, [])
    assert hashed[0] == 30
    assert (tmp_path / "tracker" / "shadow.json").exists()
    (workspace / "d0" / "f0.txt").write_text("changed while the kernel was down\n")
    (workspace / "d1" / "f1.txt").unlink()
    (workspace / "d2" / "new.txt").write_text("new\n")
    hashed[0] = 0
    tracker = make_tracker(tmp_path, [])
    tracker.start()
    try:
        assert hashed[0] == 2  # the changed file and the new one
        shadow = tracker.shadow
        assert len(shadow) == 30
        assert shadow.get(str(workspace / "d1" / "f1.txt")) is None
        changed = shadow.get(str(workspace / "d0" / "f0.txt"))
        assert changed is not None
        assert tracker.blobs.get(changed.digest) == b"changed while the kernel was down\n"
    finally:
        tracker.stop()
        tracker.log.close()


def test_without_the_snapshot_every_file_is_hashed_again(tmp_path: Path, hashed: list[int]) -> None:
    fill(tmp_path / "workspace", 12)
    run(tmp_path, [])
    (tmp_path / "tracker" / "shadow.json").unlink()
    hashed[0] = 0
    run(tmp_path, [])
    assert hashed[0] == 12


def test_an_entry_whose_bytes_the_store_lost_is_read_again(
    tmp_path: Path, hashed: list[int]
) -> None:
    fill(tmp_path / "workspace", 5)
    first = run(tmp_path, [])
    entry = first.shadow.get(str(tmp_path / "workspace" / "d0" / "f0.txt"))
    assert entry is not None
    first.blobs.path(entry.digest).unlink()
    hashed[0] = 0
    second = run(tmp_path, [])
    assert hashed[0] == 1
    assert second.blobs.get(entry.digest) == b"file 0\n"


@pytest.mark.parametrize(
    "damage",
    [b"", b"{not json", b'{"version": 99, "entries": []}', b'{"version": 1, "entries": [[1]]}'],
    ids=["empty", "garbled", "other-version", "bad-entry"],
)
def test_a_damaged_snapshot_is_announced_and_costs_only_the_full_scan(
    tmp_path: Path, hashed: list[int], damage: bytes
) -> None:
    fill(tmp_path / "workspace", 8)
    run(tmp_path, [])
    (tmp_path / "tracker" / "shadow.json").write_bytes(damage)
    hashed[0] = 0
    published: list[Event] = []
    tracker = run(tmp_path, published)
    assert hashed[0] == 8 and len(tracker.shadow) == 8
    [fallback] = [e for e in published if e.type == EventType.TRACKER_FALLBACK]
    assert "shadow snapshot" in fallback.payload.message
    [aside] = (tmp_path / "tracker").glob("shadow.json.corrupt-*")
    assert aside.read_bytes() == damage
    # The stop wrote a good snapshot again.
    hashed[0] = 0
    run(tmp_path, [])
    assert hashed[0] == 0


async def test_the_tracker_follows_a_change_of_the_write_roots(
    kernel: Kernel, tmp_path: Path
) -> None:
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    (moved / "there.txt").write_text("before\n")
    tracker = kernel.state.tracker
    kernel.state.stagehost.register_tool(edit_tool(moved))
    await kernel.config.set("core.security.write_roots", [str(moved)])
    await wait_for(lambda: tracker.roots == [moved.resolve()], "the tracker moved")
    await wait_for(lambda: tracker.watching, "the watcher restarted")
    result = await kernel.state.stagehost.execute(
        ToolCall("c1", "edit", {"op": "write", "path": "there.txt", "content": "after\n"})
    )
    assert not result.is_error, result.content
    record = tracker.log.call("c1")
    assert record is not None and record.mechanism == "watcher"
    [change] = record.changes
    assert (change.kind, Path(change.path)) == (Kind.MODIFY, (moved / "there.txt").resolve())
    assert tracker.blobs.get(change.before_digest) == b"before\n"
