"""GET /events: every bus event as a server-sent event, resumable with Last-Event-ID."""

from __future__ import annotations

import httpx

from tests.serve.harness import ScriptedModel, Service, events


def test_the_stream_carries_each_model_round_and_the_reply_of_an_input(service: Service) -> None:
    with (
        service.client(timeout=10) as http,
        http.stream("GET", "/events", params={"types": "agent_llm_chain,agent_output"}) as stream,
    ):
        assert stream.headers["content-type"].startswith("text/event-stream")
        ident = http.post("/input", json={"text": "what is the weather"}).json()["id"]
        chain, output = list(events(stream, 2))
    assert chain["event"] == "agent_llm_chain"
    assert chain["data"]["input"] == ident
    assert chain["data"]["payload"]["round"] == 1
    assert "what is the weather" in chain["data"]["payload"]["text"]
    assert output["event"] == "agent_output"
    assert output["data"]["input"] == ident
    assert int(output["id"]) == output["data"]["seq"] > int(chain["id"])


def test_resume_with_last_event_id_sends_exactly_the_events_after_it(service: Service) -> None:
    with service.client(timeout=10) as http:
        with http.stream("GET", "/events") as stream:
            http.post("/input", json={"text": "one"})
            first = []
            for event in events(stream, 100):
                first.append(event)
                if event["event"] == "agent_output":
                    break
        resume_after = int(first[2]["id"])
        with http.stream("GET", "/events", headers={"Last-Event-ID": str(resume_after)}) as again:
            replayed = list(events(again, len(first) - 3))
    assert [int(e["id"]) for e in replayed] == [int(e["id"]) for e in first[3:]]
    assert [e["data"] for e in replayed] == [e["data"] for e in first[3:]]


def test_a_resume_from_before_the_ring_is_told_how_many_events_it_missed(
    service: Service,
) -> None:
    # Boot published events before the service subscribed: they were never in the ring.
    with service.client(timeout=10) as http:
        http.post("/input/sync", json={"text": "hello"}).raise_for_status()
        with http.stream("GET", "/events", params={"last_event_id": "0"}) as stream:
            gap, following = list(events(stream, 2))
    assert gap["event"] == "gap"
    assert gap["data"]["after"] == 0
    assert gap["data"]["missed"] == gap["data"]["oldest"] - 1 > 0
    assert int(following["id"]) == gap["data"]["oldest"]


def test_an_id_from_an_earlier_run_gets_a_reset_and_the_whole_ring(service: Service) -> None:
    with service.client(timeout=10) as http:
        http.post("/input/sync", json={"text": "hello"}).raise_for_status()
        with http.stream("GET", "/events", headers={"Last-Event-ID": "999999"}) as stream:
            reset, gap = list(events(stream, 2))
    assert reset["event"] == "reset"
    assert reset["data"]["last_event_id"] == 999999
    assert gap["event"] == "gap"


def test_a_malformed_last_event_id_is_refused(service: Service) -> None:
    answer = httpx.get(service.api + "/events", headers={"Last-Event-ID": "abc"}, timeout=10)
    assert answer.status_code == 400
    assert "Last-Event-ID" in answer.json()["error"]


def test_a_streamed_reply_reaches_an_sse_client_piece_by_piece_and_a_stop_keeps_the_partial(
    make_service, model: ScriptedModel
) -> None:
    """The first delta arrives while the model is still sending (each later piece waits 3 s
    at the model), so a stop sent on seeing it cuts the reply: what came is kept, as stopped."""
    service = make_service(env=model.env)
    model.queue({"text": "alpha beta gamma delta epsilon", "chunk_delay": 3})
    kinds = "agent_output_delta,turn_finished"
    with (
        service.client(timeout=30) as http,
        http.stream("GET", "/events", params={"types": kinds}) as stream,
    ):
        ident = http.post("/input", json={"text": "tell me slowly"}).json()["id"]
        seen = events(stream, 100)
        first = next(seen)
        assert first["event"] == "agent_output_delta"
        assert first["data"]["payload"]["input_id"] == ident
        assert http.post("/stop").json()["stopped"] == [ident]
        rest = []
        for event in seen:
            rest.append(event)
            if event["event"] == "turn_finished":
                break
    finished = rest[-1]["data"]["payload"]
    assert finished["ended_by"] == "stopped"
    pieces = [first, *rest[:-1]]
    text = "".join(e["data"]["payload"]["text"] for e in pieces)
    assert "alpha beta gamma delta epsilon".startswith(text) and text  # a part, never all
    assert len(text) < len("alpha beta gamma delta epsilon")
