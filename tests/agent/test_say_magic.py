"""`%hologram say` and the `%%hologram` cell magic, through a real IPython shell."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from hologram.agent import TaskStopped
from hologram.llm import ScriptedModelServer, ScriptedReply
from hologram.notebook import Pending
from tests.agent.conftest import add_test_channel


@pytest.fixture
def shell(
    shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch, model: ScriptedModelServer
) -> InteractiveShell:
    # `%hologram start` reads the model source from the environment, as a user's would.
    monkeypatch.setenv("HOLOGRAM_LLM_BASE_URL", model.base_url)
    monkeypatch.setenv("HOLOGRAM_LLM_MODEL", "scripted-model")
    monkeypatch.setenv("HOLOGRAM_LLM_API_KEY", "sk-test")
    return shell


async def test_say_returns_a_handle_that_awaits_the_reply(
    shell: InteractiveShell,
    model: ScriptedModelServer,
    data_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    await shell.run_line_magic("hologram", f"start --data {data_dir}")
    model.queue_text("Hi, I am here.")
    handle = shell.run_line_magic("hologram", "say hello --verbose, are you there?")
    assert isinstance(handle, Pending)
    assert await handle == "Hi, I am here."
    assert model.last_request.json["messages"][-1]["content"] == "hello --verbose, are you there?"
    assert "Hi, I am here." in capsys.readouterr().out  # displayed when it arrived
    await shell.run_line_magic("hologram", "shutdown")


async def test_the_reply_cell_shows_the_reply_as_it_streams(
    shell: InteractiveShell,
    model: ScriptedModelServer,
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    await shell.run_line_magic("hologram", f"start --data {data_dir}")
    updates: list[tuple[float, str, bool]] = []  # (when, text/plain, whole answer)
    publish = shell.display_pub.publish

    def recorded(data: dict[str, str], *args: object, **kwargs: object) -> None:
        if kwargs.get("update"):
            updates.append((time.perf_counter(), data["text/plain"], "text/markdown" in data))
        publish(data, *args, **kwargs)

    monkeypatch.setattr(shell.display_pub, "publish", recorded)
    reply = "one two three four five"
    model.queue(ScriptedReply(text=reply, chunk_delay=0.2))
    assert await shell.run_line_magic("hologram", "say count to five") == reply
    partial = [(when, text) for when, text, whole in updates if not whole]
    assert [text for _, text, whole in updates if whole] == [reply]
    # The cell grew piece by piece, each time to more of the reply ...
    texts = [text for _, text in partial]
    assert len(texts) >= 3 and texts == sorted(texts, key=len) and texts[-1] == reply
    assert all(reply.startswith(text) for text in texts)
    # ... and its first piece showed while the model was still sending the rest.
    assert partial[0][0] < model.requests[-1].frames_sent_at[-1]
    await shell.run_line_magic("hologram", "shutdown")


async def test_a_hologram_cell_is_one_input_on_the_chosen_channel(
    shell: InteractiveShell, model: ScriptedModelServer, data_dir: Path
) -> None:
    kernel = await shell.run_line_magic("hologram", f"start --data {data_dir}")
    add_test_channel(kernel)
    model.queue_text("Noted.")
    handle = shell.run_cell_magic("hologram", "--channel test", "line one\nline two\n")
    assert await handle == "Noted."
    assert model.last_request.json["messages"][-1]["content"] == "line one\nline two"
    assert kernel.state.channels.get("test").handler.texts() == ["Noted."]
    with pytest.raises(UsageError, match="nothing to say"):
        shell.run_line_magic("hologram", "say")
    await shell.run_line_magic("hologram", "shutdown")


async def test_interrupt_stop_and_the_scheduler_widget_from_magics(
    shell: InteractiveShell, model: ScriptedModelServer, data_dir: Path
) -> None:
    await shell.run_line_magic("hologram", f"start --data {data_dir}")
    widget = shell.run_line_magic("hologram", "scheduler")
    model.queue(ScriptedReply(text="slow", delay=30)).queue_text("right away")
    slow = shell.run_line_magic("hologram", "say tell me everything")
    await asyncio.wait_for(model.wait_for_requests(1), 10)
    urgent = shell.run_line_magic("hologram", "interrupt --level L3 the oven is on fire")
    assert await asyncio.wait_for(urgent, 10) == "right away"
    assert model.requests[1].json["messages"][-1]["content"] == "the oven is on fire"
    assert 'data-level="3"' in widget.svg and 'data-mark="preempt"' in widget.svg
    covered = shell.run_line_magic("hologram", "stop")
    assert len(covered) == 1
    with pytest.raises(TaskStopped):
        await asyncio.wait_for(slow, 10)
    with pytest.raises(UsageError, match="unknown level 'L9'"):
        shell.run_line_magic("hologram", "interrupt --level L9 hi")
    widget.close()
    await shell.run_line_magic("hologram", "shutdown")


async def test_the_timeline_is_given_each_inputs_text_as_journaled_and_its_channel(
    shell: InteractiveShell, model: ScriptedModelServer, data_dir: Path
) -> None:
    kernel = await shell.run_line_magic("hologram", f"start --data {data_dir}")
    add_test_channel(kernel)
    widget = shell.run_line_magic("hologram", "scheduler")
    model.queue_text("Noted.")
    await shell.run_line_magic("hologram", "say --channel test remember the milk")
    # The widget also keeps the reply's streamed pieces (agent_output_delta entries).
    scheduler = [e["payload"] for e in widget.events if e["type"] == "scheduler"]
    (queued,) = [p for p in scheduler if p["action"] == "enqueue"]
    assert (queued["text"], queued["channel"], queued["level"]) == ("remember the milk", "test", 0)
    assert [p["action"] for p in scheduler] == ["enqueue", "start", "finish"]
    assert "remember the milk (test)" in widget.svg
    widget.close()
    await shell.run_line_magic("hologram", "shutdown")


async def test_a_secret_typed_into_an_input_reaches_the_timeline_masked(
    shell: InteractiveShell, model: ScriptedModelServer, data_dir: Path
) -> None:
    kernel = await shell.run_line_magic("hologram", f"start --data {data_dir}")
    secret = "hunter2-very-secret-value"
    await kernel.config.set("core.security.credential.mail.password", secret)
    widget = shell.run_line_magic("hologram", "scheduler")
    model.queue_text("Noted.")
    await shell.run_line_magic("hologram", f"say my mail password is {secret}")
    # The widget also keeps the reply's streamed pieces (agent_output_delta entries).
    scheduler = [e["payload"] for e in widget.events if e["type"] == "scheduler"]
    (queued,) = [p for p in scheduler if p["action"] == "enqueue"]
    assert queued["text"] == "my mail password is @{mail}"
    assert secret not in str(widget.events) and secret not in widget.svg
    widget.close()
    await shell.run_line_magic("hologram", "shutdown")
