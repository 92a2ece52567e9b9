"""The `%hologram` magics and the layers widget, driven through a real IPython shell."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from hologram._group0 import group0
from hologram.kernel import plan
from hologram.notebook import LayersWidget, Pending
from tests.kernel.helpers import Mod


async def test_start_returns_at_once_and_the_handle_awaits_the_boot(
    shell: InteractiveShell, data_dir: Path
) -> None:
    handle = shell.run_line_magic("hologram", f"start --data {data_dir}")
    assert isinstance(handle, Pending) and not handle.done()
    assert "running" in repr(handle)
    kernel = await handle
    assert "events" in kernel.layers[0]
    assert repr(handle).endswith("done>")
    status = shell.run_line_magic("hologram", "status")
    assert status["phase"] == "ready"
    closed = await shell.run_line_magic("hologram", "shutdown")
    assert closed[0] in kernel.layers[-1] and closed[-1] == "data-dir lock"


async def test_layers_widget_follows_a_boot_in_progress(
    shell: InteractiveShell, data_dir: Path
) -> None:
    handle = shell.run_line_magic("hologram", f"start --data {data_dir}")
    widget = shell.run_line_magic("hologram", "layers")
    assert isinstance(widget.widget, LayersWidget)
    # Displayed by the magic; as a cell's last value the handle is one line of text, not
    # a second view of the widget.
    shown, _ = shell.display_formatter.format(widget)
    assert set(shown) == {"text/plain"} and "shown above" in shown["text/plain"]
    assert 'data-module="events" data-status="pending"' in widget.svg
    await handle
    assert 'data-module="events" data-status="done"' in widget.svg
    assert 'data-module="config db" data-status="done"' in widget.svg
    modules = sum(len(layer) for layer in shell.run_line_magic("hologram", "status")["layers"])
    assert f"{len(group0()) + modules} done" in widget.children[0].value
    await shell.run_line_magic("hologram", "shutdown")
    assert 'data-module="events" data-status="closed"' in widget.svg
    widget.close()


def test_commands_without_a_kernel_say_to_start_one(shell: InteractiveShell) -> None:
    with pytest.raises(UsageError, match="run `%hologram start` first"):
        shell.run_line_magic("hologram", "status")


def test_unknown_command_lists_the_commands(shell: InteractiveShell) -> None:
    with pytest.raises(UsageError, match=r"unknown command .strat.; commands: .*start"):
        shell.run_line_magic("hologram", "strat")


def test_help_is_the_magic_docstring_with_its_arguments(shell: InteractiveShell) -> None:
    doc = shell.find_line_magic("hologram").__doc__
    assert "%hologram start --data DIR" in doc and "--data DIR" in doc and "--json" in doc


def test_layers_svg_shows_every_module_and_every_tie() -> None:
    modules = [
        Mod("llm", requires=("config",), provides=("llm",)),
        Mod("memory", requires=("config",), provides=("memory",)),
        Mod("agent", requires=("llm", "memory"), provides=("agent",)),
    ]
    widget = LayersWidget.for_plan(plan(modules, given=("config",)), group0=["config db"])
    svg = widget.svg
    assert svg.count('class="module"') == 4
    assert svg.count('class="edge"') == 2
    assert 'data-facility="llm" data-from="llm" data-to="agent"' in svg
    assert "3 modules in 2 layers" in widget.children[0].value


# ---- the first hour: comments, '?', help, summaries, memory --------------------------------


def test_a_trailing_comment_is_not_an_argument_but_a_hash_word_is_text() -> None:
    from hologram.notebook.cells import without_comment

    assert (
        without_comment("start --data /tmp/holo    # returns at once") == "start --data /tmp/holo"
    )
    assert without_comment("say issue #5 is fixed") == "say issue #5 is fixed"
    assert without_comment("say I write C# daily  #") == "say I write C# daily"


async def test_the_readme_start_line_works_with_its_comment(
    shell: InteractiveShell, data_dir: Path
) -> None:
    handle = shell.run_line_magic("hologram", f"start --data {data_dir}    # returns at once")
    kernel = await handle
    assert kernel.data_dir == data_dir
    await shell.run_line_magic("hologram", "shutdown   # flush and close")


async def test_a_say_line_ending_in_a_question_mark_is_said_not_looked_up(
    shell: InteractiveShell, data_dir: Path
) -> None:
    await shell.run_line_magic("hologram", f"start --data {data_dir}")
    outcome = shell.run_cell("t = %hologram say what do you remember about Anna?")
    assert outcome.success, outcome.error_in_exec
    handle = shell.user_ns["t"]
    assert isinstance(handle, Pending)
    assert "Anna" in await handle
    assert (
        shell.transform_cell("%hologram?\n").strip()
        == "get_ipython().run_line_magic('pinfo', '%hologram')"
    )
    await shell.run_line_magic("hologram", "shutdown")


@pytest.mark.parametrize("line", ["", "--help", "help"])
def test_a_bare_hologram_prints_the_help(
    shell: InteractiveShell, line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert shell.run_line_magic("hologram", line) is None
    out = " ".join(capsys.readouterr().out.split())
    assert "positional arguments" in out and "say TEXT" in out


async def test_status_prints_its_summary_once_and_returns_the_fields_quietly(
    shell: InteractiveShell, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    await shell.run_line_magic("hologram", f"start --data {data_dir}")
    capsys.readouterr()
    outcome = shell.run_cell("%hologram status")
    out = capsys.readouterr().out
    assert outcome.result["phase"] == "ready"
    assert out.count(" ready on ") == 1 and "layer 0" in out
    assert "printed above" in out and "'layers'" not in out  # no second copy as a dict
    await shell.run_line_magic("hologram", "shutdown")


async def test_memory_finds_what_was_just_said_in_every_tier(
    shell: InteractiveShell, data_dir: Path
) -> None:
    kernel = await shell.run_line_magic("hologram", f"start --data {data_dir}")
    await kernel.say("I love climbing")
    table = await shell.run_line_magic("hologram", "memory climbing")
    assert list(table.columns) == ["score", "tier", "when", "where", "text"]
    assert (table.iloc[0]["tier"], table.iloc[0]["text"]) == ("context", "I love climbing")
    with pytest.raises(UsageError, match="memory QUERY"):
        shell.run_line_magic("hologram", "memory")
    await shell.run_line_magic("hologram", "shutdown")


DISPLAYS = ["layers", "context", "graph", "scheduler", "terminals", "changes", "upload"]


async def test_every_display_command_shows_its_widget_where_it_stands_with_a_static_picture(
    shell: InteractiveShell, data_dir: Path
) -> None:
    await shell.run_line_magic("hologram", f"start --data {data_dir}")
    for command in DISPLAYS:
        with capture_output() as captured:
            outcome = shell.run_cell(f"shown = %hologram {command}\nafter = 1\nshown")
            shown = shell.user_ns["shown"]
            if command == "graph":
                await shown.loading
                await asyncio.sleep(0)
                shell.run_cell("pass")  # an update made between cells is sent again here
        assert outcome.success, (command, outcome.error_in_exec)
        # Displayed once, mid-cell: the cell's last value, the handle, is one line of text.
        view, *updates = captured.outputs
        assert "application/vnd.jupyter.widget-view+json" in view.data, command
        # A viewer without widget support shows the static picture instead.
        assert view.data.get("text/html", "").strip().startswith("<"), command
        assert "shown above" in captured.stdout, command
        if command == "graph":
            # Displayed before it has loaded, it is sent again once it has: the picture a
            # saved notebook keeps is the drawn graph.
            assert 'class="hologram-graph"' in updates[-1].data["text/html"]
        else:
            assert updates == [], command
        shown.widget.close()
    await shell.run_line_magic("hologram", "shutdown")


@pytest.mark.parametrize("command", ["plugins", "llm"])
async def test_a_table_is_printed_once_and_its_rows_return_quietly(
    shell: InteractiveShell, data_dir: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    await shell.run_line_magic("hologram", f"start --data {data_dir}")
    capsys.readouterr()
    outcome = shell.run_cell(f"%hologram {command}")
    out = capsys.readouterr().out
    assert outcome.success and len(outcome.result) >= 1
    first = outcome.result[0]["name" if command == "plugins" else "source"]
    assert out.count(f"\n{first} ") + out.startswith(f"{first} ") == 1, out
    assert "printed above" in out and "{'" not in out  # no second copy as a list of dicts
    await shell.run_line_magic("hologram", "shutdown")


async def test_usage_prints_the_models_totals_per_source_day_and_channel(
    shell: InteractiveShell, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    await shell.run_line_magic("hologram", f"start --data {data_dir}")
    await shell.run_line_magic("hologram", "say hello there")
    capsys.readouterr()
    outcome = shell.run_cell("%hologram usage")
    out = capsys.readouterr().out
    summary = outcome.result
    assert outcome.success and summary["total"]["calls"] == 1
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.strip()}
    assert rows["total"][0] == "1" and rows["total"][1] == str(summary["total"]["prompt_tokens"])
    assert rows["default"][0] == "1" and rows["notebook"][0] == "1"
    assert rows[time.strftime("%Y-%m-%d", time.gmtime())][0] == "1"
    assert rows["total"][-1] == "-"  # the offline model has no price
    assert "printed above" in out and "'by_source'" not in out  # no second copy as a dict
    await shell.run_line_magic("hologram", "shutdown")


async def test_the_memory_table_holds_the_cold_context_beside_the_window(
    shell: InteractiveShell, data_dir: Path
) -> None:
    from hologram.memory import ContextEvent

    kernel = await shell.run_line_magic("hologram", f"start --data {data_dir}")
    await kernel.say("I love climbing")
    assert kernel.state.coldcontext is not None
    old = ContextEvent(timestamp=1_700_000_000.0, source="qq", input="Anna climbs on Sundays")
    await kernel.state.coldcontext.archive([old])
    table = await shell.run_line_magic("hologram", "memory climbing")
    tiers = dict(zip(table["text"], table["tier"], strict=True))
    assert tiers["I love climbing"] == "context"
    assert tiers["Anna climbs on Sundays"] == "cold context"
    assert str(table.loc[table["tier"] == "cold context", "when"].iloc[0]).startswith("2023-11-14")
    await shell.run_line_magic("hologram", "shutdown")
