"""The service page's terminal and MCP panels in real headless Chromium: a terminal the
agent opens shows up with its output (built from terminal_output events), and the MCP
servers table shows a real server's state and tools."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from tests.chromium import artifacts, chromium_page, needs_chromium
from tests.plugins.mcp.conftest import SERVER
from tests.serve.harness import ScriptedModel, Service
from tests.test_cli import hologram

pytestmark = needs_chromium()


def test_the_page_shows_the_agents_terminal_and_the_mcp_servers(
    make_service: Callable[..., Service], model: ScriptedModel, data_dir: Path, tmp_path: Path
) -> None:
    servers = {"lab": {"command": sys.executable, "args": [SERVER]}}
    for key, value in [("core.plugins.autostart", ["mcp"]), ("plugin.mcp.servers", servers)]:
        done = hologram("config", "set", key, json.dumps(value), data_dir=data_dir)
        assert done.returncode == 0, done.stderr
    service = make_service(env=model.env)
    opened = {"name": "terminal_create", "arguments": {"command": "echo page-hi", "name": "panel"}}
    model.queue({"tool_calls": [opened]}, {"text": "opened a terminal"})
    with chromium_page(1280, 1100, 30_000) as (page, problems):
        page.goto(service.url + "/")
        page.wait_for_selector("#link.up")
        row = page.wait_for_selector("#mcp tr[data-server=lab]")
        assert row.query_selector_all("td")[2].text_content() == "ready"
        assert "mcp__lab__add" in row.query_selector("td.tools").text_content()
        page.fill("[data-testid=chat-input]", "open a terminal")
        page.press("[data-testid=chat-input]", "Enter")
        page.wait_for_selector("[data-testid=reply]")
        box = page.wait_for_selector("#terminals .terminal[data-terminal=t1]")
        page.wait_for_function(
            "document.querySelector('#terminals .terminal pre').textContent.includes('page-hi')"
        )
        page.wait_for_selector("#terminals .terminal[data-running=false]")
        assert "panel" in box.text_content() and "status 0" in box.text_content()
        page.screenshot(path=str(artifacts(tmp_path, "serve_page") / "hands.png"), full_page=True)
        assert problems == []
