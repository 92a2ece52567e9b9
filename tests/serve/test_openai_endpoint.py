"""The companion behind OpenAI's chat API, driven by the official `openai` client against
`python -m hologram serve` as a subprocess: its types are the oracle of what we send."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from hologram.serve.api import ENDPOINTS, OPENAI_ENDPOINTS
from tests.serve.harness import ScriptedModel, Service


def companion(service: Service, token: str = "unused-on-loopback") -> openai.OpenAI:
    return openai.OpenAI(base_url=service.url + "/v1", api_key=token, max_retries=0, timeout=60)


def journal(service: Service, ident: int) -> dict:
    with service.client() as http:
        return http.get(f"/inputs/{ident}").json()


def test_a_plain_completion_is_the_companions_reply_to_the_last_user_message(
    service: Service,
) -> None:
    completion = companion(service).chat.completions.create(
        model="hologram",
        messages=[
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "I love climbing"},
        ],
    )
    assert isinstance(completion, ChatCompletion)
    ChatCompletion.model_validate(completion.model_dump())  # strictly the wire type
    [choice] = completion.choices
    assert choice.message.role == "assistant" and choice.finish_reason == "stop"
    assert choice.message.content.startswith("(offline scripted model)")
    assert "I love climbing" in choice.message.content
    assert completion.usage is not None and completion.usage.total_tokens > 0
    ident = int(completion.id.removeprefix("chatcmpl-"))
    record = journal(service, ident)
    assert (record["text"], record["channel"], record["state"]) == (
        "I love climbing",
        "openai",
        "done",
    )
    assert record["reply"] == choice.message.content


def test_a_streamed_completion_arrives_as_chunks_and_only_the_last_message_is_new(
    service: Service,
) -> None:
    client = companion(service)
    client.chat.completions.create(
        model="hologram", messages=[{"role": "user", "content": "I love climbing"}]
    )
    stream = client.chat.completions.create(
        model="hologram",
        messages=[
            {"role": "user", "content": "I love climbing"},
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": [{"type": "text", "text": "What do I love?"}]},
        ],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert all(isinstance(c, ChatCompletionChunk) for c in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert "“I love climbing”" in text  # the companion answered from its own memory
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == "stop" and finishes.count("stop") == 1
    assert chunks[-1].usage is not None and chunks[-1].choices == []
    ident = int(chunks[0].id.removeprefix("chatcmpl-"))
    assert {c.id for c in chunks} == {chunks[0].id}
    record = journal(service, ident)
    assert (record["text"], record["channel"], record["reply"]) == (
        "What do I love?",
        "openai",
        text,
    )
    with service.client() as http:
        inputs = http.get("/status").json()["inputs"]
    assert sum(inputs.values()) == 2  # the earlier messages were not sent to the companion


def test_the_models_list_names_the_companion(service: Service) -> None:
    models = companion(service).models.list()
    assert [m.id for m in models.data] == ["hologram"]


def test_bad_requests_are_refused_in_openais_error_shape(service: Service) -> None:
    client = companion(service)
    with pytest.raises(openai.NotFoundError) as unknown:
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert "GET /v1/models" in unknown.value.message
    with pytest.raises(openai.BadRequestError) as not_user:
        client.chat.completions.create(
            model="hologram", messages=[{"role": "assistant", "content": "hi"}]
        )
    assert "the last message must be the user's" in not_user.value.message
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="hologram", messages=[])
    raw = httpx.post(
        service.url + "/v1/chat/completions",
        content=b'{"model": "hologram", "messages": [',
        headers={"content-type": "application/json"},
    )
    assert raw.status_code == 400
    assert raw.json()["error"]["type"] == "invalid_request_error"
    with service.client() as http:
        assert sum(http.get("/status").json()["inputs"].values()) == 0


def test_beyond_loopback_the_openai_client_sends_the_token_as_its_api_key(
    make_service: Callable[..., Service],
) -> None:
    service = make_service(host="0.0.0.0")
    token = (service.data_dir / "serve_token").read_text().strip()
    with pytest.raises(openai.AuthenticationError):
        companion(service, "wrong").models.list()
    answer = companion(service, token).chat.completions.create(
        model="hologram", messages=[{"role": "user", "content": "hello"}]
    )
    assert "hello" in answer.choices[0].message.content


def test_the_openai_door_is_routed_but_kept_out_of_the_apis_own_document(
    service: Service,
) -> None:
    with service.client() as http:
        document = http.get("/openapi.json").json()
    ids = {op["operationId"] for methods in document["paths"].values() for op in methods.values()}
    assert ids == {ep.operation_id for ep in ENDPOINTS}
    assert not ids & {ep.operation_id for ep in OPENAI_ENDPOINTS}
    assert all(ep.prefix == "/v1" for ep in OPENAI_ENDPOINTS)


def streamed(stream: openai.Stream[ChatCompletionChunk], meanwhile: Callable[[], None]) -> str:
    """The text of a streamed completion; `meanwhile` runs once its first text arrived."""
    text = ""
    for chunk in stream:
        piece = chunk.choices[0].delta.content if chunk.choices else None
        if piece and not text:
            meanwhile()
        text += piece or ""
    return text


def test_each_answer_of_a_turn_streams_after_a_blank_line_and_nothing_comes_twice(
    make_service: Callable[..., Service], model: ScriptedModel
) -> None:
    service = make_service(env=model.env)
    check = {"name": "coldcontext_commit", "arguments": {"content": "the clock says five"}}
    model.queue({"text": "Let me check.", "tool_calls": [check]}, {"text": "It is five."})
    stream = companion(service).chat.completions.create(
        model="hologram", messages=[{"role": "user", "content": "what time is it?"}], stream=True
    )
    assert streamed(stream, lambda: None) == "Let me check.\n\nIt is five."


def test_an_answer_cut_off_by_a_preemption_begins_again_after_a_blank_line(
    make_service: Callable[..., Service], model: ScriptedModel
) -> None:
    service = make_service(env=model.env)
    model.queue(
        {"text": "alpha beta gamma delta", "chunk_delay": 60},
        {"text": "I will mind the kettle"},
        {"text": "alpha once more, whole"},
    )

    def interrupt() -> None:
        with service.client() as http:
            answer = http.post("/interrupt", json={"text": "the kettle boils", "level": "L3"})
            assert answer.status_code == 202, answer.text

    stream = companion(service).chat.completions.create(
        model="hologram", messages=[{"role": "user", "content": "tell me slowly"}], stream=True
    )
    # What was sent of the cut-off answer cannot be taken back; the new one follows it.
    assert streamed(stream, interrupt) == "alpha \n\nalpha once more, whole"
