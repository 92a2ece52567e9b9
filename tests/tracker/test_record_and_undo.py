"""A tool that declares `touches_files`: each write, rename, delete and chmod it makes in the
sandbox is recorded (digests, modes, a diff for text), and undone from the record."""

from __future__ import annotations

from pathlib import Path

import pytest

from hologram import Kernel
from hologram.media import digest_of
from hologram.sdk import ToolCall, ToolDef
from hologram.tracker import Kind, UndoError
from tests.tracker.conftest import call


def changes_of(kernel: Kernel, call_id: str) -> list[tuple[str, str, str | None]]:
    record = kernel.state.tracker.log.call(call_id)
    assert record is not None, f"no record of {call_id}"
    return [
        (c.kind, Path(c.path).name, c.old_path and Path(c.old_path).name) for c in record.changes
    ]


async def test_writes_renames_and_deletes_are_each_recorded(
    kernel: Kernel, edit: ToolDef, workspace: Path
) -> None:
    await call(kernel, "c1", op="write", path="a.txt", content="one\ntwo\n")
    assert changes_of(kernel, "c1") == [(Kind.CREATE, "a.txt", None)]
    await call(kernel, "c2", op="write", path="a.txt", content="one\nTWO\n")
    record = kernel.state.tracker.log.call("c2")
    [change] = record.changes
    assert change.kind is Kind.MODIFY
    assert change.before_digest == digest_of(b"one\ntwo\n")
    assert change.after_digest == digest_of(b"one\nTWO\n")
    assert "-two\n+TWO\n" in change.diff and record.mechanism == "watcher"
    await call(kernel, "c3", op="rename", path="a.txt", to="b.txt")
    assert changes_of(kernel, "c3") == [(Kind.RENAME, "b.txt", "a.txt")]
    await call(kernel, "c4", op="chmod", path="b.txt", mode=0o600)
    [chmod] = kernel.state.tracker.log.call("c4").changes
    assert (chmod.kind, chmod.before_mode, chmod.after_mode) == (Kind.MODIFY, 0o644, 0o600)
    await call(kernel, "c5", op="delete", path="b.txt")
    assert changes_of(kernel, "c5") == [(Kind.DELETE, "b.txt", None)]
    # The bytes are in the kernel's content-addressed store.
    assert kernel.state.media.blobs.get(change.before_digest) == b"one\ntwo\n"


async def test_undo_restores_bytes_mode_deleted_files_and_renames(
    kernel: Kernel, edit: ToolDef, workspace: Path
) -> None:
    await call(kernel, "c1", op="write", path="a.txt", content="first\n")
    await call(kernel, "c1b", op="chmod", path="a.txt", mode=0o640)
    await call(kernel, "c2", op="write", path="a.txt", content="second\n")
    await call(kernel, "c3", op="chmod", path="a.txt", mode=0o600)
    await call(kernel, "c4", op="rename", path="a.txt", to="moved.txt")
    await call(kernel, "c5", op="delete", path="moved.txt")
    tracker = kernel.state.tracker
    await tracker.undo("c5")
    assert (workspace / "moved.txt").read_text() == "second\n"
    await tracker.undo("c4")
    assert not (workspace / "moved.txt").exists()
    await tracker.undo("c3")
    assert (workspace / "a.txt").stat().st_mode & 0o777 == 0o640
    await tracker.undo("c2")
    assert (workspace / "a.txt").read_bytes() == b"first\n"
    assert (workspace / "a.txt").stat().st_mode & 0o777 == 0o640
    await tracker.undo("c1b")
    assert (workspace / "a.txt").stat().st_mode & 0o777 == 0o644
    await tracker.undo("c1")
    assert not (workspace / "a.txt").exists()
    with pytest.raises(UndoError, match="undone already"):
        await tracker.undo("c1")


async def test_an_undo_over_a_later_change_is_refused_naming_it(
    kernel: Kernel, edit: ToolDef, workspace: Path
) -> None:
    await call(kernel, "early", op="write", path="n.txt", content="v1\n")
    await call(kernel, "late", op="write", path="n.txt", content="v2\n")
    with pytest.raises(UndoError, match="changed again by call late"):
        await kernel.state.tracker.undo("early")
    assert (workspace / "n.txt").read_text() == "v2\n"
    # A change no tool made (the owner's editor) is refused too, and named as such.
    (workspace / "n.txt").write_text("by hand\n")
    with pytest.raises(UndoError, match="outside any tracked tool call"):
        await kernel.state.tracker.undo("late")
    assert (workspace / "n.txt").read_text() == "by hand\n"


async def test_files_outside_the_sandbox_roots_are_never_recorded_nor_touched(
    kernel: Kernel, edit: ToolDef, workspace: Path, outside: Path
) -> None:
    await call(kernel, "in", op="write", path="in.txt", content="x")
    await call(kernel, "out", op="outside", path="o.txt", content="y")
    assert kernel.state.tracker.log.call("out") is None
    assert all(
        str(outside) not in c.path for r in kernel.state.tracker.log.calls() for c in r.changes
    )
    assert kernel.state.tracker.declared_paths({"path": str(outside / "o.txt")}) == []
    await kernel.state.tracker.undo("in")
    assert (outside / "o.txt").read_text() == "y"


async def test_a_tool_that_does_not_declare_it_is_not_tracked(
    kernel: Kernel, workspace: Path
) -> None:
    def quiet(path: str) -> str:
        """Write without declaring it."""
        (workspace / path).write_text("q")
        return "ok"

    kernel.state.stagehost.register_tool(ToolDef.from_function(quiet))
    result = await kernel.state.stagehost.execute(ToolCall("q1", "quiet", {"path": "q.txt"}))
    assert not result.is_error
    assert kernel.state.tracker.log.call("q1") is None


async def test_a_tracker_failure_is_announced_and_the_call_still_answers(
    kernel: Kernel, edit: ToolDef, workspace: Path, events
) -> None:
    tracker = kernel.state.tracker

    def broken(*_: object) -> None:
        raise OSError("disk full")

    tracker.log.record = broken  # type: ignore[method-assign]
    result = await call(kernel, "f1", op="write", path="f.txt", content="z")
    assert result.content == "done"
    failures = events.of("tracker_failed")
    assert failures and "could not record" in failures[-1].payload.message
