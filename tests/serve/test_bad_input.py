"""Bad input gets a clear 4xx where it enters, harms no other input, and loses nothing: each
case here was a 500 before (issue 15), over real HTTP to the service in its own process."""

from __future__ import annotations

import asyncio
import io
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.serve.harness import ScriptedModel, Service
from tests.serve.test_shutdown import journal, wait_for

JSON = {"content-type": "application/json"}
DEEP = "[" * 100_000 + "]" * 100_000
HUGE = "9" * 5000


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """One service for the refusals: a refused request changes nothing, so they can share."""
    data_dir = tmp_path_factory.mktemp("bad-input") / "data"
    data_dir.mkdir()
    service = Service(data_dir)
    try:
        yield service.start()
    finally:
        service.ensure_stopped()


@pytest.fixture
def http(shared: Service) -> Iterator[httpx.Client]:
    with shared.client() as client:
        yield client


def refused(answer: httpx.Response, status: int = 400) -> str:
    assert answer.status_code == status, answer.text[:400]
    message: str = answer.json()["error"]
    return message


async def test_a_poisoned_input_is_refused_naming_its_field_and_its_30_neighbours_run_once(
    make_service: Callable[..., Service], model: ScriptedModel
) -> None:
    first = make_service(env=model.env)
    texts = [f"neighbour number {n}" for n in range(30)]
    poison = b'{"text": "probe \\ud800 x"}'
    async with httpx.AsyncClient(base_url=first.api, timeout=60) as http:
        answers = await asyncio.gather(
            *(http.post("/input", json={"text": t}) for t in texts[:15]),
            http.post("/input", content=poison, headers=JSON),
            *(http.post("/input", json={"text": t}) for t in texts[15:]),
        )
    bad = answers.pop(15)
    assert bad.status_code == 400
    assert bad.json()["error"].startswith("'text' holds a lone surrogate (\\ud800 at character 6)")
    assert [a.status_code for a in answers] == [202] * 30
    ids = sorted(a.json()["id"] for a in answers)

    def all_done() -> bool:
        stored = journal(first.data_dir)
        return sorted(stored) == ids and all(s == "done" for _, s, _ in stored.values())

    wait_for(all_done, "every acknowledged input to run")
    assert Counter(t for t in model.asked() if t in texts) == dict.fromkeys(texts, 1)
    assert first.terminate()[0] == 0

    second = make_service(env=model.env)
    with second.client() as http_again:
        # Inputs run in order: had a restart re-queued any, it would run before this one.
        http_again.post("/input/sync", json={"text": "after the restart"}).raise_for_status()
    assert Counter(t for t in model.asked() if t in texts) == dict.fromkeys(texts, 1)
    assert sorted(journal(second.data_dir))[:-1] == ids


def test_a_huge_integer_or_deep_nesting_in_any_body_is_a_400(http: httpx.Client) -> None:
    for path, method in (("/input", "POST"), ("/input/sync", "POST"), ("/settings", "PUT")):
        huge = http.request(
            method, path, content='{"text": "x", "value": ' + HUGE + "}", headers=JSON
        )
        deep = http.request(method, path, content=DEEP, headers=JSON)
        assert "holds a number of 5000 characters; numbers have at most 100" in refused(huge)
        assert "nests arrays and objects deeper than 64 levels" in refused(deep)
    nan = http.post("/input", content=b'{"text": "x", "timeout": NaN}', headers=JSON)
    assert "NaN, which is not JSON" in refused(nan)
    assert http.get("/status").json()["inputs"] == {}, "nothing refused was recorded"


def test_a_lone_surrogate_or_a_huge_number_in_a_setting_is_a_400_naming_the_field(
    http: httpx.Client,
) -> None:
    key = "core.agent.max_tool_rounds"
    surrogate = http.put(
        "/settings", content=b'{"key": "core.x.y", "value": ["ok", "\\udc00"]}', headers=JSON
    )
    assert refused(surrogate).startswith("'value[1]' holds a lone surrogate (\\udc00")
    in_text = http.put(
        "/settings", content=b'{"key": "core.x.y", "text": "a\\ud800"}', headers=JSON
    )
    assert refused(in_text).startswith("'text' holds a lone surrogate")
    as_value = http.put("/settings", content=f'{{"key": "{key}", "value": {HUGE}}}', headers=JSON)
    assert "'value'" not in refused(as_value), "a number's position is not a field"
    as_text = http.put("/settings", json={"key": key, "text": HUGE})
    assert f"'text' is not a value {key} can hold" in refused(as_text)
    deep_text = http.put(
        "/settings", json={"key": "core.security.review.sensitive_words", "text": DEEP}
    )
    assert "'text' is not a value core.security.review.sensitive_words can hold" in refused(
        deep_text
    )
    settings = http.get("/settings", params={"prefix": key}).json()["settings"]
    assert settings[0]["source"] == "default", "nothing refused was stored"


