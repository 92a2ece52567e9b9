"""The configuration registry (spec: ConfigRegistry)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from hologram.config import (
    CORE_DEFAULTS,
    CORE_SECTIONS,
    AgentSettings,
    ConfigError,
    ConfigRegistry,
    SecuritySettings,
    Setting,
    declared,
    is_secret,
)
from hologram.config.sections import DEFAULT_SINGLE_VALUED
from hologram.memory.graph.store import SINGLE_VALUED


async def open_registry(data_dir: Path, **environ: str) -> ConfigRegistry:
    registry = await ConfigRegistry.open(data_dir / "config.db", environ)
    registry.register(CORE_DEFAULTS)
    return registry


async def test_values_survive_a_restart(data_dir: Path) -> None:
    registry = await open_registry(data_dir)
    await registry.set("core.agent.max_tool_rounds", 7)
    await registry.set("plugin.qq.token", "abc")
    await registry.close()

    reopened = await open_registry(data_dir)
    assert reopened.get("core.agent.max_tool_rounds") == 7
    assert reopened.get("plugin.qq.token") == "abc"
    assert reopened.source("core.agent.max_tool_rounds") == "stored"
    await reopened.close()


async def test_a_set_is_durable_before_it_returns(data_dir: Path) -> None:
    registry = await open_registry(data_dir)
    await registry.set("core.agent.personal_prompt", "你好")
    # A second connection, as a crashed-and-restarted process would have, sees it already.
    with sqlite3.connect(data_dir / "config.db") as other:
        rows = other.execute("SELECT value FROM config WHERE key = 'core.agent.personal_prompt'")
        assert rows.fetchall() == [('"你好"',)]
    await registry.close()


async def test_defaults_are_not_written_to_disk(data_dir: Path) -> None:
    registry = await open_registry(data_dir)
    assert registry.get("core.agent.max_tool_rounds") == 10
    await registry.close()
    with sqlite3.connect(data_dir / "config.db") as other:
        assert other.execute("SELECT count(*) FROM config").fetchone() == (0,)


@pytest.mark.parametrize(
    "key",
    [
        "llm.model",
        "core",
        "core.",
        "plugin.qq",
        "plugin.QQ.token",
        "plugin..x",
        "core.a b",
        "x.core.y",
    ],
)
async def test_keys_outside_the_two_namespaces_are_refused(data_dir: Path, key: str) -> None:
    registry = await open_registry(data_dir)
    with pytest.raises(ConfigError, match=r"invalid configuration key"):
        await registry.set(key, 1)
    await registry.close()


async def test_plugin_keys_live_in_the_plugins_own_table(data_dir: Path) -> None:
    registry = await open_registry(data_dir)
    await registry.set("plugin.timer.max_timers", 5)
    await registry.close()
    with sqlite3.connect(data_dir / "config.db") as other:
        assert other.execute("SELECT key FROM config_timer").fetchall() == [
            ("plugin.timer.max_timers",)
        ]
        assert other.execute("SELECT count(*) FROM config").fetchone() == (0,)


async def test_values_must_match_the_type_of_their_default(data_dir: Path) -> None:
    registry = await open_registry(data_dir)
    with pytest.raises(ConfigError, match=r"core\.agent\.max_tool_rounds expects int, got str"):
        await registry.set("core.agent.max_tool_rounds", "ten")
    with pytest.raises(ConfigError, match="expects int, got bool"):
        await registry.set("core.agent.max_tool_rounds", True)
    await registry.set("core.scheduler.preempt_cooldown_s", 3)  # an int is a fine float
    assert registry.get_float("core.scheduler.preempt_cooldown_s") == 3.0
    assert registry.get("core.agent.max_tool_rounds") == 10
    await registry.close()


async def test_text_from_a_command_line_is_read_as_the_keys_type(data_dir: Path) -> None:
    registry = await open_registry(data_dir)
    assert registry.set_text("core.agent.max_tool_rounds", "12") == 12
    assert registry.set_text("core.scheduler.offload_enabled", "off") is False
    assert registry.set_text("core.agent.personal_prompt", "12") == "12"
    with pytest.raises(ConfigError, match="expects bool"):
        registry.set_text("core.scheduler.offload_enabled", "maybe")
    await registry.close()


async def test_environment_overrides_a_secret_without_writing_it(data_dir: Path) -> None:
    registry = await open_registry(data_dir, HOLOGRAM_LLM_API_KEY="sk-from-env")
    assert registry.get("core.llm.sources.default.api_key") == "sk-from-env"
    assert registry.source("core.llm.sources.default.api_key") == "env"
    assert is_secret("core.llm.sources.default.api_key")
    await registry.close()
    assert b"sk-from-env" not in (data_dir / "config.db").read_bytes()


async def test_typed_reads_refuse_the_wrong_type(data_dir: Path) -> None:
    registry = await open_registry(data_dir)
    assert registry.get_int("core.agent.max_tool_rounds") == 10
    with pytest.raises(ConfigError, match="not a bool"):
        registry.get_bool("core.agent.max_tool_rounds")
    with pytest.raises(ConfigError, match="not set and has no default"):
        registry.get_str("core.nothing.here")
    await registry.close()


async def test_list_and_delete(data_dir: Path) -> None:
    registry = await open_registry(data_dir)
    await registry.set("core.memory.context.top_k", 12)
    listed = registry.list("core.memory.context.")
    # Every core key is registered at boot now, the memory module's own among them.
    assert listed == {
        "core.memory.context.protected_recent": 10,
        "core.memory.context.top_k": 12,
    }
    assert await registry.delete("core.memory.context.top_k") is True
    assert await registry.delete("core.memory.context.top_k") is False
    assert registry.get("core.memory.context.top_k") == 40
    await registry.close()


async def test_a_corrupt_database_is_refused_and_left_untouched(data_dir: Path) -> None:
    garbage = b"this is not sqlite at all" * 100
    (data_dir / "config.db").write_bytes(garbage)
    with pytest.raises(ConfigError, match=r"cannot be read .* left untouched"):
        await ConfigRegistry.open(data_dir / "config.db", {})
    assert (data_dir / "config.db").read_bytes() == garbage


async def test_a_stored_value_that_is_not_json_is_reported_and_the_rest_kept(
    data_dir: Path,
) -> None:
    registry = await open_registry(data_dir)
    await registry.set("core.agent.max_tool_rounds", 4)
    await registry.set("core.agent.personal_prompt", "kept")
    await registry.close()
    with sqlite3.connect(data_dir / "config.db") as other:
        other.execute(
            "UPDATE config SET value = '{broken' WHERE key = 'core.agent.max_tool_rounds'"
        )

    reopened = await open_registry(data_dir)
    assert reopened.get("core.agent.max_tool_rounds") == 10
    assert reopened.get("core.agent.personal_prompt") == "kept"
    assert len(reopened.problems) == 1 and "core.agent.max_tool_rounds" in reopened.problems[0]
    await reopened.close()
    with sqlite3.connect(data_dir / "config.db") as other:
        row = other.execute("SELECT value FROM config WHERE key = 'core.agent.max_tool_rounds'")
        assert row.fetchone() == ("{broken",)


async def test_values_that_are_not_json_are_refused(data_dir: Path) -> None:
    registry = await open_registry(data_dir)
    with pytest.raises(ConfigError, match="cannot be stored as JSON"):
        await registry.set("core.custom.thing", {1, 2})
    await registry.close()


# ---- typed sections ------------------------------------------------------------------------


async def test_a_section_reads_typed_values_and_follows_changes(data_dir: Path) -> None:
    registry = await open_registry(data_dir)
    agent = registry.live(AgentSettings)
    assert agent.current.max_tool_rounds == 10 and agent.current.personal_prompt == ""
    await registry.set("core.agent.max_tool_rounds", 4)
    assert agent.current.max_tool_rounds == 4, "a Live section reads again when its key changes"
    await registry.set("core.security.read_roots", ["/srv/notes"])
    security = registry.read(SecuritySettings)
    assert security.read_roots == ("/srv/notes",), "lists come back as tuples: sections are frozen"
    assert security.tools_hard_private == (
        "files_write",
        "spawn_*",
        "resident_*",
        "cmd_run",
        "terminal_*",
        "pluginmgr_*",
        "skillmgr_*",
        "cfgmgr_*",
        "llm_switch",
        "health_check",
        "changes_*",
    )
    await registry.close()


async def test_a_hand_edited_value_of_the_wrong_type_is_refused_naming_its_key(
    tmp_path: Path,
) -> None:
    path = tmp_path / "config.db"
    first = await ConfigRegistry.open(path, environ={})
    await first.close()
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO config(key, value, updated_at) VALUES (?, ?, 0)",
            ("core.agent.max_tool_rounds", '"ten"'),
        )
    registry = await ConfigRegistry.open(path, environ={})
    registry.register(CORE_DEFAULTS)
    with pytest.raises(ConfigError, match=r"core\.agent\.max_tool_rounds is 'ten', not int"):
        registry.read(AgentSettings)
    await registry.close()


def test_every_section_key_is_registered_once_with_its_old_spelling() -> None:
    keys = [s.key for section in CORE_SECTIONS for s in declared(section)]
    assert len(keys) == len(set(keys)), "two sections declare the same key"
    assert {"core.memory.context.top_k", "core.agent.tool_timeout_s", "core.llm.backoff_s"} <= set(
        keys
    )
    assert {s.key for s in CORE_DEFAULTS} >= set(keys)
    # The setting's default is the graph's own list: one must not drift from the other.
    assert ",".join(sorted(SINGLE_VALUED)) == DEFAULT_SINGLE_VALUED


async def test_a_key_nobody_reads_is_refused_and_families_named_at_run_time_are_not(
    data_dir: Path,
) -> None:
    registry = await open_registry(data_dir)
    registry.declare_plugin("files", [Setting("plugin.files.root", "", "its folder")])
    for known in (
        "core.llm.backoff_s",
        "core.llm.sources.work.model",  # a source is named by its key
        "core.security.credential.github.secret",
        "core.memory.embedders.clip.model",  # an entry-point embedder's own option
        "plugin.files.root",
    ):
        registry.check_known(known)
    refused = {
        "core.llm.bakoff_s": "did you mean core.llm.backoff_s",
        "core.llm.sources.work.modle": "no such setting",
        "core.memory.embedders.http.dimm": "did you mean core.memory.embedders.http.dim",
        "plugin.files.rot": "plugin files declares no such setting; did you mean plugin.files.root",
        "plugin.qq.token": "no plugin named 'qq' is installed (plugins: files)",
    }
    for key, why in refused.items():
        with pytest.raises(ConfigError, match=re.escape(why)):
            registry.check_known(key)
    await registry.close()
