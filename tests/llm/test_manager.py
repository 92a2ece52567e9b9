"""ProviderManager: sources from config, ordered fallback, availability, events, switching."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from pathlib import Path

import pytest

from hologram.config import ConfigRegistry
from hologram.kernel import ManualClock
from hologram.llm import (
    AllProvidersFailed,
    ChatMessage,
    CompletionRequest,
    ProviderError,
    ProviderManager,
    ScriptedModelServer,
    ScriptedReply,
)
from hologram.sdk import (
    EventType,
    to_wire,
)

from .conftest import Recorder, add_source
from .golden import collect

HELLO = CompletionRequest([ChatMessage.user("hello")])


async def two_sources(
    config: ConfigRegistry, first: ScriptedModelServer, second: ScriptedModelServer
) -> None:
    await add_source(config, "first", first.base_url)
    await add_source(config, "second", second.base_url)
    await config.set("core.llm.source_order", ["first", "second"])
    await config.set("core.llm.active_source", "first")


async def test_sources_come_from_config_in_the_configured_order(
    config: ConfigRegistry, manager: ProviderManager, server, second_server
) -> None:
    await add_source(config, "zeta", server.base_url)
    await add_source(config, "alpha", second_server.base_url)
    await add_source(config, "mid", second_server.base_url)
    await config.set("core.llm.sources.default.base_url", server.base_url)
    await config.set("core.llm.source_order", ["zeta", "default"])
    await config.set("core.llm.active_source", "mid")
    await manager.refresh()
    # The active source first, then source_order, then the unlisted ones alphabetically.
    assert manager.ordered_sources() == ["mid", "zeta", "default", "alpha"]
    assert manager.provider("zeta").source.model == "model-zeta"
    assert manager.provider("zeta").source.api_key == "key-zeta"


async def test_a_401_falls_back_and_the_source_stays_out_until_its_config_changes(
    config: ConfigRegistry,
    manager: ProviderManager,
    recorder: Recorder,
    server: ScriptedModelServer,
    second_server: ScriptedModelServer,
) -> None:
    await two_sources(config, server, second_server)
    server.queue(ScriptedReply(status=401, text="invalid api key"))
    second_server.queue_text("from second").queue_text("second again")

    response = await manager.chat(HELLO)
    assert (response.content, response.source) == ("from second", "second")
    [unavailable] = recorder.of(EventType.PROVIDER_UNAVAILABLE)
    assert unavailable.payload.llm_source == "first"
    assert unavailable.payload.kind == "auth" and unavailable.payload.until_config_changes
    [fallback] = recorder.of(EventType.PROVIDER_FALLBACK)
    assert to_wire(fallback.payload) == {
        "llm_source": "second",
        "first_choice": "first",
        "failed": ["first"],
    }

    # However long we wait, the refused key is not tried again...
    await manager.chat(HELLO)
    assert len(server.requests) == 1
    assert recorder.of(EventType.PROVIDER_SKIPPED)[0].payload.llm_source == "first"
    # ...until its config changes.
    await config.set("core.llm.sources.first.api_key", "a-new-key")
    server.queue_text("first, with a new key")
    response = await manager.chat(HELLO)
    assert (response.content, response.source) == ("first, with a new key", "first")
    assert server.last_request.headers["authorization"] == "Bearer a-new-key"


@pytest.mark.parametrize(
    "failure",
    [
        ScriptedReply(status=429, text="slow down"),
        ScriptedReply(status=503, text="overloaded"),
        ScriptedReply(body="not json at all"),
    ],
    ids=["429", "5xx", "malformed"],
)
async def test_transient_failures_back_off_and_the_source_is_tried_again_later(
    config: ConfigRegistry,
    manager: ProviderManager,
    recorder: Recorder,
    clock: ManualClock,
    server: ScriptedModelServer,
    second_server: ScriptedModelServer,
    failure: ScriptedReply,
) -> None:
    await two_sources(config, server, second_server)
    server.queue(failure)
    second_server.queue_text("b1").queue_text("b2")
    assert (await manager.chat(HELLO)).source == "second"
    [unavailable] = recorder.of(EventType.PROVIDER_UNAVAILABLE)
    assert unavailable.payload.retry_in == 5.0 and not unavailable.payload.until_config_changes

    assert (await manager.chat(HELLO)).source == "second"  # still backing off: skipped
    assert len(server.requests) == 1

    await clock.advance(5.0)
    server.queue_text("first is back")
    response = await manager.chat(HELLO)
    assert (response.content, response.source) == ("first is back", "first")
    assert [e.payload.llm_source for e in recorder.of(EventType.PROVIDER_RECOVERED)] == ["first"]


async def test_the_backoff_doubles_with_each_failure_in_a_row(
    config: ConfigRegistry,
    manager: ProviderManager,
    recorder: Recorder,
    clock: ManualClock,
    server: ScriptedModelServer,
    second_server: ScriptedModelServer,
) -> None:
    await two_sources(config, server, second_server)
    for _ in range(3):
        server.queue(ScriptedReply(status=500))
        second_server.queue_text("b")
        await manager.chat(HELLO)
        await clock.advance(60)
    pauses = [e.payload.retry_in for e in recorder.of(EventType.PROVIDER_UNAVAILABLE)]
    assert pauses == [5.0, 10.0, 20.0]


async def test_a_hanging_server_times_out_and_the_next_source_answers(
    config: ConfigRegistry,
    manager: ProviderManager,
    recorder: Recorder,
    server: ScriptedModelServer,
    second_server: ScriptedModelServer,
) -> None:
    await two_sources(config, server, second_server)
    await config.set("core.llm.sources.first.timeout_s", 0.3)
    server.queue(ScriptedReply(text="after 30 s", delay=30))
    second_server.queue_text("I answer")
    response = await manager.chat(HELLO)
    assert (response.content, response.source) == ("I answer", "second")
    [unavailable] = recorder.of(EventType.PROVIDER_UNAVAILABLE)
    assert unavailable.payload.kind == "timeout"


async def test_a_broken_adapter_output_marks_the_source_and_fallback_continues(
    config: ConfigRegistry,
    manager: ProviderManager,
    recorder: Recorder,
    tmp_path: Path,
    server: ScriptedModelServer,
    second_server: ScriptedModelServer,
) -> None:
    (tmp_path / "adapters").mkdir()
    (tmp_path / "adapters" / "bent.lua").write_text(
        'local a = {name = "bent", version = "1", endpoint = "/chat/completions", headers = {}}\n'
        "function a.transform_request(raw) return raw end\n"
        "function a.transform_response(raw) return 'not json' end\nreturn a\n"
    )
    await two_sources(config, server, second_server)
    await config.set("core.llm.sources.first.adapter", "bent")
    server.queue_text("the server is fine")
    second_server.queue_text("second")
    assert (await manager.chat(HELLO)).source == "second"
    [unavailable] = recorder.of(EventType.PROVIDER_UNAVAILABLE)
    assert unavailable.payload.kind == "bad_response"
    assert "adapter 'bent'" in unavailable.payload.reason
    assert "transform_response" in unavailable.payload.reason


async def test_when_every_source_fails_one_error_names_each_and_why(
    config: ConfigRegistry,
    manager: ProviderManager,
    recorder: Recorder,
    server: ScriptedModelServer,
    second_server: ScriptedModelServer,
) -> None:
    await two_sources(config, server, second_server)
    await add_source(config, "third", "ftp://nowhere")
    server.queue(ScriptedReply(status=401, text="bad key"))
    second_server.queue(ScriptedReply(status=500, text="boom"))
    with pytest.raises(AllProvidersFailed) as caught:
        await manager.chat(HELLO)
    message = str(caught.value)
    assert "first: HTTP 401" in message and "bad key" in message
    assert "second: HTTP 500" in message and "boom" in message
    assert "third: skipped" in message
    assert "core.llm.sources.third.base_url must start with http:// or https://" in message
    assert [name for name, _ in caught.value.failures] == ["third", "first", "second"]
    assert len(recorder.of(EventType.PROVIDERS_EXHAUSTED)) == 1


async def test_when_every_source_is_backing_off_they_are_tried_anyway(
    config: ConfigRegistry,
    manager: ProviderManager,
    recorder: Recorder,
    server: ScriptedModelServer,
) -> None:
    await add_source(config, "only", server.base_url)
    await config.set("core.llm.active_source", "only")
    await config.set("core.llm.source_order", ["only"])
    server.queue(ScriptedReply(status=429), ScriptedReply(text="ok now"))
    with pytest.raises(AllProvidersFailed):
        await manager.chat(HELLO)
    response = await manager.chat(HELLO)  # no time has passed, but nothing else is left
    assert response.content == "ok now"
    assert any("trying" in e.payload.reason for e in recorder.of(EventType.PROVIDER_SKIPPED))


async def test_a_cancelled_call_does_not_count_against_the_source(
    config: ConfigRegistry,
    manager: ProviderManager,
    recorder: Recorder,
    server: ScriptedModelServer,
    second_server: ScriptedModelServer,
) -> None:
    await two_sources(config, server, second_server)
    server.queue(ScriptedReply(text="slow", delay=10))
    call = asyncio.create_task(manager.chat(HELLO))
    async with asyncio.timeout(5):
        await server.wait_for_requests(1)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    async with asyncio.timeout(5):
        await server.wait_for_disconnect()
    assert recorder.of(EventType.PROVIDER_UNAVAILABLE) == []
    assert second_server.requests == []  # a cancellation is not a reason to fall back


async def test_the_active_source_can_be_switched_at_runtime(
    config: ConfigRegistry,
    manager: ProviderManager,
    recorder: Recorder,
    server: ScriptedModelServer,
    second_server: ScriptedModelServer,
) -> None:
    await two_sources(config, server, second_server)
    server.queue_text("one")
    second_server.queue_text("two")
    assert (await manager.chat(HELLO)).source == "first"
    await manager.set_active("second")
    assert config.get("core.llm.active_source") == "second"
    assert (await manager.chat(HELLO)).source == "second"
    [switched] = recorder.of(EventType.PROVIDER_SWITCHED)
    assert to_wire(switched.payload) == {"llm_source": "second", "previous": "first"}
    with pytest.raises(ValueError, match="no LLM source 'thrid'; sources: first, second"):
        await manager.set_active("thrid")


async def test_a_stream_falls_back_before_its_first_chunk(
    config: ConfigRegistry,
    manager: ProviderManager,
    recorder: Recorder,
    server: ScriptedModelServer,
    second_server: ScriptedModelServer,
) -> None:
    await two_sources(config, server, second_server)
    server.queue(ScriptedReply(status=502, text="bad gateway"))
    second_server.queue_text("streamed from second")
    chunks = await collect(manager.chat_stream(HELLO))
    assert "".join(c.content for c in chunks) == "streamed from second"
    assert chunks[-1].response is not None and chunks[-1].response.source == "second"
    assert len(recorder.of(EventType.PROVIDER_FALLBACK)) == 1


async def test_a_stream_that_breaks_after_text_was_shown_fails_instead_of_switching(
    config: ConfigRegistry,
    manager: ProviderManager,
    server: ScriptedModelServer,
    second_server: ScriptedModelServer,
) -> None:
    await two_sources(config, server, second_server)
    good = 'data: {"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}'
    server.queue(ScriptedReply(lines=[good, "", "data: {broken", ""]))
    second_server.queue_text("never used")
    received: list[str] = []
    with pytest.raises(ProviderError, match="the HTTP body is not JSON"):
        async for chunk in manager.chat_stream(HELLO):
            received.append(chunk.content)
    assert received == ["Hel"] and second_server.requests == []


async def test_the_budget_follows_the_first_source(
    config: ConfigRegistry,
    manager: ProviderManager,
    server: ScriptedModelServer,
) -> None:
    await add_source(config, "big", server.base_url, model="gemini-1.5-pro")
    await config.set("core.llm.active_source", "big")
    await manager.refresh()
    assert manager.max_context_tokens == 2_097_152
    budget = manager.budget(fixed_tokens=3_000)
    assert budget.target == 600_000  # capped working band
    assert budget.memory == (600_000 - 3_000) // 3
    await config.set("core.llm.sources.big.context_window", 100_000)
    await manager.refresh()
    assert manager.budget().target == 80_000  # a declared window wins


async def test_the_offline_model_stands_in_only_while_no_source_is_configured(
    config: ConfigRegistry,
    manager: ProviderManager,
    recorder: Recorder,
    server: ScriptedModelServer,
) -> None:
    response = await manager.chat(HELLO)
    assert response.source == "default" and response.model == "offline-scripted"
    assert "offline scripted model" in response.content
    [offline] = recorder.of(EventType.PROVIDER_OFFLINE)
    assert offline.payload.base_url == manager.offline_server.base_url  # type: ignore[union-attr]
    await add_source(config, "real", server.base_url)
    server.queue_text("a real answer")
    response = await manager.chat(HELLO)
    assert (response.content, response.source) == ("a real answer", "real")
    assert manager.ordered_sources() == ["real"]


async def test_an_unknown_models_guessed_window_is_warned_about_once_per_model(
    config: ConfigRegistry,
    manager: ProviderManager,
    server: ScriptedModelServer,
    second_server: ScriptedModelServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await two_sources(config, server, second_server)
    await manager.refresh()

    def warned() -> list[str]:
        return [
            r.getMessage().split("'")[1]
            for r in caplog.records
            if "has no known context window" in r.getMessage()
        ]

    with caplog.at_level(logging.WARNING, logger="hologram.llm"):
        for _ in range(5):  # the agent asks on every turn
            manager.budget()
        assert warned() == ["model-first"]

        await manager.set_active("second")
        manager.budget()
        manager.budget()
        assert warned() == ["model-first", "model-second"]

        # A source rebuilt after a config change still runs the same model: no new warning.
        await manager.set_active("first")
        await config.set("core.llm.sources.first.api_key", "key-rotated")
        await manager.refresh()
        manager.budget()
        assert warned() == ["model-first", "model-second"]


async def test_a_skipped_source_is_announced_in_the_log_and_on_the_bus(
    config: ConfigRegistry,
    manager: ProviderManager,
    recorder: Recorder,
    server: ScriptedModelServer,
    second_server: ScriptedModelServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await two_sources(config, server, second_server)
    server.queue(ScriptedReply(status=403, text="forbidden"))
    second_server.queue_text("one").queue_text("two")
    await manager.chat(HELLO)

    with caplog.at_level(logging.INFO, logger="hologram.llm"):
        response = await manager.chat(HELLO)

    assert response.source == "second"
    [line] = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert line.startswith("LLM source first skipped: ")
    [skipped] = recorder.of(EventType.PROVIDER_SKIPPED)
    assert skipped.payload.llm_source == "first" and skipped.payload.reason


async def test_an_adapter_added_edited_or_removed_is_used_at_the_next_call(
    config: ConfigRegistry, manager: ProviderManager, server: ScriptedModelServer, tmp_path: Path
) -> None:
    """Sources are rebuilt only when something they are built from changed: a setting, or
    an adapter file. Nothing but the file changes here."""
    await add_source(config, "first", server.base_url)
    shipped = (manager.adapters.shipped_dir / "openai.lua").read_text()
    override = tmp_path / "adapters" / "openai.lua"

    async def tag_sent() -> object:
        server.queue_text("ok")
        await manager.chat(HELLO)
        return json.loads(server.last_request.body).get("tag")

    assert await tag_sent() is None
    override.parent.mkdir()
    override.write_text(shipped.replace("body.temperature = req.temperature", 'body.tag = "one"'))
    assert await tag_sent() == "one"
    assert await tag_sent() == "one"
    override.write_text(shipped.replace("body.temperature = req.temperature", 'body.tag = "two"'))
    stamp = override.stat().st_mtime_ns + 1_000_000_000  # a coarse clock may not move
    os.utime(override, ns=(stamp, stamp))
    assert await tag_sent() == "two"
    override.unlink()
    assert await tag_sent() is None


# ---- retries within a source ------------------------------------------------------------------


async def retry_settings(config: ConfigRegistry, **settings: object) -> None:
    """Retry settings for a test, with no jitter so each wait is exactly the rule's."""
    await config.set("core.llm.retry_jitter", 0.0)
    for key, value in settings.items():
        await config.set(f"core.llm.{key}", value)


