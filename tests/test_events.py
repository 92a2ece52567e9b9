"""The event bus: publish never waits, one subscriber never harms another."""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import json
from pathlib import Path

import pytest

from hologram.events import EventBus
from hologram.kernel import KernelTasks
from hologram.sdk import (
    PAYLOADS,
    AgentOutputDelta,
    ConfigChanged,
    Event,
    EventsDropped,
    EventType,
    Payload,
    PayloadError,
    PluginPayload,
    Reasoning,
    SchedulerDecision,
    SubscriberError,
    SystemNote,
    ToolCalled,
    TurnStarted,
    event_payloads,
    from_wire,
    to_wire,
)


def _count(n: int) -> SystemNote:
    return SystemNote(kind="count", detail={"n": n})


def _n(event: Event) -> int:
    assert isinstance(event.payload, SystemNote)
    return int(event.payload.detail["n"])


def _call() -> ToolCalled:
    return ToolCalled(name="t", arguments={}, result="", is_error=False)


async def test_a_raising_subscriber_does_not_stop_the_others(tasks: KernelTasks) -> None:
    bus = EventBus(tasks=tasks.scope("events"))
    received: list[str] = []
    errors: list[Event] = []

    def broken(event: Event) -> None:
        raise ValueError("subscriber bug")

    async def async_broken(event: Event) -> None:
        raise ValueError("async subscriber bug")

    async def async_ok(event: Event) -> None:
        received.append(f"async {event.type}")

    bus.subscribe(EventType.SYSTEM, broken)
    bus.subscribe(EventType.SYSTEM, async_broken)
    bus.subscribe(EventType.SYSTEM, lambda e: received.append(f"sync {e.type}"))
    bus.subscribe(EventType.SYSTEM, async_ok)
    bus.subscribe(EventType.SUBSCRIBER_ERROR, errors.append)

    bus.emit(SystemNote(kind="hello"))
    await bus.close()
    assert sorted(received) == ["async system", "sync system"]
    assert sorted(e.payload.error for e in errors if isinstance(e.payload, SubscriberError)) == [
        "ValueError: async subscriber bug",
        "ValueError: subscriber bug",
    ]


async def test_a_slow_subscriber_does_not_block_publish(tasks: KernelTasks) -> None:
    bus = EventBus(queue_size=4, tasks=tasks.scope("events"))
    release = asyncio.Event()
    fast: list[int] = []

    async def slow(event: Event) -> None:
        await release.wait()

    bus.subscribe(EventType.SYSTEM, slow)
    bus.subscribe(EventType.SYSTEM, lambda e: fast.append(_n(e)))
    # publish is a plain function: if it waited for `slow`, this loop could never finish,
    # because nothing sets `release` until after it.
    for n in range(100):
        bus.emit(_count(n))
    assert fast == list(range(100))
    release.set()
    await bus.close()


async def test_dropped_events_are_counted_and_reported(tasks: KernelTasks) -> None:
    bus = EventBus(queue_size=2, tasks=tasks.scope("events"))
    release = asyncio.Event()
    reports: list[Event] = []

    async def slow(event: Event) -> None:
        await release.wait()

    bus.subscribe(EventType.SYSTEM, slow)
    bus.subscribe(EventType.EVENTS_DROPPED, reports.append)
    for n in range(10):
        bus.emit(_count(n))
    # The subscriber's task has not run yet, so two events fit in its queue and eight do not.
    # The drop report is published on the next turn of the loop, once for the whole burst.
    await asyncio.sleep(0)
    assert [r.payload.dropped for r in reports if isinstance(r.payload, EventsDropped)] == [8]
    assert bus.stats()["dropped"] == {
        "test_dropped_events_are_counted_and_reported.<locals>.slow": 8
    }
    release.set()
    await bus.close()


async def test_unsubscribe_stops_delivery_and_filtering_by_type_works(tasks: KernelTasks) -> None:
    bus = EventBus(tasks=tasks.scope("events"))
    seen: list[str] = []
    everything: list[str] = []
    unsubscribe = bus.subscribe(EventType.TOOL_CALL, lambda e: seen.append(e.type))
    bus.subscribe(None, lambda e: everything.append(e.type))
    bus.emit(_call())
    bus.emit(Reasoning(round=1, text=""))
    unsubscribe()
    bus.emit(_call())
    assert seen == ["tool_call"]
    assert everything == ["tool_call", "reasoning", "tool_call"]
    await bus.close()


