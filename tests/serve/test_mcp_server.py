"""The companion as an MCP server, driven by the official `mcp` client: over stdio
(`python -m hologram mcp` as a subprocess) and over streamable HTTP (/mcp on the service)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from hologram import Kernel
from hologram.serve.mcp_server import KERNEL_TOOLS
from tests.serve.harness import Service

EXPECTED_TOOLS = {*KERNEL_TOOLS, "send_input"}


def text_of(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def remember_and_recall(client: Client) -> None:
    """List the tools; commit a fact; recall it; send an input and get the reply."""
    listed = await client.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == EXPECTED_TOOLS
    assert tools["memory_commit"].input_schema["type"] == "object"
    assert "text" in tools["send_input"].input_schema["required"]
    fact = {"source": "Anna", "relation": "climbs_at", "target": "Fontainebleau"}
    committed = await client.call_tool(
        "memory_commit",
        {"triples": [fact], "sentence_text": "Anna climbs at Fontainebleau"},
    )
    assert not committed.is_error, text_of(committed)
    recalled = await client.call_tool("memory_recall", {"query": "Where does Anna climb?"})
    assert not recalled.is_error and "Fontainebleau" in text_of(recalled)
    reply = await client.call_tool("send_input", {"text": "hello from another agent"})
    assert not reply.is_error
    assert text_of(reply).startswith("(offline scripted model)")
    assert "hello from another agent" in text_of(reply)
    refused = await client.call_tool("memory_recall", {"query": 7})
    assert refused.is_error and "invalid arguments for memory_recall" in text_of(refused)
    created = await client.call_tool(
        "knowledge_create",
        {"name": "climbing/crags", "content": "Fontainebleau has sandstone boulders."},
    )
    assert not created.is_error and "climbing/crags" in text_of(created), text_of(created)
    found = await client.call_tool("knowledge_search", {"query": "sandstone boulders"})
    assert not found.is_error and "climbing/crags" in text_of(found), text_of(found)


async def test_over_stdio_the_mcp_client_lists_commits_recalls_and_talks(data_dir: Path) -> None:
    environ = {k: v for k, v in os.environ.items() if k != "HOLOGRAM_DATA"}
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "hologram", "mcp", "--data", str(data_dir)], env=environ
    )
    async with Client(server, read_timeout_seconds=60) as client:
        await remember_and_recall(client)
    # A later session, a new server process: what the first one committed is recalled.
    async with Client(server, read_timeout_seconds=60) as client:
        recalled = await client.call_tool("memory_recall", {"query": "Where does Anna climb?"})
        assert not recalled.is_error and "Fontainebleau" in text_of(recalled)
    # The server's kernel has shut down with the session: the input is in its journal.
    async with Kernel(data_dir, environ={}) as kernel:
        record = await kernel.inputs.journal.get(1)
    assert record is not None
    assert (record["text"], record["channel"], record["state"]) == (
        "hello from another agent",
        "mcp",
        "done",
    )


async def test_over_http_the_service_serves_the_same_tools_at_mcp(service: Service) -> None:
    async with Client(service.url + "/mcp", read_timeout_seconds=60) as client:
        await remember_and_recall(client)
    with service.client() as http:
        record = http.get("/inputs/1").json()
    assert (record["text"], record["channel"]) == ("hello from another agent", "mcp")


async def test_beyond_loopback_mcp_needs_the_token(make_service: Callable[..., Service]) -> None:
    service = make_service(host="0.0.0.0")
    token = (service.data_dir / "serve_token").read_text().strip()
    async with httpx.AsyncClient() as http:
        for given in (None, "wrong", token):
            headers = {"authorization": f"Bearer {given}"} if given else {}
            answer = await http.post(service.url + "/mcp", json={}, headers=headers)
            assert (answer.status_code == 401) is (given != token), (given, answer.text)
