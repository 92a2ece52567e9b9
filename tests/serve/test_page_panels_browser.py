"""The page's self-management panels in real headless Chromium: upload a `.hmap` and see it
listed, disable and re-enable it; edit settings by namespace and see each change come back
as a config_changed event, a secret set but never shown, an unknown key refused with the
server's own message; switch the model source and see the next turn answered by it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.chromium import artifacts, chromium_page, needs_chromium
from tests.serve.harness import ScriptedModel, Service
from tests.serve.page_fixtures import add_source, lua_package

pytestmark = needs_chromium()


@contextmanager
def opened(service: Service, allowed: tuple[str, ...] = ()) -> Iterator[Any]:
    """The page, live; console errors other than the `allowed` refusals fail the test."""
    with chromium_page(1280, 1400, 30_000) as (page, problems):
        page.goto(service.url + "/")
        page.wait_for_selector("#link.up")
        yield page
        assert [m for m in problems if not any(a in m for a in allowed)] == []


def screenshot(page: Any, tmp_path: Path, name: str) -> None:
    path = artifacts(tmp_path, "serve_page") / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)


def state_of(service: Service, name: str) -> str:
    plugins = httpx.get(service.api + "/plugins", timeout=10).json()["plugins"]
    return str(next(p for p in plugins if p["name"] == name)["state"])


def test_a_plugin_uploaded_on_the_page_is_listed_and_disabled_and_enabled_there(
    service: Service, tmp_path: Path
) -> None:
    package = tmp_path / "greet.hmap"
    package.write_bytes(lua_package(tmp_path / "src"))
    with opened(service) as page:
        page.wait_for_selector("#plugins tr[data-plugin=pluginmgr][data-state=running]")
        assert page.locator("#plugins tr[data-plugin=greet]").count() == 0
        page.set_input_files("[data-testid=plugin-file]", str(package))
        page.click("[data-testid=plugin-upload]")
        row = "#plugins tr[data-plugin=greet]"
        page.wait_for_selector(f"{row}[data-state=running]")
        assert "installed greet (running" in page.text_content("#plugins-message")
        assert page.text_content(f"{row} td.tools") == "greet_hello"

        page.click(f"{row} button[data-action=disable]")
        page.wait_for_selector(f"{row}[data-state=stopped]")
        assert state_of(service, "greet") == "stopped"
        assert page.text_content(f"{row} td.tools") == "–"
        screenshot(page, tmp_path, "plugin_disabled")

        page.click(f"{row} button[data-action=enable]")
        page.wait_for_selector(f"{row}[data-state=running]")
        assert state_of(service, "greet") == "running"
        assert page.text_content(f"{row} td.tools") == "greet_hello"
        # A change made by another door (here the API) shows on the page through its event.
        httpx.post(service.api + "/plugins/greet/disable", timeout=10).raise_for_status()
        page.wait_for_selector(f"{row}[data-state=stopped]")
        screenshot(page, tmp_path, "plugins")
        # What was uploaded can be removed; a built-in has no such button.
        assert (
            page.locator("#plugins tr[data-plugin=seq] button[data-action=uninstall]").count() == 0
        )
        page.click(f"{row} button[data-action=uninstall]")
        page.wait_for_selector(row, state="detached")
        assert page.text_content("#plugins-message") == "greet uninstalled"
        assert not (service.data_dir / "plugins" / "greet").exists()


def test_settings_are_edited_by_namespace_and_each_change_comes_back_as_an_event(
    service: Service, tmp_path: Path
) -> None:
    with opened(service, allowed=("status of 400",)) as page:
        page.wait_for_selector("#namespaces a[data-namespace='core.agent'].chosen")
        page.click("#namespaces a[data-namespace='core.llm']")
        row = page.wait_for_selector("#settings tr[data-key='core.llm.backoff_s']")
        assert page.locator("#settings tr[data-key='core.agent.max_tool_rounds']").count() == 0
        assert row.query_selector("td.type").text_content() == "float"
        row.query_selector("input").fill("7.5")
        row.query_selector("button").click()
        page.wait_for_selector("#settings-changes li[data-key='core.llm.backoff_s']")
        assert (
            page.text_content("#settings-changes li") == "config_changed core.llm.backoff_s = 7.5"
        )
        stored = httpx.get(
            service.api + "/settings", params={"prefix": "core.llm.backoff_s"}, timeout=10
        ).json()["settings"][0]
        assert (stored["value"], stored["source"]) == (7.5, "stored")

        # A change from elsewhere updates the row shown, through the same event.
        httpx.put(
            service.api + "/settings",
            json={"key": "core.llm.backoff_max_s", "value": 600},
            timeout=10,
        ).raise_for_status()
        other = "#settings tr[data-key='core.llm.backoff_max_s']"
        page.wait_for_selector(f"{other}.changed")
        assert page.input_value(f"{other} input") == "600"

        # A secret: never shown, only set.
        secret = "#settings tr[data-key='core.llm.sources.default.api_key']"
        assert page.text_content(f"{secret} td.type") == "secret (not set)"
        assert page.get_attribute(f"{secret} input", "type") == "password"
        page.fill(f"{secret} input", "sk-typed-on-the-page")
        page.click(f"{secret} button")
        page.wait_for_function(
            "document.getElementById('settings-message').textContent.includes('(secret, set)')"
        )
        page.click("#namespaces a[data-namespace='core.llm']")
        page.wait_for_function(
            f"document.querySelector(\"{secret} td.type\")?.textContent === 'secret (set)'"
        )
        assert page.input_value(f"{secret} input") == ""
        assert "sk-typed-on-the-page" not in page.content()

        # A typed value: a bool is a checkbox.
        page.click("#namespaces a[data-namespace='core.security']")
        network = page.wait_for_selector("#settings tr[data-key='core.security.network']")
        assert network.query_selector("input").get_attribute("type") == "checkbox"
        network.query_selector("input").uncheck()
        network.query_selector("button").click()
        page.wait_for_selector("#settings-changes li[data-key='core.security.network']")
        assert (
            httpx.get(
                service.api + "/settings", params={"prefix": "core.security.network"}, timeout=10
            ).json()["settings"][0]["value"]
            is False
        )

        # An unknown key is refused, and the page shows the server's message as it is.
        page.fill("[data-testid=any-key]", "core.llm.bakoff_s")
        page.fill("[data-testid=any-value]", "3")
        page.click("[data-testid=any-set]")
        page.wait_for_selector("#settings-message.error")
        refused = httpx.put(
            service.api + "/settings", json={"key": "core.llm.bakoff_s", "text": "3"}, timeout=10
        )
        assert refused.status_code == 400
        assert page.text_content("#settings-message") == refused.json()["error"]
        assert "did you mean core.llm.backoff_s" in refused.json()["error"]
        screenshot(page, tmp_path, "settings_editor")


@pytest.fixture
def backup() -> Iterator[ScriptedModel]:
    running = ScriptedModel().start()
    yield running
    running.stop()


def test_the_model_source_switched_on_the_page_answers_the_next_turn(
    make_service: Any, model: ScriptedModel, backup: ScriptedModel, tmp_path: Path
) -> None:
    service = make_service(env=model.env)
    add_source(service, "backup", backup)
    with opened(service) as page:
        page.wait_for_selector("#llm-sources tr[data-source=backup]")
        assert page.text_content("[data-testid=llm-current]") == "default"
        page.select_option("[data-testid=llm-choice]", "backup")
        page.click("[data-testid=llm-switch]")
        page.wait_for_function(
            "document.querySelector('[data-testid=llm-current]').textContent === 'backup'"
        )
        assert "the next model call goes to backup" in page.text_content("#llm-message")
        page.wait_for_selector("#events li[data-type=provider_switched]")

        backup.queue({"text": "answered by the backup source"})
        page.fill("[data-testid=chat-input]", "who answers now?")
        page.press("[data-testid=chat-input]", "Enter")
        reply = page.wait_for_selector("[data-testid=reply]")
        assert "answered by the backup source" in reply.text_content()
        screenshot(page, tmp_path, "llm_switched")
    assert backup.asked()[-1] == "who answers now?"
    assert "who answers now?" not in model.asked()


def test_the_usage_panel_shows_a_turns_tokens_and_cost_per_source_day_and_channel(
    make_service: Any, model: ScriptedModel, tmp_path: Path
) -> None:
    service = make_service(env=model.env)
    # The scripted model answers as "offline-scripted", priced by its prefix.
    prices = {"offline": {"input": 2.0, "output": 8.0}}
    with service.client() as http:
        assert http.put("/settings", json={"key": "core.llm.prices", "value": prices}).is_success
    model.queue({"text": "a blue kite, noted", "cached_tokens": 3, "reasoning_tokens": 2})
    with opened(service) as page:
        page.fill("[data-testid=chat-input]", "my kite is blue")
        page.press("[data-testid=chat-input]", "Enter")
        page.wait_for_selector("[data-testid=reply]")
        page.wait_for_function(
            "document.querySelector('#usage tr[data-group=total] td.calls')?.textContent"
            " === '1 calls'"
        )
        usage = httpx.get(service.api + "/status", timeout=10).json()["llm"]["usage"]
        shown = {
            (row.get_attribute("data-group"), row.get_attribute("data-name")): [
                cell.text_content() for cell in row.query_selector_all("td")
            ]
            for row in page.query_selector_all("#usage tr[data-group]")
        }
        titles = [t.text_content() for t in page.query_selector_all("#usage tr.group td")]
        screenshot(page, tmp_path, "usage")
    total = usage["total"]
    expected = {("total", "total")} | {
        (group, name) for group in ("by_source", "by_day", "by_channel") for name in usage[group]
    }
    assert set(shown) == expected and titles == ["by source", "by day", "by channel"]
    assert ("by_source", "default") in shown and (
        "by_day",
        time.strftime("%Y-%m-%d", time.gmtime()),
    ) in shown
    for cells in shown.values():  # one turn: every row is that turn
        assert cells[1:] == [
            "1 calls",
            f"{total['prompt_tokens']} in (3 cached)",
            f"{total['completion_tokens']} out (2 thinking)",
            f"${total['cost']:.4f}",
        ]
    assert total["cost"] > 0


def test_an_answer_cut_off_by_a_preemption_is_typed_afresh_on_its_line(
    make_service: Any, model: ScriptedModel
) -> None:
    service = make_service(env=model.env)
    # Each answer of the first input holds back all but its first piece for a minute.
    model.queue(
        {"text": "alpha gamma", "chunk_delay": 60},
        {"text": "I will mind the kettle"},
        {"text": "beta delta", "chunk_delay": 60},
    )
    typing = "[data-testid=typing]"
    with opened(service) as page:
        page.fill("[data-testid=chat-input]", "tell me slowly")
        page.press("[data-testid=chat-input]", "Enter")
        page.wait_for_function(
            f"document.querySelector('{typing}')?.textContent === 'hologram: alpha '"
        )
        with service.client() as http:
            answer = http.post("/interrupt", json={"text": "the kettle boils", "level": "L3"})
            assert answer.status_code == 202, answer.text
            # The interrupt is answered, then the first input resumes and its model is asked
            # again: the line it was typed on starts over, rather than going on from the
            # answer that was cut off.
            page.wait_for_function(
                f"document.querySelector('{typing}')?.textContent.includes('beta')"
            )
            assert page.text_content(typing) == "hologram: beta "
            assert http.post("/stop").status_code == 200
