"""Shutdown loses nothing: SIGTERM drains and flushes, SIGKILL is recovered at the next start.

The model is the scripted one in its own process, so a turn can be made to take as long as a
test needs, and its record of requests shows how often each input was put to the model.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import httpx

from tests.serve.harness import ScriptedModel, Service

DEADLINE_S = 60.0


def wait_for(check: Callable[[], bool], what: str) -> None:
    end = time.monotonic() + DEADLINE_S
    while time.monotonic() < end:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def journal(data_dir: Path) -> dict[int, tuple[str, str, str | None]]:
    """id -> (text, state, reply), read from the service's own SQLite file."""
    with sqlite3.connect(data_dir / "inputs.db") as db:
        rows = db.execute("SELECT id, text, state, reply FROM inputs ORDER BY id").fetchall()
    return {row[0]: (row[1], row[2], row[3]) for row in rows}


def wal_is_empty(path: Path) -> bool:
    wal = path.with_name(path.name + "-wal")
    return not wal.exists() or wal.stat().st_size == 0


def test_sigterm_refuses_new_input_lets_the_running_turn_finish_flushes_and_exits_0(
    make_service: Callable[..., Service], model: ScriptedModel
) -> None:
    model.queue({"text": "a slow answer", "delay": 1.5})
    service = make_service(env=model.env)
    with service.client() as http:
        ident = http.post("/input", json={"text": "take a while"}).json()["id"]
        wait_for(lambda: http.get("/status").json()["scheduler"]["running"] == ident, "the turn")
        assert service.process is not None
        service.process.send_signal(15)
        wait_for(lambda: not http.get("/status").json()["service"]["accepting_input"], "the drain")
        refused = http.post("/input", json={"text": "too late"})
    assert refused.status_code == 503
    assert "shutting down" in refused.json()["error"]
    assert service.process.wait(timeout=DEADLINE_S) == 0
    assert service.output is not None
    assert "hologram stopped" in service.output.text()
    assert journal(service.data_dir) == {ident: ("take a while", "done", "a slow answer")}
    for store in ("inputs.db", "config.db"):
        assert wal_is_empty(service.data_dir / store), store


def test_a_turn_past_the_drain_timeout_stays_in_the_journal_and_runs_at_the_next_start(
    make_service: Callable[..., Service], model: ScriptedModel
) -> None:
    model.queue({"text": "never heard", "delay": 60})
    first = make_service(env=model.env, drain_timeout=0.5)
    with first.client() as http:
        ident = http.post("/input", json={"text": "a long job"}).json()["id"]
        wait_for(lambda: http.get("/status").json()["scheduler"]["running"] == ident, "the turn")
    # The long reply is the model's only scripted one: it must go to this first run. On a
    # busy machine the turn can be running before its request reaches the model, and the
    # rerun would then draw the 60 s reply itself.
    wait_for(
        lambda: any("a long job" in text for text in model.asked()), "the model to get the request"
    )
    code, out, _ = first.terminate()
    assert code == 0
    assert "unfinished input left in the journal" in out
    assert journal(first.data_dir)[ident][1] in ("queued", "running")

    second = make_service(env=model.env)
    with second.client() as http:
        wait_for(lambda: http.get(f"/inputs/{ident}").json()["state"] == "done", "the rerun")
        record = http.get(f"/inputs/{ident}").json()
    assert "a long job" in record["reply"]  # the offline responder, once the script ran out


def test_after_sigkill_a_restart_runs_every_acknowledged_input_and_none_twice(
    make_service: Callable[..., Service], model: ScriptedModel
) -> None:
    model.queue(*({"text": f"answer {k}", "delay": 0.3} for k in range(4)))
    first = make_service(env=model.env)
    texts = [f"note number {k}" for k in range(8)]
    with first.client() as http:
        ids = [http.post("/input", json={"text": t}).json()["id"] for t in texts]

        def two_done() -> bool:
            return sum(http.get(f"/inputs/{i}").json()["state"] == "done" for i in ids) >= 2

        wait_for(two_done, "two inputs done")
    first.kill()
    before = journal(first.data_dir)
    assert sorted(before) == ids, "every acknowledged input is in the journal"
    done_before = {i for i, (_, state, _) in before.items() if state == "done"}
    assert 2 <= len(done_before) < len(ids)

    second = make_service(env=model.env)
    with second.client() as http:

        def all_done() -> bool:
            return all(http.get(f"/inputs/{i}").json()["state"] == "done" for i in ids)

        wait_for(all_done, "every input done after the restart")
    after = journal(second.data_dir)
    assert sorted(after) == ids, "recovery re-queues; it records nothing new"
    assert all(reply for _, _, reply in after.values())
    asked = Counter(model.asked())
    for ident in ids:
        text = before[ident][0]
        assert asked[text] >= 1, text
        if ident in done_before:
            assert asked[text] == 1, f"input {ident} finished before the kill and ran again"
    # Only an input cut off mid-turn by the kill is put to the model a second time.
    assert sum(n - 1 for n in asked.values() if n > 1) <= 1


def test_a_sync_request_waiting_at_shutdown_is_told_its_input_is_kept(
    make_service: Callable[..., Service], model: ScriptedModel
) -> None:
    model.queue({"text": "never heard", "delay": 60})
    service = make_service(env=model.env, drain_timeout=0.5)
    with httpx.Client(base_url=service.api, timeout=DEADLINE_S) as http:
        answers: list[httpx.Response] = []
        waiter = threading.Thread(
            target=lambda: answers.append(http.post("/input/sync", json={"text": "wait for me"}))
        )
        waiter.start()
        with service.client() as probe:
            wait_for(lambda: probe.get("/status").json()["scheduler"]["running"] == 1, "the turn")
        assert service.terminate()[0] == 0
        waiter.join(timeout=DEADLINE_S)
    assert answers[0].status_code == 503
    assert answers[0].json()["id"] == 1
    assert "runs when the service starts again" in answers[0].json()["error"]
