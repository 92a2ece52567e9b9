"""A real MCP server for the plugin's tests, written with the official SDK's server API
(MCPServer, which mcp 1.x called FastMCP). Run as `python server.py` it speaks stdio;
`python server.py --http PORT` serves streamable HTTP on 127.0.0.1:PORT."""

from __future__ import annotations

import asyncio
import base64
import os
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

# The protocol's own stream, kept before the SDK diverts stdout, so `garble` can put frames
# on the wire that are not MCP.
WIRE = os.dup(1)
server = MCPServer("testbed")


class Query(BaseModel):
    """What to look up."""

    word: str = Field(description="the word")
    limit: int = 3


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool()
def lookup(query: Query, note: str | None = None) -> str:
    """Look a word up (a nested model: its schema has $defs and $ref)."""
    return f"{query.word}:{query.limit}:{note}"


@server.tool()
def pid() -> int:
    """This server's process id."""
    return os.getpid()


@server.tool()
async def slow(seconds: float, started: str = "") -> str:
    """Answer after a while; the server stays responsive meanwhile. `started` names a file
    written once the call is running, so a test knows the call is in the server."""
    if started:
        Path(started).write_text(str(os.getpid()))  # noqa: ASYNC240  (a test marker)
    await asyncio.sleep(seconds)
    return "slept"


@server.tool()
async def block() -> str:
    """Hang the whole server: its event loop stops, so it never answers anything again (a
    plain function would run in a worker thread and leave the server responsive)."""
    time.sleep(3600)  # noqa: ASYNC251  (blocking the loop is the point)
    return "never"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add a tool named extra and say so."""

    def extra(text: str) -> str:
        """An extra tool."""
        return text[::-1]

    server.add_tool(extra)
    await ctx.notify_tools_changed()  # 2026 listen streams
    await ctx.session.send_tool_list_changed()  # older sessions
    return "grown"


@server.tool()
def garble() -> str:
    """Write two frames that are not MCP onto the wire, then answer normally."""
    os.write(WIRE, b"this is not json\n" + b'{"jsonrpc": "2.0", "id": 987654, "result": 5}\n')
    return "garbled"


@server.tool()
def header(ctx: Context) -> str:
    """The Authorization header this call came with."""
    headers = ctx.headers or {}
    return headers.get("authorization", "none")


@server.tool()
def env(name: str) -> str:
    """An environment variable of this server."""
    return os.environ.get(name, "unset")


@server.tool()
def image() -> list:
    """A tiny image."""
    from mcp.types import ImageContent

    data = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 60).decode()
    return [ImageContent(type="image", data=data, mime_type="image/png")]


@server.tool()
def fail() -> str:
    """Fail on purpose."""
    from mcp.server.mcpserver.exceptions import ToolError

    raise ToolError("the shelf is empty")


@server.resource("note://hello", description="A note to read.")
def hello() -> str:
    return "hello from the note"


@server.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Say hello to {name}, warmly."


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        asyncio.run(server.run_streamable_http_async(host="127.0.0.1", port=int(sys.argv[2])))
    else:
        server.run()
