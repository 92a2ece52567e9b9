"""The real cmd plugin (a subprocess): what its shell command changes is heard by the
watcher, recorded under the call's id, and undone."""

from __future__ import annotations

from pathlib import Path

from hologram import Kernel
from hologram.plugins import PluginRegistry
from hologram.tracker import Kind
from tests.plugins.conftest import wait_for
from tests.tracker.conftest import call


async def test_a_cmd_call_that_edits_a_file_is_recorded_by_the_watcher_and_undone(
    registry: PluginRegistry, kernel: Kernel, workspace: Path
) -> None:
    await registry.enable("cmd")
    assert kernel.state.stagehost.tools.get("cmd_run").touches_files
    workspace.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    (workspace / "old.txt").write_text("keep me\n")
    # The watcher hears the owner's writes (the shadow keeps their bytes) before the call.
    shadow = kernel.state.tracker.shadow
    await wait_for(lambda: shadow.get(str(workspace / "old.txt")), "old.txt shadowed")
    script = "sed -i s/beta/gamma/ notes.txt && mv old.txt new.txt && echo made > made.txt"
    result = await call(kernel, "sh1", name="cmd_run", command=script)
    assert "[exit status 0]" in result.content
    record = kernel.state.tracker.log.call("sh1")
    assert record is not None and record.mechanism == "watcher"
    kinds = sorted((c.kind, Path(c.path).name) for c in record.changes)
    assert kinds == [
        (Kind.CREATE, "made.txt"),
        (Kind.MODIFY, "notes.txt"),
        (Kind.RENAME, "new.txt"),
    ]
    [edit] = [c for c in record.changes if c.kind is Kind.MODIFY]
    assert "-beta\n+gamma\n" in edit.diff
    await kernel.state.tracker.undo("sh1")
    assert (workspace / "notes.txt").read_text() == "alpha\nbeta\n"
    assert (workspace / "old.txt").read_text() == "keep me\n"
    assert not (workspace / "new.txt").exists() and not (workspace / "made.txt").exists()
