"""The MCP server notebook 12 connects to, written with the official SDK's server API
(`MCPServer`, called FastMCP in mcp 1.x). `python 12_hands_server.py` speaks stdio;
`python 12_hands_server.py --http PORT` serves streamable HTTP on 127.0.0.1:PORT."""

import asyncio
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("shelf")
notes: list[str] = []


@server.tool()
def note_add(text: str) -> str:
    """Put a note on the shelf."""
    notes.append(text)
    return f"{len(notes)} note(s) on the shelf"


@server.tool()
def note_list() -> list[str]:
    """Every note on the shelf, oldest first."""
    return list(notes)


@server.tool()
def word_count(text: str) -> int:
    """How many words the text has."""
    return len(text.split())


@server.resource("shelf://about", description="What this server is.")
def about() -> str:
    return "a shelf of notes, for notebook 12"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        asyncio.run(server.run_streamable_http_async(host="127.0.0.1", port=int(sys.argv[2])))
    else:
        server.run()
