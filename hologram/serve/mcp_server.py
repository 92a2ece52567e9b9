"""The companion as an MCP server, on the official `mcp` SDK: other agents and editors use
its memory and talk to it.

The tools are the kernel's own, as the model sees them: `memory_recall` and `memory_commit`
(the graph memory), `knowledge_search` and `knowledge_create`, each with its description
and derived schema, run through the kernel's tool runner (arguments checked against the
schema, the firewall's policy, a refusal sent back as an error result the caller can read).
One tool is the server's: `send_input`, which gives the companion an input on the `mcp`
channel (with images, base64 as MCP's image content carries them) and answers with its
reply.

Two transports: streamable HTTP at `/mcp` on the service (behind the same access rule as
the API), and stdio for `python -m hologram mcp`, which boots its own kernel on the data
dir, announces itself on stderr and serves until the client closes stdin.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.types import ASGIApp

from hologram._version import __version__
from hologram.agent import TaskStopped, TurnResult
from hologram.config import ConfigError
from hologram.facade import Kernel
from hologram.kernel import AssemblyError
from hologram.sdk import NOT_BLANK, Param, ToolCall, ToolDef, ToolError
from hologram.serve.bodies import (
    MAX_SYNC_TIMEOUT_S,
    MCP_CHANNEL,
    ApiError,
    InputBody,
    MediaUpload,
    decode_media,
)
from hologram.serve.intake import Intake, register_service_channels

SERVER_NAME = "hologram"
KERNEL_TOOLS = ("memory_recall", "memory_commit", "knowledge_search", "knowledge_create")
"""The kernel's tools an MCP client is offered, by the names the model knows them by."""
INSTRUCTIONS = (
    "A Hologram companion: recall and commit facts in its graph memory, search and add to its "
    "knowledge base, or send it an input and get its reply (send_input)."
)


@dataclass(frozen=True, slots=True)
class ImageArgument:
    """An image for `send_input`: MCP's image content (`data`, its type), as an argument."""

    data: Annotated[str, Param("the bytes, base64 (standard alphabet)", min_length=1)]
    mime_type: Annotated[str, Param("the claimed type, such as image/png")] = ""


class CompanionTools:
    """The tools one kernel offers over MCP, and running them."""

    def __init__(self, kernel: Kernel, intake: Intake) -> None:
        self.kernel = kernel
        self.intake = intake
        self._calls = itertools.count(1)
        self._send = ToolDef.from_function(self.send_input, owner="mcp", refusals=(ApiError,))

    async def send_input(
        self,
        text: Annotated[str, Param("what is said to the companion", pattern=NOT_BLANK)],
        wait: Annotated[
            float, Param("seconds to wait for the reply", gt=0, le=MAX_SYNC_TIMEOUT_S)
        ] = 60.0,
        images: Annotated[
            tuple[ImageArgument, ...],
            Param("images shown with the text, as MCP image content carries them"),
        ] = (),
    ) -> str:
        """Give the companion an input (on its 'mcp' channel) and answer with its reply, once
        its turn has ended. The input is journaled first: a reply that takes longer than
        `wait` still comes, on the companion's own channels."""
        given = InputBody(text, MCP_CHANNEL, "queued", "mcp", wait)
        # The same decoding and store checks as the HTTP API's base64 items.
        media = decode_media(tuple(MediaUpload(i.data, i.mime_type) for i in images))
        ticket = await self.intake.submit(given, media)
        try:
            async with asyncio.timeout(wait):
                result: TurnResult = await asyncio.shield(ticket.outcome)
        except TimeoutError:
            raise ToolError(
                f"no reply within {wait:g} s; input {ticket.id} is still queued or running"
            ) from None
        except TaskStopped as exc:
            raise ToolError(f"input {ticket.id} was stopped: {exc}") from None
        return result.reply

    def offered(self) -> dict[str, ToolDef]:
        agent = self.kernel.state.agent
        every = {} if agent is None else agent.build_tool_defs()
        tools = {name: every[name] for name in KERNEL_TOOLS if name in every}
        tools[self._send.name] = self._send
        return tools

    async def list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        listed = [
            types.Tool(name=t.name, description=t.description, input_schema=t.parameters)
            for t in self.offered().values()
        ]
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tools = self.offered()
        call = ToolCall(f"mcp_{next(self._calls)}", params.name, dict(params.arguments or {}))
        stagehost = self.kernel.state.stagehost
        if stagehost is None:
            return _result("the companion is not ready yet: try again in a moment", error=True)
        result = await stagehost.runner.execute(call, tools)
        return _result(result.content, error=result.is_error)

    def server(self) -> Server[Any]:
        return Server(
            SERVER_NAME,
            version=__version__,
            instructions=INSTRUCTIONS,
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
        )


def _result(text: str, *, error: bool) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


class McpDoor:
    """`/mcp` on the service: the SDK's streamable HTTP transport, whose sessions run in a
    task group held open by `running()` for as long as the service serves."""

    def __init__(self, kernel: Kernel, intake: Intake) -> None:
        self.manager = StreamableHTTPSessionManager(CompanionTools(kernel, intake).server())
        self.app: ASGIApp = StreamableHTTPASGIApp(self.manager)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.manager.run():
            yield


def _err(line: str) -> None:
    # stdout is the protocol's: everything a person should read goes to stderr.
    print(line, file=sys.stderr, flush=True)


async def serve_stdio(data_dir: str | None) -> int:
    """`python -m hologram mcp`: a kernel on `data_dir`, served over stdin and stdout until
    the client closes stdin."""
    kernel = Kernel(data_dir)
    try:
        await kernel.start()
    except (AssemblyError, ConfigError) as exc:
        _err(f"hologram mcp: cannot start: {exc}")
        return 1
    register_service_channels(kernel)
    intake = Intake(kernel)
    server = CompanionTools(kernel, intake).server()
    _err(f"hologram mcp: serving the companion on {kernel.data_dir} over stdio")
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        intake.close()
        await intake.drain(5.0)
        await kernel.shutdown()
        _err("hologram mcp: stopped")
    return 0