async def test_a_source_that_said_when_is_asked_again_only_once_that_time_has_passed(
    config: ConfigRegistry,
    manager: ProviderManager,
    recorder: Recorder,
    clock: ManualClock,
    server: ScriptedModelServer,
    second_server: ScriptedModelServer,
) -> None:
    await two_sources(config, server, second_server)
    await retry_settings(config)
    # 2.5 s names the delay in milliseconds too (retry-after-ms), which wins over the
    # whole seconds of Retry-After (3).
    server.queue(ScriptedReply(error="rate_limited", retry_after=2.5), ScriptedReply(text="ok"))
    call = asyncio.create_task(manager.chat(HELLO))
    retry = await recorder.nth(EventType.PROVIDER_RETRY, 1)
    assert retry.payload.wait == 2.5 and retry.payload.attempt == 1
    assert clock.sleepers == 1  # the wait before asking again
    await clock.advance(2.4)
    assert clock.sleepers == 1 and len(server.requests) == 1 and not call.done()
    await clock.advance(0.1)
    async with asyncio.timeout(5):
        response = await call
    assert (response.content, response.source) == ("ok", "first")
    assert len(server.requests) == 2 and second_server.requests == []


async def test_a_delay_longer_than_the_longest_retry_wait_goes_to_the_next_source_at_once(
    config: ConfigRegistry,
    manager: ProviderManager,
    recorder: Recorder,
    server: ScriptedModelServer,
    second_server: ScriptedModelServer,
) -> None:
    await two_sources(config, server, second_server)
    await retry_settings(config, retry_wait_max_s=20.0)
    server.queue(ScriptedReply(error="rate_limited", retry_after=21))
    second_server.queue_text("from second")
    async with asyncio.timeout(5):
        response = await manager.chat(HELLO)
    assert response.source == "second" and len(server.requests) == 1
    assert recorder.of(EventType.PROVIDER_RETRY) == []


