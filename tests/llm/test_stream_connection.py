"""A streamed answer read to its end gives its connection back: the next call reuses it
instead of paying a new connect before its first token."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from hologram.llm import (
    AdapterLibrary,
    ChatMessage,
    CompletionRequest,
    LuaAdaptedProvider,
    ScriptedModelServer,
    ScriptedReply,
    SourceConfig,
)


@contextlib.asynccontextmanager
async def counting_proxy(port: int) -> AsyncIterator[tuple[str, list[int]]]:
    """A TCP proxy on 127.0.0.1 in front of `port`; yields its URL and the count of the
    connections it accepted."""
    accepted = [0]

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted[0] += 1
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", port)
        await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    async with server:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1", accepted


async def test_consecutive_streams_share_one_connection() -> None:
    request = CompletionRequest([ChatMessage.user("will it rain?")], model="m")
    async with ScriptedModelServer() as server, counting_proxy(server.port) as (url, accepted):
        provider = LuaAdaptedProvider(
            SourceConfig("s", "openai", url, "sk-test", "m"), AdapterLibrary().load("openai")
        )
        try:
            for text in ("It will rain.", "Bring an umbrella."):
                server.queue(ScriptedReply(text=text))
                chunks = [c async for c in provider.chat_stream(request)]
                assert chunks[-1].done and chunks[-1].response is not None
                assert chunks[-1].response.content == text
        finally:
            await provider.aclose()
    assert accepted[0] == 1
