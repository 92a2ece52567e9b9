"""Tools as typed functions: the schema comes from the signature and the docstring, the
arguments are validated once before the call, and a refusal goes back to the model, which
may call again with corrected arguments."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any, Literal, TypedDict

import pytest

from hologram import Kernel
from hologram.agent import Agent
from hologram.llm import ScriptedModelServer
from hologram.sdk import Param, SchemaError, ToolCall, ToolDef, ToolError, schema_of
from hologram.sdk.schema import Schemas, parse_docstring
from hologram.stages import StageHost


class Unit(StrEnum):
    """A temperature unit."""

    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


@dataclass(frozen=True)
class Place:
    city: str
    country: str = ""


def make_forecast(seen: list[dict[str, Any]]) -> ToolDef:
    async def weather_forecast(
        places: Annotated[list[Place], Param(min_length=1)],
        days: Annotated[int, Param("how many days ahead", ge=1, le=7)] = 3,
        unit: Unit = Unit.CELSIUS,
        detail: Literal["short", "long"] = "short",
        note: str | None = None,
    ) -> str:
        """Forecast the weather for some places.

        Args:
            places: where to forecast, one entry per place;
                the country may be left out.
            note: anything to add to the forecast.
        """
        seen.append({"places": places, "days": days, "unit": unit, "detail": detail, "note": note})
        names = ", ".join(p.city for p in places)
        return f"{days} days of sun in {names} ({unit.value}, {detail})"

    return ToolDef.from_function(weather_forecast, owner="weather")


def test_the_schema_is_derived_from_the_signature_and_the_docstring() -> None:
    tool = make_forecast([])
    assert tool.name == "weather_forecast" and tool.owner == "weather"
    assert tool.description == "Forecast the weather for some places."
    assert tool.parameters == {
        "type": "object",
        "properties": {
            "places": {
                "description": "where to forecast, one entry per place; the country may be "
                "left out.",
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
                    "required": ["city"],
                },
                "minItems": 1,
            },
            "days": {
                "type": "integer",
                "description": "how many days ahead",
                "minimum": 1,
                "maximum": 7,
                "default": 3,
            },
            "unit": {
                "type": "string",
                "enum": ["celsius", "fahrenheit"],
                "description": "A temperature unit.",
                "default": "celsius",
            },
            "detail": {"type": "string", "enum": ["short", "long"], "default": "short"},
            "note": {"description": "anything to add to the forecast.", "type": "string"},
        },
        "required": ["places"],
        "additionalProperties": False,
    }
    assert tool.optional == frozenset({"note"})


@pytest.fixture
def host() -> StageHost:
    return StageHost(lambda event: None, tool_timeout=lambda: 10.0)


async def test_arguments_arrive_converted_to_their_annotated_types(host: StageHost) -> None:
    seen: list[dict[str, Any]] = []
    host.register_tool(make_forecast(seen))
    arguments = {"places": [{"city": "Oslo"}], "unit": "fahrenheit", "note": None}
    result = await host.execute(ToolCall("1", "weather_forecast", arguments))
    assert not result.is_error, result.content
    assert result.content == "3 days of sun in Oslo (fahrenheit, short)"
    # The null note is "not given": the default applies, and nothing was refused for it.
    assert seen == [
        {
            "places": [Place("Oslo")],
            "days": 3,
            "unit": Unit.FAHRENHEIT,
            "detail": "short",
            "note": None,
        }
    ]
    assert isinstance(seen[0]["unit"], Unit)


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        ({"places": [], "days": 2}, "places: [] has less than 1 item"),
        ({"places": [{"city": "Oslo"}], "days": 9}, "days: 9 is greater than the maximum of 7"),
        ({"places": [{"city": "Oslo"}], "unit": "kelvin"}, 'unit: "kelvin" is not one of'),
        ({"places": [{"country": "NO"}]}, "places[0]: needs 'city'"),
        ({"days": 2}, "needs 'places'"),
        ({"places": [{"city": "Oslo"}], "dayz": 2}, "('dayz' was unexpected)"),
    ],
)
async def test_a_bad_argument_never_reaches_the_function(
    host: StageHost, arguments: dict[str, Any], complaint: str
) -> None:
    seen: list[dict[str, Any]] = []
    host.register_tool(make_forecast(seen))
    result = await host.execute(ToolCall("1", "weather_forecast", arguments))
    assert result.is_error and seen == []
    assert complaint in result.content
    assert "Call weather_forecast again with corrected arguments" in result.content


async def test_a_rejected_argument_reaches_the_model_which_retries(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer
) -> None:
    seen: list[dict[str, Any]] = []
    agent.stagehost.register_tool(make_forecast(seen))
    model.queue_tool_call("weather_forecast", {"places": [{"city": "Oslo"}], "days": 30}, "c1")
    model.queue_tool_call("weather_forecast", {"places": [{"city": "Oslo"}], "days": 7}, "c2")
    model.queue_text("A week of sun in Oslo.")

    result = await kernel.inputs.say("weather in Oslo for a month?")

    assert result.reply == "A week of sun in Oslo." and result.rounds == 3
    assert [s["days"] for s in seen] == [7]  # only the corrected call ran
    first, second = result.tool_results
    assert first.is_error and "days: 30 is greater than the maximum of 7" in first.content
    assert not second.is_error and second.content.startswith("7 days of sun")
    # The refusal went back to the model as the tool's answer, in the next request.
    answer = [m for m in model.requests[1].json["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in answer] == ["c1"]
    assert "maximum of 7" in answer[0]["content"]
    # The schema the model was offered is the derived one.
    offered = {t["function"]["name"]: t for t in model.requests[0].json["tools"]}
    days = offered["weather_forecast"]["function"]["parameters"]["properties"]["days"]
    assert (days["minimum"], days["maximum"]) == (1, 7)


async def test_a_tool_error_the_function_raises_is_read_by_the_model(host: StageHost) -> None:
    def lookup_entity(name: str) -> str:
        """Look an entity up."""
        raise ToolError(f"no entity {name!r}; entities that exist: Anna, Ben")

    host.register_tool(ToolDef.from_function(lookup_entity))
    result = await host.execute(ToolCall("1", "lookup_entity", {"name": "Ann"}))
    assert result.is_error and result.content == "no entity 'Ann'; entities that exist: Anna, Ben"


async def test_a_plain_function_runs_off_the_loop(host: StageHost) -> None:
    import threading

    threads: list[str] = []

    def where_am_i() -> str:
        """Say which thread runs the tool."""
        threads.append(threading.current_thread().name)
        return "here"

    host.register_tool(ToolDef.from_function(where_am_i))
    await host.execute(ToolCall("1", "where_am_i", {}))
    assert threads and threads[0] != threading.main_thread().name


def test_a_function_that_cannot_be_described_is_refused_at_definition() -> None:
    def untyped_tool(x) -> str:  # type: ignore[no-untyped-def]
        """Has no annotation."""
        return ""

    def varargs_tool(*names: str) -> str:
        """Takes *args."""
        return ""

    def undocumented_tool(x: int) -> str:
        return ""

    def socket_tool(sock: json.JSONDecoder) -> str:
        """Takes something JSON cannot carry."""
        return ""

    with pytest.raises(SchemaError, match="'x' has no type annotation"):
        ToolDef.from_function(untyped_tool)
    with pytest.raises(SchemaError, match="'names' cannot be passed by name"):
        ToolDef.from_function(varargs_tool)
    with pytest.raises(ValueError, match="has no description"):
        ToolDef.from_function(undocumented_tool)
    with pytest.raises(SchemaError, match="parameter 'sock': no JSON schema"):
        ToolDef.from_function(socket_tool)


class Reply(TypedDict, total=False):
    text: str
    ended_by: Unit


@dataclass
class Outer:
    """An outer shape."""

    reply: Reply
    places: list[Place]
    at: float | None = None


def test_named_shapes_can_be_collected_as_components() -> None:
    schemas = Schemas(ref_prefix="#/components/schemas/")
    assert schemas.of(Outer) == {"$ref": "#/components/schemas/Outer"}
    assert schemas.definitions["Outer"] == {
        "type": "object",
        "properties": {
            "reply": {"$ref": "#/components/schemas/Reply"},
            "places": {"type": "array", "items": {"$ref": "#/components/schemas/Place"}},
            "at": {"type": ["number", "null"]},
        },
        "required": ["reply", "places"],
        "description": "An outer shape.",
    }
    assert set(schemas.definitions) == {"Outer", "Reply", "Unit", "Place"}
    assert schema_of(Place)["required"] == ["city"]  # inline when no prefix is given


def test_docstring_sections_and_continuations() -> None:
    description, arguments = parse_docstring(
        """Do a thing.

        More about it.

        Args:
            first: the first
                argument, over two lines.
            second (int): the second.

        Returns:
            nothing: ignored.
        """
    )
    assert description == "Do a thing.\n\nMore about it."
    assert arguments == {"first": "the first argument, over two lines.", "second": "the second."}
