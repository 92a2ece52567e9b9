"""`hologram.client`: the typed client of the service, sync and async, against the real
service as a subprocess; its answers are the dataclasses the endpoints return."""

from __future__ import annotations

import asyncio
import inspect
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from hologram.agent.journal import InputState
from hologram.client import AsyncClient, Client, HologramError, StreamEvent
from hologram.serve.inputs import Ack, InputResult
from hologram.serve.reads.graph import Recalled
from hologram.serve.reads.knowledge import KnowledgeSearch
from hologram.serve.status import LlmStatus, Status
from tests.serve.harness import Service


def _methods(client: Client | AsyncClient) -> dict[str, inspect.Signature]:
    public = [name for name in dir(type(client)) if not name.startswith("_")]
    return {name: inspect.signature(getattr(client, name)) for name in public}


async def test_the_two_clients_offer_the_same_methods_with_the_same_signatures() -> None:
    with Client("http://127.0.0.1:9") as sync_client:
        sync = _methods(sync_client)
    async with AsyncClient("http://127.0.0.1:9") as async_client:
        asynchronous = _methods(async_client)
    assert sync.keys() - {"close"} == asynchronous.keys() - {"aclose"}
    for name in sync.keys() - {"close", "events", "call"}:
        assert asynchronous[name] == sync[name], name
    assert "wait" in sync["say"].parameters and "media" in sync["send"].parameters
    # Each shows the type of its answer (not the Call it sends), and the async face's
    # methods are coroutine functions, as a reader of either expects.
    assert sync["say"].return_annotation is InputResult
    assert sync["send"].return_annotation is Ack and sync["status"].return_annotation is Status
    async with AsyncClient("http://127.0.0.1:9") as async_client:
        assert inspect.iscoroutinefunction(async_client.say)
    with Client("http://127.0.0.1:9") as sync_client:
        assert not inspect.iscoroutinefunction(sync_client.say)


def test_the_sync_client_answers_with_the_endpoints_own_types(service: Service) -> None:
    with Client(service.url) as hologram:
        result = hologram.say("I love climbing")
        assert isinstance(result, InputResult)
        assert result.ended_by == "answer" and "I love climbing" in result.reply
        ack = hologram.send("What do I love?")
        assert isinstance(ack, Ack) and ack.id == result.id + 1
        status = hologram.status()
        assert isinstance(status, Status) and isinstance(status.llm, LlmStatus)
        assert status.llm.offline is True
        outputs = hologram.events(["agent_output"], last_event_id=0)
        replies = {}
        for event in outputs:
            assert isinstance(event, StreamEvent)
            if event.seq is None:
                # The ring began after boot: the stream's own notice says what it lacks.
                assert event.type == "gap" and event.payload["after"] == 0
                continue
            replies[event.input] = event.payload["text"]
            if ack.id in replies:
                break
        assert "“I love climbing”" in replies[ack.id]
        # The reply goes out before the journal marks the input done: the mark waits for
        # the turn's memory to be written.
        deadline = time.monotonic() + 30
        while (record := hologram.input(ack.id))["state"] == InputState.RUNNING:
            assert time.monotonic() < deadline, "the input was never marked done"
            time.sleep(0.01)
        assert record["state"] == InputState.DONE and record["reply"] == replies[ack.id]
        assert isinstance(hologram.recall("climbing"), Recalled)
        found = hologram.knowledge_search("bread")
        assert isinstance(found, KnowledgeSearch) and (found.query, found.hits) == ("bread", [])


def test_a_refusal_raises_with_the_services_message(service: Service) -> None:
    with Client(service.url) as hologram:
        with pytest.raises(HologramError) as refused:
            hologram.say("hi", channel="nowhere")
        assert refused.value.status == 400
        assert "no output channel 'nowhere'" in refused.value.message
        with pytest.raises(HologramError) as missing:
            hologram.input(999)
        assert missing.value.status == 404