async def test_events_are_numbered_in_publish_order(tasks: KernelTasks) -> None:
    bus = EventBus(tasks=tasks.scope("events"))
    first = bus.emit(SystemNote(kind="first"))
    second = bus.publish(Event(type="plugin.demo.ping", source="demo"))
    assert (first.seq, second.seq) == (1, 2)
    await bus.close()


async def test_close_lets_async_subscribers_catch_up(tasks: KernelTasks) -> None:
    bus = EventBus(tasks=tasks.scope("events"))
    handled: list[int] = []

    async def handler(event: Event) -> None:
        await asyncio.sleep(0)
        handled.append(_n(event))

    bus.subscribe(None, handler)
    for n in range(50):
        bus.emit(_count(n))
    await bus.close()
    assert handled == list(range(50))


async def test_a_kernels_events_carry_its_clock_and_config_changes_are_published(
    tmp_path,  # type: ignore[no-untyped-def]
) -> None:
    from hologram import Kernel
    from hologram.kernel import ManualClock

    clock = ManualClock(start=1_000_000.0)
    async with Kernel(tmp_path / "data", clock=clock) as kernel:
        seen: list[Event] = []
        kernel.events.subscribe(EventType.CONFIG_CHANGED, seen.append)
        await clock.advance(60)
        await kernel.config.set("core.agent.max_tool_rounds", 4)
        await kernel.config.set("core.llm.api_key", "sk-never-in-an-event")
        await kernel.config.delete("core.agent.max_tool_rounds")
        changes = [
            (e.payload.key, e.payload.value) for e in seen if isinstance(e.payload, ConfigChanged)
        ]
        assert changes == [
            ("core.agent.max_tool_rounds", 4),
            ("core.llm.api_key", "****"),
            ("core.agent.max_tool_rounds", 10),  # deleted: the default applies again
        ]
        assert all(e.timestamp == 1_000_060.0 for e in seen), "stamped by the kernel's clock"


# ---- the payload classes -------------------------------------------------------------------

_EVENT_MODULES = {"hologram/sdk/event_payloads.py", "hologram/sdk/events.py"}
_NOT_EVENTS = ("hologram/llm/wire/",)
"""Where `.payload` is an HTTP request body a model's wire format reads, not an event's."""


def _payload_reads_by_key(tree: ast.AST) -> list[int]:
    """Lines that read an event payload by key: `x.payload[...]`, `x.payload.get(...)`, or
    the same on a name bound to `x.payload` in that function."""
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            pairs = [(t, node.value) for t in node.targets]
            pairs += [
                (t, v)
                for target in node.targets
                if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple)
                for t, v in zip(target.elts, node.value.elts, strict=False)
            ]
            aliases |= {
                t.id
                for t, v in pairs
                if isinstance(t, ast.Name) and isinstance(v, ast.Attribute) and v.attr == "payload"
            }

    def is_payload(node: ast.expr) -> bool:
        if isinstance(node, ast.Attribute):
            return node.attr == "payload"
        return isinstance(node, ast.Name) and node.id in aliases

    lines = []
    for node in ast.walk(tree):
        by_key = isinstance(node, ast.Subscript) and is_payload(node.value)
        by_get = (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and is_payload(node.func.value)
        )
        if by_key or by_get:
            lines.append(node.lineno)
    return lines


def test_no_event_payload_is_read_by_string_key_outside_the_event_modules() -> None:
    root = Path(__file__).resolve().parents[1]
    found = []
    for path in sorted((root / "hologram").rglob("*.py")):
        name = path.relative_to(root).as_posix()
        if name in _EVENT_MODULES or name.startswith(_NOT_EVENTS):
            continue
        found += [f"{name}:{line}" for line in _payload_reads_by_key(ast.parse(path.read_text()))]
    assert not found, (
        "event payloads are dataclasses: read their attributes (event.payload.text), not keys; "
        f"read by key at: {', '.join(found)}"
    )


