"""What the MCP plugin makes of a server's names, schemas and results, on the SDK's own
types: names a function-calling API takes, schemas cleaned or refused with the reason,
results as text (images kept as a note until the kernel has a media store)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import mcp.types as types
import pytest
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

from hologram.plugins import shipped_plugins
from hologram.sdk.tools import TOOL_NAME


def _wire() -> ModuleType:
    path = shipped_plugins() / "mcp" / "wire.py"
    spec = importlib.util.spec_from_file_location("mcp_plugin_wire", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


wire = _wire()


def test_tool_names_are_ones_every_function_calling_api_takes() -> None:
    assert wire.tool_name("lab", "add") == "mcp__lab__add"
    odd = wire.tool_name("lab", "files/read.v2")
    assert TOOL_NAME.match(odd) and odd.startswith("mcp__lab__files_read_v2_")
    long_a = wire.tool_name("lab", "a" * 80 + "x")
    long_b = wire.tool_name("lab", "a" * 80 + "y")
    assert len(long_a) == 64 and TOOL_NAME.match(long_a) and long_a != long_b


class Place(BaseModel):
    city: str
    country: str | None = None


def visit(place: Place, days: int | None = None) -> str:
    """Visit a place."""
    return ""


async def test_a_pydantic_schema_from_the_sdk_is_cleaned_for_the_wire() -> None:
    server = MCPServer("t")
    server.add_tool(visit)
    [tool] = await server.list_tools()
    assert "$defs" in tool.input_schema  # what the SDK hands out
    cleaned = wire.clean_schema(tool.input_schema)
    assert cleaned.schema == {
        "type": "object",
        "properties": {
            "place": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "country": {"type": ["string", "null"]},  # nested: null stays valid
                },
                "required": ["city"],
            },
            "days": {"type": "integer"},
        },
        "required": ["place"],
    }
    assert cleaned.optional == ("days",)


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        ({"type": "array", "items": {}}, "of type 'array'; tools take an object"),
        ({"anyOf": [{"type": "object"}, {"type": "string"}]}, "top-level 'anyOf'"),
        (
            {
                "type": "object",
                "$defs": {
                    "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}
                },
                "properties": {"head": {"$ref": "#/$defs/Node"}},
            },
            "refers to itself",
        ),
        ({"type": "object", "properties": {"x": {"$ref": "https://e.org/s"}}}, "outside itself"),
        ({"type": "object", "properties": {"x": {"$ref": "#/$defs/Gone"}}}, "does not define"),
        ({"type": "object", "description": "x" * 40_000}, "over the 32768 taken"),
        ("not a schema", "not a JSON object"),
    ],
)
def test_a_schema_no_wire_can_take_is_refused_with_the_reason(schema: object, why: str) -> None:
    with pytest.raises(wire.Refused, match=why):
        wire.clean_schema(schema)


def test_results_become_text_and_media_a_note() -> None:
    image = types.ImageContent(type="image", data="aGVsbG8gd29ybGQh", mime_type="image/png")
    text = types.TextContent(type="text", text="found it")
    result = types.CallToolResult(content=[text, image])
    rendered = wire.result_text(result)
    assert rendered.startswith("found it\n[image image/png, about 12 bytes")
    assert "no media store yet" in rendered
    structured = types.CallToolResult(content=[], structured_content={"total": 3})
    assert wire.result_text(structured) == '{"total": 3}'
    link = types.ResourceLink(type="resource_link", uri="note://a", name="a")
    assert wire.block_text(link) == "[resource note://a a]"
    embedded = types.EmbeddedResource(
        type="resource",
        resource=types.TextResourceContents(uri="note://b", text="inside", mime_type="text/plain"),
    )
    assert wire.block_text(embedded) == "inside"
