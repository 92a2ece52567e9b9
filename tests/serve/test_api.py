"""Every endpoint of /api/v1, over real HTTP to the service in its own process."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest

from tests.serve.harness import ScriptedModel, Service


def test_the_service_takes_input_once_memory_can_answer(service: Service) -> None:
    # The ready line is the last the start prints; memory's comes before it.
    assert service.lines[-1].startswith("hologram ready")
    assert any(line.startswith("memory ready in") for line in service.lines[:-1])
    with service.client() as http:
        said = http.post("/input/sync", json={"text": "my kite is blue"})
        assert said.status_code == 200 and said.json()["ended_by"] == "answer", said.text


def test_the_server_serves_an_openapi_document_naming_every_endpoint(service: Service) -> None:
    with service.client() as http:
        document = http.get("/openapi.json").json()
    assert document["openapi"].startswith("3.")
    assert set(document["paths"]) == {
        "/input",
        "/input/sync",
        "/inputs/{id}",
        "/interrupt",
        "/stop",
        "/conversation",
        "/status",
        "/health",
        "/settings",
        "/events",
        "/context",
        "/coldcontext",
        "/coldcontext/query",
        "/memory",
        "/graph",
        "/graph/entities",
        "/graph/entities/{name}",
        "/graph/facts",
        "/graph/recall",
        "/knowledge",
        "/knowledge/search",
        "/knowledge/entries/{name}",
        "/plugins",
        "/plugins/{name}",
        "/plugins/{name}/enable",
        "/plugins/{name}/disable",
        "/plugins/{name}/reload",
        "/llm/sources",
        "/llm/source",
        "/changes",
        "/changes/{id}/undo",
        "/media/{digest}",
        "/openapi.json",
    }
    assert set(document["paths"]["/settings"]) == {"get", "put"}
    assert set(document["paths"]["/plugins"]) == {"get", "post"}


def test_input_is_acknowledged_with_the_journal_id_and_then_runs(service: Service) -> None:
    with service.client() as http:
        ack = http.post("/input", json={"text": "first note"})
        assert ack.status_code == 202
        ident = ack.json()["id"]
        assert http.get(f"/inputs/{ident}").json()["text"] == "first note"
        # The sync call after it queues behind it: once it is answered, the first one is too.
        http.post("/input/sync", json={"text": "second note"}).raise_for_status()
        record = http.get(f"/inputs/{ident}").json()
    assert record["state"] == "done"
    assert "first note" in record["reply"]
    assert record["channel"] == "http"


def test_input_sync_returns_the_reply_of_that_input(service: Service) -> None:
    with service.client() as http:
        result = http.post("/input/sync", json={"text": "tell me about tea"}).json()
    assert result["ended_by"] == "answer"
    assert "tell me about tea" in result["reply"]
    assert result["channel"] == "http"
    assert result["delivered"] is True


def test_status_says_the_offline_model_answers_when_no_llm_is_configured(
    service: Service,
) -> None:
    [start_line] = [line for line in service.lines if "offline scripted model" in line]
    with service.client() as http:
        status = http.get("/status").json()
        reply = http.post("/input/sync", json={"text": "hello"}).json()["reply"]
    assert status["llm"]["offline"] is True
    # One spelling of the LLM setting: the start line, /status and the reply.
    hint = status["llm"]["hint"]
    assert "core.llm.sources.default.base_url" in hint and "HOLOGRAM_LLM_BASE_URL" in hint
    assert hint in start_line and hint in reply
    assert status["kernel"]["phase"] == "ready"
    assert status["kernel"]["layers"]
    assert set(status["scheduler"]) >= {"running", "stack", "queue", "pending_inputs"}
    assert set(status["memory"]) == {"context_events", "cold_documents", "text_log_files"}
    assert status["service"]["auth"] == "loopback"
    assert status["service"]["accepting_input"] is True


def test_interrupt_takes_l1_to_l3_and_refuses_l4_and_queued(service: Service) -> None:
    with service.client() as http:
        ok = http.post("/interrupt", json={"text": "urgent", "level": "L3"})
        assert ok.status_code == 202
        assert ok.json()["level"] == 3
        assert http.post("/interrupt", json={"text": "default"}).json()["level"] == 1
        l4 = http.post("/interrupt", json={"text": "x", "level": 4})
        queued = http.post("/interrupt", json={"text": "x", "level": 0})
    assert l4.status_code == 400
    assert "kernel-exclusive" in l4.json()["error"]
    assert queued.status_code == 400
    assert "POST /input" in queued.json()["error"]


def test_stop_answers_with_the_ids_it_covers(service: Service) -> None:
    with service.client() as http:
        stopped = http.post("/stop")
    assert stopped.status_code == 200
    assert stopped.json() == {"stopped": []}


def test_settings_list_masks_secrets_and_names_sources(service: Service) -> None:
    with service.client() as http:
        http.put(
            "/settings", json={"key": "core.llm.sources.default.api_key", "value": "sk-real"}
        ).raise_for_status()
        listing = http.get("/settings", params={"prefix": "core."}).json()
    by_key = {s["key"]: s for s in listing["settings"]}
    assert all(key.startswith("core.") for key in by_key)
    secret = by_key["core.llm.sources.default.api_key"]
    assert secret["value"] == "****"
    assert secret["secret"] is True
    assert "sk-real" not in str(listing)
    assert by_key["core.agent.max_tool_rounds"]["source"] == "default"
    assert isinstance(listing["plugins"], list)


def test_settings_put_stores_a_typed_value_or_parses_text(service: Service) -> None:
    with service.client() as http:
        typed = http.put("/settings", json={"key": "core.agent.max_tool_rounds", "value": 7})
        text = http.put("/settings", json={"key": "core.agent.child_max_tool_rounds", "text": "3"})
        listing = http.get("/settings", params={"prefix": "core.agent."}).json()
    assert typed.json()["value"] == 7
    assert text.json()["value"] == 3
    by_key = {s["key"]: s for s in listing["settings"]}
    assert by_key["core.agent.max_tool_rounds"] == {
        **by_key["core.agent.max_tool_rounds"],
        "value": 7,
        "source": "stored",
    }


def test_settings_put_refuses_invalid_keys_and_values_with_the_registry_message(
    service: Service,
) -> None:
    with service.client() as http:
        bad_key = http.put("/settings", json={"key": "llm.model", "value": "x"})
        bad_value = http.put(
            "/settings", json={"key": "core.agent.max_tool_rounds", "value": "ten"}
        )
        the_mask = http.put(
            "/settings", json={"key": "core.llm.sources.default.api_key", "value": "****"}
        )
    assert bad_key.status_code == 400
    assert "invalid configuration key 'llm.model'" in bad_key.json()["error"]
    assert bad_value.status_code == 400
    assert "expects int" in bad_value.json()["error"]
    assert the_mask.status_code == 400
    assert "real value" in the_mask.json()["error"]


def test_settings_put_refuses_a_key_nobody_reads_naming_the_closest(service: Service) -> None:
    with service.client() as http:
        typo = http.put("/settings", json={"key": "core.llm.bakoff_s", "value": 1.0})
        plugin = http.put("/settings", json={"key": "plugin.files.rot", "value": "x"})
        listed = http.get("/settings", params={"prefix": "core.llm.bakoff"}).json()
    assert typo.status_code == 400
    assert "did you mean core.llm.backoff_s" in typo.json()["error"]
    assert plugin.status_code == 400 and "plugin.files.root" in plugin.json()["error"]
    assert listed["settings"] == [], "nothing was stored"


def test_context_memory_and_coldcontext_read_what_a_turn_left(service: Service) -> None:
    with service.client() as http:
        http.post("/input/sync", json={"text": "the kettle is blue"}).raise_for_status()
        context = http.get("/context", params={"limit": 10}).json()
        memory = http.get("/memory").json()
        cold = http.get("/coldcontext", params={"contains": "kettle"}).json()
        bad_limit = http.get("/context", params={"limit": "many"})
    inputs = [e["input"] for e in context["events"]]
    assert "the kettle is blue" in inputs
    assert any("the kettle is blue" in e["response"] for e in context["events"])
    assert memory["context_events"] == context["total"] >= 2
    assert cold["total"] >= cold["matched"] >= 0
    assert bad_limit.status_code == 400
    assert "'limit' must be an integer" in bad_limit.json()["error"]


def test_unknown_paths_and_inputs_get_json_errors_that_point_the_way(service: Service) -> None:
    with service.client() as http:
        missing = http.get("/nothing")
        no_input = http.get("/inputs/999999")
        wrong_method = http.delete("/status")
    assert missing.status_code == 404
    assert "openapi.json" in missing.json()["error"]
    assert no_input.status_code == 404
    assert re.search(r"no input 999999", no_input.json()["error"])
    assert wrong_method.status_code == 405


def test_bad_input_bodies_are_refused_saying_what_is_wrong(service: Service) -> None:
    cases = [
        ({"text": 5}, "'text' must be a string, not int"),
        ({"text": "  "}, "'text' is empty"),
        ({}, "'text' is required"),
        ([1, 2], "must be a JSON object, not list"),
        ({"text": "x", "channel": "nowhere"}, "no output channel 'nowhere'"),
        ({"text": "x", "colour": "red"}, "unknown field(s) ['colour']"),
        ({"text": "x", "level": "urgent"}, "'level' must be 0-3"),
        ({"text": "x", "timeout": -1}, "'timeout' must be seconds"),
    ]
    with service.client() as http:
        for body, message in cases:
            answer = http.post("/input", json=body)
            assert answer.status_code == 400, body
            assert message in answer.json()["error"], (body, answer.json())
        counts = http.get("/status").json()["inputs"]
    assert counts == {}, "a refused input is never recorded"


def test_the_service_keeps_what_boot_built_out_of_full_garbage_collections(
    service: Service,
) -> None:
    # A full pass over boot's several hundred thousand objects held the loop for 110-400 ms
    # under load (benchmarks/serve_load.py): every acknowledgement then waited as long.
    with service.client() as http:
        frozen = http.get("/status").json()["service"]["boot_heap_frozen"]
    assert frozen > 10_000


def test_status_totals_the_models_tokens_and_cost_per_source_day_and_channel(
    make_service: Callable[..., Service], model: ScriptedModel
) -> None:
    service = make_service(env=model.env)
    # The scripted model answers as "offline-scripted": priced by its prefix.
    prices = {"offline": {"input": 2.0, "cached": 1.0, "output": 8.0}}
    model.queue({"text": "the kite is blue", "cached_tokens": 3, "reasoning_tokens": 2})
    with service.client() as http:
        assert http.put("/settings", json={"key": "core.llm.prices", "value": prices}).is_success
        said = http.post("/input/sync", json={"text": "what colour is my kite?"}).json()
        usage = http.get("/status").json()["llm"]["usage"]
    assert said["reply"] == "the kite is blue"
    total = usage["total"]
    assert total["calls"] == 1 and total["cached_tokens"] == 3 and total["reasoning_tokens"] == 2
    fresh = total["prompt_tokens"] - 3
    expected = (fresh * 2.0 + 3 * 1.0 + total["completion_tokens"] * 8.0) / 1e6
    assert total["cost"] == pytest.approx(expected, abs=1e-6)
    today = time.strftime("%Y-%m-%d", time.gmtime())
    assert list(usage["by_day"]) == [today] and list(usage["by_channel"]) == ["http"]
    assert list(usage["by_source"]) == ["default"]
    assert usage["by_source"]["default"] == usage["by_day"][today] == total
