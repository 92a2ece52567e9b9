"""`%hologram plugins`: every plugin with its health, and enable / disable / reload one, through
a real IPython shell and a real kernel."""

from __future__ import annotations

from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from hologram.llm import ScriptedModelServer
from hologram.notebook import Pending


@pytest.fixture
def shell(
    shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch, model: ScriptedModelServer
) -> InteractiveShell:
    # `%hologram start` reads the model source from the environment, as a user's would.
    monkeypatch.setenv("HOLOGRAM_LLM_BASE_URL", model.base_url)
    monkeypatch.setenv("HOLOGRAM_LLM_MODEL", "scripted-model")
    monkeypatch.setenv("HOLOGRAM_LLM_API_KEY", "sk-test")
    return shell


async def test_plugins_lists_each_plugin_with_its_health(
    shell: InteractiveShell, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    await shell.run_line_magic("hologram", f"start --data {data_dir}")
    capsys.readouterr()

    rows = shell.run_line_magic("hologram", "plugins")

    by_name = {row["name"]: row for row in rows}
    assert by_name["pluginmgr"]["state"] == "running"
    assert "pluginmgr_list" in by_name["pluginmgr"]["tools"]
    assert by_name["luademo"]["state"] == "available"  # shipped, not started
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].split() == ["plugin", "kind", "state", "restarts", "tools"]
    assert any(line.split()[:4] == ["pluginmgr", "builtin", "running", "0"] for line in printed)
    await shell.run_line_magic("hologram", "shutdown")


async def test_plugins_enable_disable_and_reload_change_one_plugin(
    shell: InteractiveShell, data_dir: Path
) -> None:
    kernel = await shell.run_line_magic("hologram", f"start --data {data_dir}")
    tools = kernel.state.stagehost.tools

    handle = shell.run_line_magic("hologram", "plugins enable luademo")
    assert isinstance(handle, Pending)
    row = await handle
    assert row["state"] == "running" and "luademo_wordcount" in tools

    row = await shell.run_line_magic("hologram", "plugins reload luademo")
    assert row["state"] == "running" and "luademo_wordcount" in tools

    row = await shell.run_line_magic("hologram", "plugins disable luademo")
    assert row["state"] == "stopped" and "luademo_wordcount" not in tools
    await shell.run_line_magic("hologram", "shutdown")


async def test_plugins_refuses_an_unknown_plugin_or_action_saying_what_exists(
    shell: InteractiveShell, data_dir: Path
) -> None:
    await shell.run_line_magic("hologram", f"start --data {data_dir}")

    with pytest.raises(UsageError, match=r"no plugin 'nosuch'; plugins: .*luademo"):
        shell.run_line_magic("hologram", "plugins enable nosuch")
    with pytest.raises(UsageError, match=r"enable\|disable\|reload NAME"):
        shell.run_line_magic("hologram", "plugins restart luademo")
    await shell.run_line_magic("hologram", "shutdown")


async def test_llm_lists_the_sources_shows_the_current_one_and_switches(
    shell: InteractiveShell, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kernel = await shell.run_line_magic("hologram", f"start --data {data_dir}")
    await kernel.config.set("core.llm.sources.backup.base_url", "http://127.0.0.1:9/v1")
    await kernel.config.set("core.llm.sources.backup.model", "backup-model")
    await kernel.state.llm.refresh()
    capsys.readouterr()

    rows = shell.run_line_magic("hologram", "llm")
    assert [r["source"] for r in rows] == ["default", "backup"]
    assert capsys.readouterr().out.split()[0] == "default"
    assert shell.run_line_magic("hologram", "llm current") == "default"

    switching = shell.run_line_magic("hologram", "llm switch backup")
    assert isinstance(switching, Pending)
    assert await switching == "backup"
    assert shell.run_line_magic("hologram", "llm current") == "backup"
    with pytest.raises(UsageError, match="llm switch NAME"):
        shell.run_line_magic("hologram", "llm switch")
    await shell.run_line_magic("hologram", "shutdown")
