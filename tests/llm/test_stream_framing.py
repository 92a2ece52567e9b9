"""Streamed bodies are framed from their bytes as each read brings them: the payloads are
the ones the official OpenAI client's SSE decoder finds, however the body is cut into
reads, and a line ends only where SSE says a line ends."""

from __future__ import annotations

from pathlib import Path

import pytest
from openai._streaming import SSEDecoder

from hologram.llm import (
    AdapterLibrary,
    ChatMessage,
    CompletionRequest,
    LuaAdaptedProvider,
    ScriptedModelServer,
    ScriptedReply,
    SourceConfig,
)
from hologram.llm.streaming import NDJSONFramer, SSEFramer

FIXTURES = Path(__file__).parent / "fixtures"

# Every event has a data line (the oracle also reports events that have none, which
# carry nothing for an adapter and which the framer drops).
AWKWARD_SSE = (
    ": a comment first\r\n"
    "event: message\r\n"
    'data: {"text": "crlf ends, 天气"}\r\n'
    "\r\n"
    "id: 7\n"
    "data: first line\n"
    "data:second line, no space\n"
    "\n"
    'data: {"text": "bare CR ends"}\r'
    "\r"
    "retry: 100\n"
    "data: \n"
    "\n"
    'data: {"text": "a separator\u2028inside, a NEL\x85 and a form feed\x0c too"}\n'
    "\n"
    "data: [DONE]\n"
    "\n"
)


def official_payloads(body: bytes) -> list[str]:
    return [event.data for event in SSEDecoder().iter_bytes(iter([body]))]


def framed(framer: SSEFramer | NDJSONFramer, pieces: list[bytes]) -> list[str]:
    payloads: list[str] = []
    for piece in pieces:
        payloads += framer.feed(piece)
    return payloads + framer.close()


def cuts(body: bytes) -> list[list[bytes]]:
    """The body whole, byte by byte, and cut in two at every place."""
    return [
        [body],
        [body[i : i + 1] for i in range(len(body))],
        *([body[:i], body[i:]] for i in range(1, len(body))),
    ]


@pytest.mark.parametrize(
    "body",
    [
        AWKWARD_SSE.encode(),
        *(
            (FIXTURES / name).read_bytes()
            for name in (
                "openai_stream.sse",
                "anthropic_stream.sse",
                "deepseek_stream.sse",
                "gemini_stream.sse",
            )
        ),
    ],
    ids=["awkward", "openai", "anthropic", "deepseek", "gemini"],
)
def test_sse_payloads_are_the_official_decoders_however_the_body_is_cut(body: bytes) -> None:
    expected = official_payloads(body)
    assert expected  # the oracle found events, so the comparison says something
    for pieces in cuts(body):
        assert framed(SSEFramer(), pieces) == expected


def test_a_payload_is_given_on_the_read_that_completes_it() -> None:
    framer = SSEFramer()
    assert framer.feed(b'data: {"a": 1}\n') == []
    assert framer.feed(b"\n") == ['{"a": 1}']
    assert framer.feed(b'data: {"b": 2}\n\ndata: {"c"') == ['{"b": 2}']
    assert framer.feed(b": 3}\r") == []  # the CR may be the first half of a CRLF
    assert framer.feed(b"\n\r\n") == ['{"c": 3}']


def test_an_event_the_body_ends_before_its_blank_line_is_still_given() -> None:
    # SSE would discard it (the official decoder does); a server that stops a line short
    # of the blank line loses no chunk here, as before the framer was synchronous.
    assert framed(SSEFramer(), [b"data: [DONE]\n"]) == ["[DONE]"]
    assert framed(SSEFramer(), [b"data: [DONE]"]) == ["[DONE]"]


def test_a_character_cut_between_two_reads_is_decoded_whole() -> None:
    text = "data: 巴黎\n\n".encode()
    at = text.index("黎".encode()) + 1
    assert framed(SSEFramer(), [text[:at], text[at:]]) == ["巴黎"]


def test_ndjson_lines_are_framed_and_blank_ones_dropped() -> None:
    body = (FIXTURES / "ollama_stream.ndjson").read_bytes()
    expected = [line for line in body.decode().split("\n") if line.strip()]
    assert len(expected) > 1
    for pieces in cuts(body):
        assert framed(NDJSONFramer(), pieces) == expected
    assert framed(NDJSONFramer(), [b'{"a": 1}\r\n\r\n  \n{"b": 2}']) == ['{"a": 1}', '{"b": 2}']


async def test_a_reply_with_unicode_line_separators_streams_whole(
    server: ScriptedModelServer,
) -> None:
    # The scripted server, like many real ones, writes these characters raw inside the
    # JSON; a splitter that breaks lines where str.splitlines does cut the payload in two
    # and failed the answer as "not JSON".
    text = "one\u2028two\u2029three\x85four\x0bfive\x0csix\x1cseven"
    server.queue(ScriptedReply(text=text))
    provider = LuaAdaptedProvider(
        SourceConfig("s", "openai", server.base_url, "sk-test", "m"),
        AdapterLibrary().load("openai"),
    )
    try:
        chunks = [
            c async for c in provider.chat_stream(CompletionRequest([ChatMessage.user("hi")]))
        ]
    finally:
        await provider.aclose()
    assert chunks[-1].response is not None and chunks[-1].response.content == text
    assert "".join(c.content for c in chunks[:-1]) == text
