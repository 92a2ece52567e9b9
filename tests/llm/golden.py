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


# A tool schema as pydantic writes one: references, const, a nullable union, a type list.
PYDANTIC_STYLE = ToolDef(
    "plan_trip",
    "Plan a trip",
    {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "Place": {
                "type": "object",
                "title": "Place",
                "properties": {"city": {"type": "string"}, "kind": {"const": "city"}},
                "required": ["city"],
                "additionalProperties": False,
            }
        },
        "properties": {
            "stops": {"type": "array", "items": {"$ref": "#/$defs/Place"}},
            "start": {"$ref": "#/$defs/Place", "description": "where it begins"},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "days": {"type": ["integer", "null"], "minimum": 1},
            "mode": {"oneOf": [{"const": "train"}, {"const": "car"}]},
            "level": {"enum": [1, 2, 3], "type": "integer"},
        },
        "required": ["stops"],
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
