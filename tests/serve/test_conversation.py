"""GET /conversation: what a page opens on, from the journal and the context window."""

from __future__ import annotations

from hologram.agent.journal import InputState, RecordRow
from hologram.memory import ContextEvent
from hologram.serve.conversation import merge
from tests.serve.harness import Service


def test_two_inputs_sent_over_the_api_are_the_conversation_a_page_opens_on(
    service: Service,
) -> None:
    with service.client() as client:
        for text in ("first question", "你好, second"):
            answered = client.post("/input/sync", json={"text": text, "timeout": 30})
            assert answered.status_code == 200, answered.text
        conversation = client.get("/conversation").json()
        lines = conversation["lines"]
        assert [(ln["text"], ln["input"], ln["state"]) for ln in lines] == [
            ("first question", 1, "done"),
            ("你好, second", 2, "done"),
        ]
        assert all(ln["in_window"] and ln["text"] in ln["reply"] for ln in lines)
        assert conversation["window_events"] == 4  # each input and its reply
        assert [ln["input"] for ln in client.get("/conversation?limit=1").json()["lines"]] == [2]
        refused = client.get("/conversation?limit=0")
        assert refused.status_code == 400 and "limit" in refused.json()["error"]


def record(ident: int, text: str, reply: str | None, created: float) -> RecordRow:
    return RecordRow(
        id=ident,
        text=text,
        channel="api",
        level=0,
        source="",
        state=InputState.DONE,
        reply=reply,
        created=created,
        finished=created + 1,
    )


def test_the_window_adds_what_no_input_of_the_journal_said_and_marks_what_it_forgot() -> None:
    records = [record(1, "old one", "old reply", 10.0), record(2, "hello", "hi there", 20.0)]
    events = [
        ContextEvent(timestamp=5.0, source="cold_storage", input="a trip to Iceland"),
        ContextEvent(timestamp=20.5, source="api", channel="api", input="hello"),
        ContextEvent(timestamp=21.0, source="agent", channel="api", response="hi there"),
    ]
    lines = merge(records, events)
    assert [(ln.text, ln.input, ln.in_window) for ln in lines] == [
        ("a trip to Iceland", None, True),  # recalled from the cold store: its own time
        ("old one", 1, False),  # pruned out of the window since
        ("hello", 2, True),
    ]
    assert lines[2].reply == "hi there"
