"""`python -m hologram chat`: the terminal client, as a subprocess with piped stdin."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable

import pytest

from hologram.cli.chat import Chat
from hologram.sdk import AgentOutput, AgentOutputDelta
from hologram.serve.inputs import Ack
from tests.serve.harness import ScriptedModel, Service


def chat(service: Service, stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hologram", "chat", "--url", service.url],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=40,
    )


def test_chat_shows_the_reply_of_each_line_and_the_status(service: Service) -> None:
    run = chat(service, "hello there\n/status\n/interrupt L3 the kettle boils\n")
    assert run.returncode == 0, run.stderr
    out = run.stdout
    replies = {line.split("]", 1)[0]: line for line in out.splitlines() if "] hologram> " in line}
    assert "hello there" in replies["[#1"]
    assert "the kettle boils" in replies["[#2"]
    assert "(offline scripted model)" in replies["[#1"]
    assert "status: ready" in out
    assert "model: offline scripted model" in out


def test_chat_stop_stops_the_running_turn(
    make_service: Callable[..., Service], model: ScriptedModel
) -> None:
    model.queue({"text": "too late", "delay": 30})
    service = make_service(env=model.env)
    run = chat(service, "take your time\n/stop\n")
    assert run.returncode == 0, run.stderr
    assert "stopped: [1]" in run.stdout
    assert "[#1] (stopped)" in run.stdout
    assert "too late" not in run.stdout


def test_chat_types_a_reply_as_it_streams(
    make_service: Callable[..., Service], model: ScriptedModel
) -> None:
    words = ["one", "two", "three", "four", "five", "six"]
    model.queue({"text": " ".join(words), "chunk_delay": 0.5})
    service = make_service(env=model.env)
    process = subprocess.Popen(
        [sys.executable, "-m", "hologram", "chat", "--url", service.url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    seen: list[bytes] = []  # stdout as it came, read by read by a thread
    first_word_shown = threading.Event()
    shown_with_first_word: list[str] = []

    def read() -> None:
        fd = process.stdout.fileno()  # type: ignore[union-attr]
        while piece := os.read(fd, 4096):
            seen.append(piece)
            text = b"".join(seen).decode(errors="replace")  # a read may end mid-character
            if "hologram> one" in text and not first_word_shown.is_set():
                shown_with_first_word.append(text)
                first_word_shown.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        process.stdin.write(b"count to six\n")
        process.stdin.flush()
        assert first_word_shown.wait(30), b"".join(seen).decode()
        # When the first word was on the screen, the last was not yet: six words half a
        # second apart, so it came as the reply streamed, not with the whole reply.
        assert "six" not in shown_with_first_word[0]
        process.stdin.close()
        assert process.wait(timeout=40) == 0, process.stderr.read() if process.stderr else ""
    finally:
        if process.poll() is None:
            process.kill()
    reader.join(10)
    out = b"".join(seen).decode()
    assert out.count("[#1] hologram> one two three four five six\n") == 1, out


def test_chat_refuses_a_bad_interrupt_level_with_the_reason(service: Service) -> None:
    run = chat(service, "/interrupt L9 now\n/interrupt\n")
    assert run.returncode == 0, run.stderr
    assert "! 'level' must be 0-3" in run.stdout
    assert "! usage: /interrupt L1|L2|L3 TEXT" in run.stdout


def test_chat_says_when_the_service_is_unreachable() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "hologram", "chat", "--url", "http://127.0.0.1:9"],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1
    assert "cannot reach http://127.0.0.1:9/api/v1" in run.stderr


def test_a_line_written_while_a_reply_streams_does_not_split_the_reply(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The acknowledgement of the next input can arrive between two deltas of a reply."""
    session = Chat(client=None)  # type: ignore[arg-type]  # no request is made
    session.owed.add(1)
    session.type_out(AgentOutputDelta(input_id=1, round=0, text="(offline "))
    session.sent(Ack(id=2, level=0))
    session.type_out(AgentOutputDelta(input_id=1, round=0, text="scripted model) hello there"))
    session.show_reply(1, AgentOutput(text="(offline scripted model) hello there"))
    lines = capsys.readouterr().out.splitlines()
    assert "[#2] sent" in lines
    assert lines[-1] == "[#1] hologram> (offline scripted model) hello there"
