"""Each event of a turn carries its own input id, so the stream labels a preempted turn's
late reply with that turn's input, not with the input that started after it."""

from __future__ import annotations

import json

from hologram.sdk import Event, EventType
from hologram.serve.stream import EventStream


def labelled(stream: EventStream) -> list[tuple[str, int | None]]:
    frames = [json.loads(f.text.split("data: ", 1)[1]) for f in stream._ring]
    return [(f["type"], f["input"]) for f in frames if f["type"] != EventType.SCHEDULER]


def test_a_late_reply_is_labelled_with_its_own_input_not_the_running_one() -> None:
    stream = EventStream()
    scheduler = EventType.SCHEDULER
    stream.publish(Event(scheduler, {"action": "start", "task": 1, "at": 0.0}, seq=1))
    stream.publish(Event(scheduler, {"action": "preempt", "task": 1, "at": 0.0}, seq=2))
    stream.publish(Event(scheduler, {"action": "start", "task": 2, "at": 0.0}, seq=3))
    # Input 1's shielded ending delivers its reply while input 2 runs.
    stream.publish(Event(EventType.AGENT_OUTPUT, {"text": "one", "input_id": 1}, seq=4))
    stream.publish(Event(EventType.SYSTEM, {"kind": "note"}, seq=5))

    assert labelled(stream) == [(EventType.AGENT_OUTPUT, 1), (EventType.SYSTEM, 2)]
