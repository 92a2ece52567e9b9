"""The command line, run as a user runs it: `python -m hologram …` in a subprocess."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from hologram.cli import COMMANDS, Command, parser


def hologram(*args: str, data_dir: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOLOGRAM_DATA": str(data_dir)} if data_dir else None
    return subprocess.run(
        [sys.executable, "-m", "hologram", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_graph_prints_group_0_and_the_layers() -> None:
    result = hologram("graph")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert (
        lines[0]
        == "group 0  data-dir lock, logging, data-dir check, config db, backup pruning, config snapshot"
    )
    assert lines[1].startswith("layer 0  ") and "events" in lines[1]


def test_graph_json_is_machine_readable() -> None:
    result = hologram("graph", "--json")
    document = json.loads(result.stdout)
    assert document["group0"]["provides"] == ["config"]
    assert document["modules"]["events"] == {
        "layer": 0,
        "requires": ["config"],
        "provides": ["events"],
    }


def test_depgraph_check_passes_on_the_shipped_plan_and_fails_on_a_stale_one(tmp_path: Path) -> None:
    assert hologram("depgraph", "--check").returncode == 0
    stale = tmp_path / "depgraph.json"
    stale.write_text("{}")
    result = hologram("depgraph", "--check", "--path", str(stale))
    assert result.returncode == 1
    assert "python -m hologram depgraph --write" in result.stderr


def test_serve_boots_prints_the_layers_and_exits_0_on_sigterm(data_dir: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "hologram", "serve", "--port", "0", "--data", str(data_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        lines.append(line.rstrip("\n"))
        if line.startswith("hologram ready"):
            break
    assert lines[0].startswith("group 0  ")
    assert any(line.startswith("layer 0  ") for line in lines)
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert "hologram stopped" in out
    assert (
        not (data_dir / "config.db-wal").exists()
        or (data_dir / "config.db-wal").stat().st_size == 0
    )


def test_serve_on_a_data_dir_in_use_fails_with_the_holders_pid(data_dir: Path) -> None:
    first = subprocess.Popen(
        [sys.executable, "-m", "hologram", "serve", "--port", "0", "--data", str(data_dir)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert first.stdout is not None
        for line in first.stdout:
            if line.startswith("hologram ready"):
                break
        second = hologram("serve", "--port", "0", "--data", str(data_dir))
        assert second.returncode == 1
        assert f"PID {first.pid}" in second.stderr
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=60)
    assert first.returncode == 0


def test_config_set_get_list_and_delete(data_dir: Path) -> None:
    assert (
        hologram("config", "set", "core.agent.max_tool_rounds", "12", data_dir=data_dir).returncode
        == 0
    )
    assert (
        hologram("config", "get", "core.agent.max_tool_rounds", data_dir=data_dir).stdout == "12\n"
    )
    listing = hologram("config", "list", "core.agent.", data_dir=data_dir).stdout
    assert "core.agent.max_tool_rounds = 12  [stored]" in listing
    assert "core.agent.child_max_tool_rounds = 5  [default]" in listing
    assert (
        hologram("config", "delete", "core.agent.max_tool_rounds", data_dir=data_dir).returncode
        == 0
    )
    assert (
        hologram("config", "get", "core.agent.max_tool_rounds", data_dir=data_dir).stdout == "10\n"
    )


def test_config_list_masks_secrets_unless_asked(data_dir: Path) -> None:
    hologram("config", "set", "core.llm.sources.default.api_key", "sk-secret", data_dir=data_dir)
    assert "sk-secret" not in hologram("config", "list", "core.llm", data_dir=data_dir).stdout
    shown = hologram("config", "list", "core.llm", "--show-secrets", data_dir=data_dir).stdout
    assert '"sk-secret"' in shown


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("config", "set", "llm.model", "x"), "invalid configuration key 'llm.model'"),
        (("config", "set", "core.agent.max_tool_rounds", "ten"), "expects int"),
        (
            ("config", "set", "core.llm.bakoff_s", "1"),
            "unknown setting 'core.llm.bakoff_s': no such setting; did you mean core.llm.backoff_s",
        ),
        (
            ("config", "set", "plugin.files.rot", "/tmp"),
            "plugin files declares no such setting; did you mean plugin.files.root?",
        ),
        (("config", "set", "plugin.nobody.key", "1"), "no plugin named 'nobody' is installed"),
    ],
)
def test_config_refuses_bad_input_with_a_clear_message(
    data_dir: Path, args: tuple[str, ...], message: str
) -> None:
    result = hologram(*args, data_dir=data_dir)
    assert result.returncode == 2 and message in result.stderr


def test_config_set_takes_a_declared_plugin_setting_and_a_named_llm_source(
    data_dir: Path,
) -> None:
    for key, value in (
        ("plugin.files.root", "notes"),
        ("core.llm.sources.work.base_url", "http://127.0.0.1:9/v1"),
    ):
        result = hologram("config", "set", key, value, data_dir=data_dir)
        assert result.returncode == 0, result.stderr
    got = hologram("config", "get", "plugin.files.root", data_dir=data_dir)
    assert got.stdout.strip() == '"notes"'


@pytest.mark.parametrize("command", [c.name for c in COMMANDS])
def test_every_command_has_help(command: str) -> None:
    result = hologram(command, "--help")
    assert result.returncode == 0 and f"usage: python -m hologram {command} " in result.stdout


@pytest.mark.parametrize("command", COMMANDS, ids=[c.name for c in COMMANDS])
def test_each_command_is_declared_by_the_module_the_table_names(command: Command) -> None:
    top = parser(command.name)
    (subparsers,) = (a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    declared = subparsers.choices[command.name]
    assert callable(declared.get_default("run")), f"{command.owner} declares no run"
    assert declared.description, f"{command.owner} gives {command.name} no description"


def imported_modules(*args: str) -> set[str]:
    """Every module `python ARGS` imports, as `-X importtime` reports them."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", *args], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return {
        line.rpartition("|")[2].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


#: What any start of the command line may import of hologram: its face, the command line, the
#: helper each command module declares itself with and the one lazy package faces are made
#: with (both beside the kernel's lazy face).
START = {"hologram", "hologram._version", "hologram.cli", "hologram.kernel"}
START |= {"hologram.kernel.commands", "hologram.kernel.faces"}


def foreign(modules: set[str]) -> set[str]:
    """The modules beyond the standard library, hologram, and what the interpreter itself
    imports at start (site's path hooks)."""
    at_start = imported_modules("-c", "pass")
    kept = sys.stdlib_module_names | {"hologram"}
    return {m for m in modules - at_start if m.split(".")[0] not in kept}


def test_help_lists_every_command_without_importing_any() -> None:
    modules = imported_modules("-m", "hologram", "--help")
    assert {m for m in modules if m.startswith("hologram")} <= START
    assert foreign(modules) == set()


@pytest.mark.parametrize("command", COMMANDS, ids=[c.name for c in COMMANDS])
def test_a_commands_help_imports_only_its_owner_and_no_kernel(command: Command) -> None:
    modules = imported_modules("-m", "hologram", command.name, "--help")
    owner_face = command.owner.rpartition(".")[0]
    hologram_modules = {m for m in modules if m.startswith("hologram")}
    assert hologram_modules - START - {command.owner, owner_face} == set()
    assert foreign(modules) == set()
