"""The one conversation every adapter is checked with, and the fixture files.

The conversation has what each wire format treats specially: a system prompt, an image,
an assistant turn with a tool call, the tool's result, and a Chinese follow-up.
"""

from __future__ import annotations

from pathlib import Path

from hologram.llm import (
    ChatMessage,
    CompletionRequest,
    ImageBlock,
    ScriptedReply,
    StreamChunk,
    TextBlock,
)
from hologram.sdk import ToolCall, ToolDef, ToolResult

FIXTURES = Path(__file__).parent / "fixtures"

IMAGE = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

WEATHER = ToolDef(
    "get_weather",
    "Current weather for a city",
    {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "city name"}},
        "required": ["city"],
        "additionalProperties": False,
    },
)


def conversation(**options: object) -> CompletionRequest:
    return CompletionRequest(
        messages=[
            ChatMessage.system("You are Holo."),
            ChatMessage.user(
                [
                    TextBlock("What is in this picture, and the weather in Paris?"),
                    ImageBlock("image/png", data=IMAGE),
                ]
            ),
            ChatMessage.assistant(
                "Let me check.", [ToolCall("call_1", "get_weather", {"city": "Paris"})]
            ),
            ChatMessage.tool(ToolResult("call_1", "get_weather", "sunny, 21°C")),
            ChatMessage.user("谢谢！明天呢？"),
        ],
        tools=[WEATHER],
        temperature=0.3,
        max_tokens=512,
        **options,  # type: ignore[arg-type]
    )


def body(name: str) -> ScriptedReply:
    """A fixture file served as the response body."""
    return ScriptedReply(body=(FIXTURES / name).read_text(encoding="utf-8"))


def stream(name: str) -> ScriptedReply:
    """A fixture file served as a stream, line by line."""
    lines = (FIXTURES / name).read_text(encoding="utf-8").split("\n")
    media = "application/x-ndjson" if name.endswith(".ndjson") else "text/event-stream"
    return ScriptedReply(lines=lines, content_type=media)


async def collect(chunks: object) -> list[StreamChunk]:
    return [chunk async for chunk in chunks]  # type: ignore[attr-defined]