async def test_a_source_is_asked_again_at_most_core_llm_retries_times(
    config: ConfigRegistry,
    manager: ProviderManager,
    recorder: Recorder,
    server: ScriptedModelServer,
    second_server: ScriptedModelServer,
) -> None:
    await two_sources(config, server, second_server)
    await retry_settings(config, retries=2)
    server.queue(*[ScriptedReply(error="rate_limited", retry_after=0) for _ in range(3)])
    second_server.queue_text("from second")
    async with asyncio.timeout(5):
        response = await manager.chat(HELLO)
    assert response.source == "second" and len(server.requests) == 3
    assert [e.payload.attempt for e in recorder.of(EventType.PROVIDER_RETRY)] == [1, 2]


async def test_a_retry_that_would_pass_the_calls_deadline_is_not_waited_for(
    config: ConfigRegistry,
    manager: ProviderManager,
    recorder: Recorder,
    clock: ManualClock,
    server: ScriptedModelServer,
    second_server: ScriptedModelServer,
) -> None:
    await two_sources(config, server, second_server)
    await retry_settings(config, call_deadline_s=10.0)
    # The first wait fits in the call's ten seconds; the second would end past them.
    server.queue(
        ScriptedReply(error="rate_limited", retry_after=6),
        ScriptedReply(error="rate_limited", retry_after=6),
    )
    second_server.queue_text("from second")
    call = asyncio.create_task(manager.chat(HELLO))
    await recorder.nth(EventType.PROVIDER_RETRY, 1)
    await clock.advance(6)
    async with asyncio.timeout(5):
        response = await call
    assert response.source == "second" and len(server.requests) == 2
    assert len(recorder.of(EventType.PROVIDER_RETRY)) == 1


async def test_an_overloaded_source_that_named_no_delay_waits_a_doubling_one(
    config: ConfigRegistry,
    manager: ProviderManager,
    recorder: Recorder,
    clock: ManualClock,
    server: ScriptedModelServer,
) -> None:
    await config.set("core.llm.sources.default.base_url", server.base_url)
    await retry_settings(config, overloaded_delay_s=1.5)
    server.queue(ScriptedReply(status=529), ScriptedReply(status=529), ScriptedReply(text="ok"))
    call = asyncio.create_task(manager.chat(HELLO))
    for count in (1, 2):
        await clock.advance((await recorder.nth(EventType.PROVIDER_RETRY, count)).payload.wait)
    async with asyncio.timeout(5):
        assert (await call).content == "ok"
    assert [e.payload.wait for e in recorder.of(EventType.PROVIDER_RETRY)] == [1.5, 3.0]
    assert {e.payload.kind for e in recorder.of(EventType.PROVIDER_RETRY)} == {"overloaded"}