def test_the_scan_sees_a_read_by_key_and_through_an_alias() -> None:
    code = (
        "def f(e):\n    e.payload['a']\n    p = e.payload\n    p.get('b')\n    q.get('c')\n"
        "    r, i = e.payload, e.input\n    r['d']\n"
    )
    assert sorted(_payload_reads_by_key(ast.parse(code))) == [2, 4, 7]


def test_every_kernel_event_type_has_exactly_one_payload_class() -> None:
    classes = [
        obj
        for obj in vars(event_payloads).values()
        if isinstance(obj, type)
        and issubclass(obj, Payload)
        and obj not in (Payload, PluginPayload)
    ]
    by_type: dict[str, list[str]] = {}
    for cls in classes:
        by_type.setdefault(cls.type.value, []).append(cls.__name__)
    assert {t: names for t, names in by_type.items() if len(names) > 1} == {}
    assert sorted(by_type) == sorted(t.value for t in EventType)
    assert all(PAYLOADS[t].__name__ == names[0] for t, names in by_type.items())


def _sample(cls: type[Payload], *, everything: bool) -> Payload:
    """An instance of `cls` with every required field set (and, with `everything`, every
    optional one too, so none is left off the wire)."""
    values: dict[str, object] = {}
    for f in dataclasses.fields(cls):
        optional = (
            f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        )
        if optional and not everything:
            continue
        hint = str(f.type)
        if f.name == "detail":
            values[f.name] = {"extra": 1, "more": ["x"]}
        elif hint.startswith("bool"):
            values[f.name] = True
        elif hint.startswith("int"):
            values[f.name] = 3
        elif hint.startswith("float"):
            values[f.name] = 1.5
        elif hint.startswith("list"):
            values[f.name] = ["a", "b"]
        else:
            values[f.name] = f"{f.name}-value"
    return cls(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize("cls", sorted(PAYLOADS.values(), key=lambda c: c.__name__))
def test_a_payload_comes_back_from_the_wire_as_it_left(cls: type[Payload]) -> None:
    for everything in (False, True):
        payload = _sample(cls, everything=everything)
        wire = json.loads(json.dumps(to_wire(payload)))
        assert from_wire(cls.type, wire) == payload
        assert Event(cls.type, wire).payload == payload


def test_defaults_stay_off_the_wire_and_detail_is_spread_into_it() -> None:
    delta = AgentOutputDelta(input_id=4, round=1, text="hi")
    assert to_wire(delta) == {"input_id": 4, "round": 1, "text": "hi"}
    decision = SchedulerDecision(action="clamp", task=2, at=5.0, detail={"asked": 4, "given": 3})
    assert to_wire(decision) == {"action": "clamp", "task": 2, "at": 5.0, "asked": 4, "given": 3}
    error = SubscriberError(subscriber="s", event_type_="system", error="E")
    assert to_wire(error) == {"subscriber": "s", "event_type": "system", "error": "E"}


def test_an_unknown_field_from_the_wire_is_refused_by_name() -> None:
    with pytest.raises(PayloadError, match=r"'chanel'.*TurnStarted has: channel"):
        from_wire(EventType.TURN_STARTED, {"chanel": "chat"})
    with pytest.raises(PayloadError, match="'texts'"):
        Event(EventType.REASONING, {"round": 1, "text": "", "texts": ""})


def test_an_unknown_event_type_is_kept_whole_as_a_generic_payload() -> None:
    newer = from_wire("kernel_dreamed", {"of": "sheep"})
    assert newer == PluginPayload(kind="kernel_dreamed", data={"of": "sheep"})
    assert (newer.event_type, to_wire(newer)) == ("kernel_dreamed", {"of": "sheep"})
    ping = Event("plugin.demo.ping", {"n": 1})
    assert isinstance(ping.payload, PluginPayload) and ping.payload.data == {"n": 1}


async def test_emit_takes_the_payload_and_stamps_its_type(tasks: KernelTasks) -> None:
    bus = EventBus(tasks=tasks.scope("events"))
    seen: list[Event] = []
    bus.subscribe(EventType.TURN_STARTED, seen.append)
    bus.emit(TurnStarted(channel="chat"), source="agent")
    bus.emit(PluginPayload(kind="plugin.demo.ping", data={"n": 1}), source="demo")
    assert [(e.type, e.source, e.payload) for e in seen] == [
        ("turn_started", "agent", TurnStarted(channel="chat"))
    ]
    await bus.close()
