"""`python -m hologram tools list|call`, run as a user runs it: the kernel's tools checked
without a model."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_cli import hologram


def test_tools_list_shows_every_tool_with_its_owner_and_schema(data_dir: Path) -> None:
    result = hologram("tools", "list", "--json", data_dir=data_dir)
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["terminal_create"]["owner"] == "agentcli"
    assert rows["seq_run"]["owner"] == "seq"
    assert rows["memory_recall"]["parameters"]["type"] == "object"
    plain = hologram("tools", "list", data_dir=data_dir)
    line = next(row for row in plain.stdout.splitlines() if row.startswith("terminal_write "))
    assert "agentcli" in line and "(terminal, text, enter, wait_s)" in line


def test_tools_call_prints_the_result_and_a_failure_exits_1(data_dir: Path) -> None:
    done = hologram(
        "tools",
        "call",
        "cmd_run",
        "--enable",
        "cmd",
        "--args",
        '{"command": "echo from-cli"}',
        data_dir=data_dir,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "from-cli\n[exit status 0]\n"
    refused = hologram(
        "tools",
        "call",
        "cmd_run",
        "--enable",
        "cmd",
        "--args",
        '{"comand": "ls"}',
        data_dir=data_dir,
    )
    assert refused.returncode == 1 and "needs 'command'" in refused.stderr


def test_tools_call_refuses_arguments_that_are_not_a_json_object(data_dir: Path) -> None:
    for text, message in [("{nope", "--args is not JSON"), ("[1]", "must be a JSON object")]:
        result = hologram("tools", "call", "terminal_list", "--args", text, data_dir=data_dir)
        assert result.returncode == 2 and message in result.stderr
    unknown = hologram("tools", "list", "--enable", "nonesuch", data_dir=data_dir)
    assert unknown.returncode == 1 and "plugin 'nonesuch' did not start" in unknown.stderr