def test_a_malformed_or_oversize_last_event_id_is_a_400(shared: Service) -> None:
    for given in (b"\xb2", HUGE.encode(), b"-1", str(2**63).encode()):
        answer = httpx.get(shared.api + "/events", headers={"Last-Event-ID": given}, timeout=10)
        assert "Last-Event-ID" in refused(answer), given
    query = httpx.get(shared.api + "/events", params={"last_event_id": "²"}, timeout=10)
    assert "'last_event_id' must be an integer" in refused(query)


def test_an_input_id_past_what_sqlite_holds_is_a_400_and_a_free_one_a_404(
    http: httpx.Client,
) -> None:
    assert "must be within 1..9223372036854775807" in refused(
        http.get("/inputs/9223372036854775808")
    )
    assert "must be an integer" in refused(http.get("/inputs/abc"))
    assert "no input 9223372036854775807" in refused(http.get("/inputs/9223372036854775807"), 404)


def test_blank_entity_names_are_a_400_and_punctuation_alone_a_404(http: httpx.Client) -> None:
    assert "'name' is required" in refused(http.get("/graph/entities/%20"))
    assert "'entity' must not be blank" in refused(http.get("/graph/facts?entity=%0B"))
    assert "no letters or digits" in refused(http.get("/graph/entities/%21"), 404)


def test_a_nul_in_recall_keywords_is_a_400_not_a_broken_full_text_query(
    http: httpx.Client,
) -> None:
    answer = http.get("/graph/recall", params={"keywords": "abc\x00def"})
    assert "'keywords' must match" in refused(answer)
    assert "without NUL" in refused(answer)


def test_a_plugin_json_nested_100000_deep_or_with_a_huge_number_is_refused(
    http: httpx.Client, shared: Service
) -> None:
    for manifest in (DEEP, '{"name": "deep", "version": ' + HUGE + "}"):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("plugin.json", manifest)
            archive.writestr("main.py", "")
        answer = http.post(
            "/plugins", content=buffer.getvalue(), headers={"content-type": "application/zip"}
        )
        assert refused(answer).startswith("package refused: package plugin.json ")
    assert not (shared.data_dir / "plugins").exists() or not any(
        (shared.data_dir / "plugins").iterdir()
    )


def test_a_method_a_path_does_not_take_gets_a_405_with_allow(http: httpx.Client) -> None:
    settings = http.request("PATCH", "/settings")
    assert refused(settings, 405) == "PATCH is not allowed on /api/v1/settings"
    assert set(settings.headers["allow"].split(", ")) == {"GET", "HEAD", "PUT"}
    assert set(http.delete("/status").headers["allow"].split(", ")) == {"GET", "HEAD"}
    assert http.get("/input").headers["allow"] == "POST"


def test_the_document_states_the_limits_it_enforces(http: httpx.Client) -> None:
    document = http.get("/openapi.json").json()
    parameters = {p["name"]: p for p in document["paths"]["/context"]["get"]["parameters"]}
    assert parameters["limit"]["schema"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 10000,
        "default": 100,
    }
    search = {p["name"]: p for p in document["paths"]["/knowledge/search"]["get"]["parameters"]}
    assert search["q"]["required"] is True
    assert search["q"]["schema"] == {"type": "string", "minLength": 1, "pattern": "\\S"}
    assert search["top"]["schema"]["minimum"] == 1
    body = document["paths"]["/input"]["post"]["requestBody"]
    assert "at most 1048576 bytes" in body["description"]
    assert "nested at most 64 levels" in body["description"]
    assert set(document["paths"]["/input"]["post"]["responses"]) == {
        "202",
        "400",
        "401",
        "413",
        "415",
        "503",
    }
    # The limits stated are those enforced: one past each is refused.
    assert refused(http.get("/context", params={"limit": 10001}))
    assert refused(http.get("/knowledge/search", params={"q": " "}))
    assert refused(http.post("/input/sync", json={"text": "x", "timeout": 600.5}))
