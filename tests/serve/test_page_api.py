"""The endpoints the page's panels use, over real HTTP against the service: enable, disable
and reload a plugin (the registry's one change path, refused as pluginmgr is refused), list
and switch the model sources (the next turn goes to the chosen one), and the settings'
namespaces, types and secrets. Bad input is a 4xx that says what is wrong."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.serve.harness import ScriptedModel, Service
from tests.serve.page_fixtures import BROKEN_LUA, add_source, lua_package

ZIP = {"content-type": "application/zip"}


@pytest.fixture
def backup() -> Iterator[ScriptedModel]:
    running = ScriptedModel().start()
    yield running
    running.stop()


def row(http: object, name: str) -> dict[str, object]:
    plugins = http.get("/plugins").json()["plugins"]  # type: ignore[attr-defined]
    return next(p for p in plugins if p["name"] == name)


def test_a_plugin_is_disabled_enabled_and_reloaded_over_http(
    service: Service, tmp_path: Path
) -> None:
    with service.client() as http:
        installed = http.post("/plugins", content=lua_package(tmp_path), headers=ZIP)
        assert installed.status_code == 201, installed.text
        assert installed.json()["tools"] == ["greet_hello"]

        disabled = http.post("/plugins/greet/disable")
        assert disabled.status_code == 200, disabled.text
        assert (disabled.json()["state"], disabled.json()["tools"]) == ("stopped", [])
        assert row(http, "greet")["state"] == "stopped"

        enabled = http.post("/plugins/greet/enable")
        assert (enabled.json()["state"], enabled.json()["tools"]) == ("running", ["greet_hello"])

        # A reload reads the folder again: the tool the script now registers is the one offered.
        (service.data_dir / "plugins" / "greet" / "main.lua").write_text(
            'sdk.register_tool("greet_again", "Again.", nil, function(a) return "hi" end)\n'
        )
        reloaded = http.post("/plugins/greet/reload")
        assert (reloaded.json()["state"], reloaded.json()["tools"]) == ("running", ["greet_again"])


def test_plugin_changes_are_refused_as_pluginmgr_refuses_them(
    service: Service, tmp_path: Path
) -> None:
    with service.client() as http:
        unknown = http.post("/plugins/nowhere/disable")
        failback = http.post("/plugins/recoverydiag/disable")
        broken = http.post(
            "/plugins", content=lua_package(tmp_path, "broken", BROKEN_LUA), headers=ZIP
        )
        retried = http.post("/plugins/broken/enable")
        wrong_method = http.get("/plugins/greet/enable")
        still = row(http, "recoverydiag")["state"]
    assert unknown.status_code == 404
    assert "no plugin 'nowhere'; plugins:" in unknown.json()["error"]
    assert failback.status_code == 403
    assert "recoverydiag is in the failback chain" in failback.json()["error"]
    assert still == "running"
    # Installed, but it cannot start: the install says so, and enabling it again is a 409
    # with the plugin's own error.
    assert (broken.status_code, broken.json()["started"]) == (201, False)
    assert retried.status_code == 409
    assert "greet cannot start: boom" in retried.json()["error"]
    assert wrong_method.status_code == 405


def test_the_model_sources_are_listed_and_the_next_turn_goes_to_the_chosen_one(
    make_service: Callable[..., Service], model: ScriptedModel, backup: ScriptedModel
) -> None:
    service = make_service(env=model.env)
    add_source(service, "backup", backup)
    with service.client() as http:
        listed = http.get("/llm/sources").json()
        assert listed["current"] == "default"
        assert [s["source"] for s in listed["sources"]] == ["default", "backup"]

        switched = http.put("/llm/source", json={"source": "backup"})
        assert switched.status_code == 200, switched.text
        assert switched.json()["current"] == "backup"
        assert [s["source"] for s in switched.json()["sources"]] == ["backup", "default"]

        backup.queue({"text": "the backup answers"})
        answer = http.post("/input/sync", json={"text": "who answers now?"})
        assert answer.json()["reply"] == "the backup answers"
        stored = http.get("/settings", params={"prefix": "core.llm.active_source"}).json()
    assert backup.asked()[-1] == "who answers now?"
    assert "who answers now?" not in model.asked()
    assert stored["settings"][0]["value"] == "backup"


BAD_CHOICES = [
    ({"source": "nowhere"}, "no LLM source 'nowhere'; sources: default"),
    ({"source": "  "}, "'source' is empty"),
    ({"source": 3}, "'source' must be a string"),
    ({}, "'source' is required"),
    ({"source": "default", "extra": 1}, "unknown field(s) ['extra']"),
    (["default"], "must be a JSON object"),
]


def test_a_bad_source_choice_is_refused_naming_what_is_wrong(service: Service) -> None:
    with service.client() as http:
        answers = [(http.put("/llm/source", json=body), says) for body, says in BAD_CHOICES]
        current = http.get("/llm/sources").json()["current"]
    for answer, says in answers:
        assert answer.status_code == 400, (says, answer.text)
        assert says in answer.json()["error"]
    assert current == "default"


def test_a_source_choice_that_is_not_json_is_a_415_or_400(service: Service) -> None:
    with service.client() as http:
        as_text = http.put("/llm/source", content=b"backup", headers={"content-type": "text/plain"})
        broken = http.put("/llm/source", content=b"{", headers={"content-type": "application/json"})
    assert as_text.status_code == 415
    assert broken.status_code == 400 and "not valid JSON" in broken.json()["error"]


def test_settings_come_with_their_namespace_type_and_whether_a_secret_is_set(
    service: Service,
) -> None:
    secret = "core.llm.sources.default.api_key"
    with service.client() as http:
        listed = http.get("/settings", params={"prefix": "core.agent."}).json()
        before = http.get("/settings", params={"prefix": secret}).json()["settings"][0]
        assert http.put("/settings", json={"key": secret, "text": "sk-hidden"}).status_code == 200
        after = http.get("/settings", params={"prefix": secret}).json()["settings"][0]
        unknown = http.put("/settings", json={"key": "core.llm.bakoff_s", "text": "3"})
    rounds = next(s for s in listed["settings"] if s["key"] == "core.agent.max_tool_rounds")
    assert (rounds["namespace"], rounds["type"], rounds["has_value"]) == ("core.agent", "int", True)
    names = {n["name"]: n["keys"] for n in listed["namespaces"]}
    assert {"core.agent", "core.llm", "core.security"} <= set(names)
    assert names["core.agent"] == len([s for s in listed["settings"]])
    assert (before["secret"], before["has_value"], before["value"]) == (True, False, "")
    assert (after["has_value"], after["value"]) == (True, "****")
    assert "sk-hidden" not in str(after)
    assert unknown.status_code == 400
    assert "did you mean core.llm.backoff_s" in unknown.json()["error"]
