"""The web page in real headless Chromium (Debian's, driven by Playwright's Python package):
send a message and see the reply, watch the live events, change a setting."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.chromium import artifacts, chromium_page, needs_chromium
from tests.serve.harness import Service

pytestmark = needs_chromium()


@pytest.fixture
def page(service: Service) -> Iterator[object]:
    with chromium_page(1280, 900, 30_000) as (page, problems):
        page.goto(service.url + "/")
        page.wait_for_selector("#link.up")
        yield page
        # The settings test sends a bad value on purpose: its 400 is the one expected
        # failed load; anything else the page logs as an error fails the test.
        expected = "the server responded with a status of 400"
        assert [m for m in problems if expected not in m] == []


def screenshot(page: object, tmp_path: Path, name: str) -> None:
    path = artifacts(tmp_path, "serve_page") / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]


def test_a_message_sent_from_the_page_gets_its_reply_and_the_events_show_live(
    page: object, tmp_path: Path
) -> None:
    p = page  # type: ignore[assignment]
    # The label is filled when the page's first /status answer arrives.
    p.wait_for_function("document.getElementById('model').textContent !== ''")  # type: ignore[attr-defined]
    assert p.text_content("#model") == "offline scripted model"  # type: ignore[attr-defined]
    p.fill("[data-testid=chat-input]", "你好, browser")  # type: ignore[attr-defined]
    p.press("[data-testid=chat-input]", "Enter")  # type: ignore[attr-defined]
    reply = p.wait_for_selector("[data-testid=reply]")  # type: ignore[attr-defined]
    assert "你好, browser" in reply.text_content()
    assert reply.get_attribute("data-input") == "1"
    p.wait_for_selector("#events li[data-type=agent_llm_chain]")  # type: ignore[attr-defined]
    p.wait_for_selector("#events li[data-type=agent_output]")  # type: ignore[attr-defined]
    screenshot(p, tmp_path, "chat")


def test_a_setting_changed_on_the_page_is_stored_and_a_bad_one_refused(
    page: object, service: Service, tmp_path: Path
) -> None:
    p = page  # type: ignore[assignment]
    row = p.wait_for_selector("tr[data-key='core.agent.max_tool_rounds']")  # type: ignore[attr-defined]
    row.query_selector("input").fill("9")
    row.query_selector("button").click()
    p.wait_for_function(  # type: ignore[attr-defined]
        "document.getElementById('settings-message').textContent.includes('= 9')"
    )
    stored = httpx.get(
        service.api + "/settings", params={"prefix": "core.agent.max_tool_rounds"}, timeout=10
    ).json()["settings"][0]
    assert (stored["value"], stored["source"]) == (9, "stored")
    row.query_selector("input").fill("ten")
    row.query_selector("button").click()
    p.wait_for_selector("#settings-message.error")  # type: ignore[attr-defined]
    assert "expects int" in p.text_content("#settings-message")  # type: ignore[attr-defined]
    screenshot(p, tmp_path, "settings")


def test_the_page_opens_on_the_conversation_and_replays_the_recent_events(
    service: Service, tmp_path: Path
) -> None:
    """Two inputs answered over the API before the page is opened: the page shows them
    with their replies, its events panel replays their events, and its timeline (the
    notebook widget's own) draws their runs, each hover showing the input's text."""
    with httpx.Client(base_url=service.api, timeout=30) as client:
        for text in ("first, over the API", "second, 你好"):
            assert client.post("/input/sync", json={"text": text}).status_code == 200
    with chromium_page(1280, 900, 30_000) as (p, problems):
        p.goto(service.url + "/")
        p.wait_for_selector("#link.up")
        p.wait_for_function("document.querySelectorAll('[data-testid=reply]').length === 2")
        replies = p.locator("[data-testid=reply]")
        assert [replies.nth(i).get_attribute("data-input") for i in range(2)] == ["1", "2"]
        assert "first, over the API" in replies.nth(0).text_content()
        said = p.locator("#messages li.you").all_text_contents()
        assert said == ["http: first, over the API", "http: second, 你好"]
        p.wait_for_selector("#events li[data-type=agent_output]")
        assert p.locator("#events li[data-type=agent_output]").count() == 2
        finished = "#timeline svg.hologram-scheduler g.run[data-ended=finish]"
        p.wait_for_function(f"document.querySelectorAll('{finished}').length === 2")
        p.locator(f"{finished}[data-task='2']").hover()
        tip = p.locator("#timeline [data-testid=tooltip]")
        tip.wait_for()
        assert "second, 你好" in tip.text_content() and "http" in tip.text_content()
        screenshot(p, tmp_path, "opened_on_conversation")
        # A reply still arriving is not shown twice, and a new message follows on.
        p.fill("[data-testid=chat-input]", "third, from the page")
        p.press("[data-testid=chat-input]", "Enter")
        p.wait_for_function("document.querySelectorAll('[data-testid=reply]').length === 3")
        assert problems == []