async def test_the_async_client_says_sends_and_streams(service: Service) -> None:
    async with AsyncClient(service.url) as hologram:
        result = await hologram.say("hello there")
        assert isinstance(result, InputResult) and "hello there" in result.reply
        ack = await hologram.interrupt("the kettle boils", level="L2")
        assert ack.level == 2
        seen: list[StreamEvent] = []
        async for event in hologram.events(["agent_output"], last_event_id=0):
            if event.seq is None:
                continue
            seen.append(event)
            if event.input == ack.id:
                break
        assert [e.input for e in seen] == [result.id, ack.id]
        setting = await hologram.set_setting("core.agent.max_tool_rounds", text="6")
        assert setting.value == 6 and setting.source == "stored"
        listing = await hologram.settings("core.agent.max_tool")
        assert [s.key for s in listing.settings] == ["core.agent.max_tool_rounds"]


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
async def test_an_event_whose_text_holds_a_unicode_line_break_arrives_whole(
    service: Service, separator: str
) -> None:
    text = f"two{separator}lines"
    async with AsyncClient(service.url) as hologram:
        result = await hologram.say(text)
        said: list[StreamEvent] = []
        async for event in hologram.events(last_event_id=0):
            if text in json.dumps(event.payload, ensure_ascii=False):
                said.append(event)
            if event.type == "agent_output" and event.input == result.id:
                break
        assert said, "no event carried the text whole"
    with Client(service.url) as hologram:
        first = next(
            e
            for e in hologram.events(last_event_id=0)
            if text in json.dumps(e.payload, ensure_ascii=False)
        )
        assert (first.seq, first.payload) == (said[0].seq, said[0].payload)


@pytest.fixture
def dropping_server() -> Iterator[tuple[str, list[int]]]:
    """A real HTTP server on loopback that closes the first connection without answering
    (as a server does with an idle keep-alive connection) and answers the second."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    served: list[int] = []

    def serve() -> None:
        for attempt in range(2):
            conn, _ = listener.accept()
            with conn:
                conn.recv(65536)
                served.append(attempt)
                if attempt == 1:
                    body = b'{"stopped":[]}'
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                        b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(body), body)
                    )

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}", served
    listener.close()


def test_a_request_the_server_dropped_unread_is_sent_once_more(
    dropping_server: tuple[str, list[int]],
) -> None:
    url, served = dropping_server
    with Client(url) as hologram:
        assert hologram.stop().stopped == []
    assert served == [0, 1]


async def test_the_async_client_retries_a_dropped_request_once_only(
    dropping_server: tuple[str, list[int]],
) -> None:
    url, served = dropping_server
    async with AsyncClient(url) as hologram:
        assert (await hologram.stop()).stopped == []
    assert served == [0, 1]
    # A second drop in a row is the caller's to see.
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def drop_twice() -> None:
        for _ in range(2):
            conn, _ = listener.accept()
            with conn:
                conn.recv(65536)

    thread = threading.Thread(target=drop_twice, daemon=True)
    thread.start()
    async with AsyncClient(f"http://127.0.0.1:{port}") as hologram:
        with pytest.raises(httpx.RemoteProtocolError):
            await hologram.stop()
    await asyncio.to_thread(thread.join, 10)
    listener.close()


def test_chat_reports_a_failed_request_in_one_line_and_goes_on(service: Service) -> None:
    chat = subprocess.Popen(
        [sys.executable, "-m", "hologram", "chat", "--url", service.url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert chat.stdin is not None and chat.stdout is not None
    try:
        assert "connected to" in chat.stdout.readline()
        chat.stdin.write("hello\n")
        chat.stdin.flush()
        lines = [chat.stdout.readline(), chat.stdout.readline()]
        assert any("] hologram> " in line for line in lines), lines
        service.kill()
        out, err = chat.communicate("are you there?\n/status\n", timeout=60)
    finally:
        if chat.poll() is None:
            chat.kill()
    failures = [line for line in out.splitlines() if line.startswith("! ") and "stream" not in line]
    assert len(failures) == 2, out
    assert all("ConnectError" in line for line in failures), failures
    assert "Traceback" not in err and chat.returncode == 0
