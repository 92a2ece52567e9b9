"""The views of agentcli's terminals, built from its events alone: the notebook's widget and
`%hologram terminals`."""

from __future__ import annotations

from pathlib import Path

from IPython.core.interactiveshell import InteractiveShell

from hologram import Kernel
from hologram.notebook.terminal_widget import TerminalWidget
from hologram.sdk import ToolCall

from .conftest import wait_for


async def test_the_terminal_widget_shows_output_and_state_from_the_events(kernel: Kernel) -> None:
    widget = TerminalWidget(kernel.events.subscribe)
    assert "no terminals yet" in widget.html
    run = kernel.state.stagehost.execute
    await run(ToolCall("1", "terminal_create", {"name": "build"}))
    await run(ToolCall("2", "terminal_write", {"terminal": "t1", "text": "echo widget-<hi>"}))
    await wait_for(lambda: "widget-&lt;hi&gt;\n" in widget.html, "the output, escaped")
    assert 'data-terminal="t1" data-running="true"' in widget.html and "build" in widget.html
    await run(ToolCall("3", "terminal_close", {"terminal": "t1"}))
    await wait_for(lambda: 'data-running="false"' in widget.html, "closed")
    assert "· closed" in widget.html
    widget.close()
    await run(ToolCall("4", "terminal_create", {"name": "unseen"}))
    assert "unseen" not in widget.html, "a closed widget follows nothing"


async def test_hologram_terminals_magic_gives_a_live_widget(data_dir: Path) -> None:
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "hologram")
    try:
        kernel = await shell.run_line_magic("hologram", f"start --data {data_dir}")
        widget = shell.run_line_magic("hologram", "terminals").widget
        assert isinstance(widget, TerminalWidget)
        await kernel.state.stagehost.execute(
            ToolCall("1", "terminal_create", {"command": "echo from-magic"})
        )
        await wait_for(lambda: "from-magic" in widget.html, "the widget follows the kernel")
        await shell.run_line_magic("hologram", "shutdown")
    finally:
        shell.run_line_magic("unload_ext", "hologram")
        InteractiveShell.clear_instance()
