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


async def test_a_chunk_is_given_before_the_server_sends_the_next_frame() -> None:
    request = CompletionRequest([ChatMessage.user("will it rain?")], model="m")
    async with ScriptedModelServer() as server:
        # The role's frame and the first piece's go out at once; the rest waits a minute.
        server.queue(ScriptedReply(text="It will rain.", chunk_delay=60))
        provider = LuaAdaptedProvider(
            SourceConfig("s", "openai", server.base_url, "sk-test", "m"),
            AdapterLibrary().load("openai"),
        )
        stream = provider.chat_stream(request)
        try:
            async with asyncio.timeout(20):
                async for chunk in stream:
                    if chunk.content:
                        break
            assert chunk.content == "It "
            assert len(server.last_request.frames_sent_at) == 2
        finally:
            await stream.aclose()  # type: ignore[attr-defined]
            await provider.aclose()


async def test_a_cookie_set_on_a_streamed_answer_is_sent_with_the_next_request() -> None:
    # Streams skip the client's own send path; the cookie jar still hears the answer.
    request = CompletionRequest([ChatMessage.user("will it rain?")], model="m")
    async with ScriptedModelServer() as server:
        server.queue(
            ScriptedReply(text="It will rain.", headers={"set-cookie": "affinity=node-7; Path=/"}),
            ScriptedReply(text="Bring an umbrella."),
        )
        provider = LuaAdaptedProvider(
            SourceConfig("s", "openai", server.base_url, "sk-test", "m"),
            AdapterLibrary().load("openai"),
        )
        try:
            for _ in range(2):
                [c async for c in provider.chat_stream(request)]
        finally:
            await provider.aclose()
    first, second = server.requests
    assert "cookie" not in first.headers
    assert second.headers["cookie"] == "affinity=node-7"
