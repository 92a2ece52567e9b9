"""The other doors of undo: the hard-private `changes_undo` tool, the `changes` command on a
data dir no kernel holds, and the `%hologram changes` widget with its undo button."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from IPython.core.interactiveshell import InteractiveShell

from hologram import Kernel
from hologram.sdk import ToolCall, ToolDef
from hologram.security.policy import Principal
from tests.tracker.conftest import call, edit_tool


async def test_changes_undo_is_a_hard_private_tool_that_undoes_a_call(
    kernel: Kernel, edit: ToolDef, workspace: Path
) -> None:
    await call(kernel, "w1", op="write", path="t.txt", content="tool\n")
    stranger = Principal("telegram:someone", False)
    refusal = kernel.state.security.policy().decide("changes_undo", {"call_id": "w1"}, stranger)
    assert refusal is not None and "private to the owner" in refusal
    result = await call(kernel, "u1", name="changes_undo", call_id="w1")
    assert json.loads(result.content) == {
        "undone": "w1",
        "changes": [{"path": str(workspace / "t.txt"), "kind": "create"}],
    }
    assert not (workspace / "t.txt").exists()
    again = await kernel.state.stagehost.execute(ToolCall("u2", "changes_undo", {"call_id": "w1"}))
    assert again.is_error and "undone already" in again.content


def hologram(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hologram", "changes", *args, "--data", str(data_dir)],
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_the_changes_command_lists_shows_and_undoes_on_a_resting_data_dir(
    kernel: Kernel, edit: ToolDef, workspace: Path
) -> None:
    await call(kernel, "w1", op="write", path="c.txt", content="one\n")
    await call(kernel, "w2", op="write", path="c.txt", content="two\n")
    running = hologram(kernel.data_dir, "undo", "w2")
    assert running.returncode == 2 and "a kernel is running" in running.stderr
    await kernel.shutdown()
    listed = hologram(kernel.data_dir, "list", "--json")
    assert [c["call_id"] for c in json.loads(listed.stdout)] == ["w2", "w1"]
    shown = hologram(kernel.data_dir, "show", "w2")
    assert "modify" in shown.stdout and "-one\n+two" in shown.stdout
    refused = hologram(kernel.data_dir, "undo", "w1")
    assert refused.returncode == 2 and "changed again by call w2" in refused.stderr
    assert (workspace / "c.txt").read_text() == "two\n"
    done = hologram(kernel.data_dir, "undo", "w2")
    assert done.returncode == 0, done.stderr
    assert (workspace / "c.txt").read_text() == "one\n"
    unknown = hologram(kernel.data_dir, "show", "nope")
    assert unknown.returncode == 2 and "no recorded tool call" in unknown.stderr


async def test_the_changes_widget_lists_diffs_and_its_button_undoes(
    shell: InteractiveShell, data_dir: Path
) -> None:
    kernel: Kernel = await shell.run_line_magic("hologram", f"start --data {data_dir}")
    workspace = (data_dir / "workspace").resolve()
    kernel.state.stagehost.register_tool(edit_tool(workspace))
    await call(kernel, "w1", op="write", path="x.txt", content="old\n")
    await call(kernel, "w2", op="write", path="x.txt", content="new\n")
    shown = shell.run_line_magic("hologram", "changes")
    widget = shown.widget
    assert list(widget.rows) == ["w2", "w1"]
    assert (
        "-old\n+new" in widget.rows["w2"].value and "data-kind='modify'" in widget.rows["w2"].value
    )
    widget.buttons["w1"].click()
    await widget.pending
    assert "changed again by call w2" in widget.status.value
    assert (workspace / "x.txt").read_text() == "new\n"
    widget.buttons["w2"].click()
    await widget.pending
    assert (workspace / "x.txt").read_text() == "old\n"
    assert widget.buttons["w2"].disabled and "data-state='undone'" in widget.rows["w2"].value
    await shell.run_line_magic("hologram", "shutdown")
