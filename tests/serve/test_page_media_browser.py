"""Images from the web page (issue 18), in real headless Chromium: one attached through the
file picker and one pasted into the text box are shown as thumbnails, sent with the
message, and reach the scripted model's request as image parts."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path

import httpx

from tests.chromium import artifacts, chromium_page, needs_chromium
from tests.serve.harness import ScriptedModel, Service
from tests.serve.test_media_input import media_files, png

pytestmark = needs_chromium()

PASTE = """async (b64) => {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const data = new DataTransfer();
  data.items.add(new File([bytes], "pasted.png", { type: "image/png" }));
  const box = document.getElementById("text");
  box.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true }));
}"""


def test_an_attached_and_a_pasted_image_reach_the_model_with_the_message(
    make_service: Callable[..., Service], model: ScriptedModel, data_dir: Path, tmp_path: Path
) -> None:
    picked, pasted = png("red"), png("blue")
    model.queue({"text": "A red one and a blue one."})
    service = make_service(env=model.env)
    with chromium_page(1280, 900, 30_000) as (page, problems):
        page.goto(service.url + "/")
        page.wait_for_selector("#link.up")
        page.set_input_files(
            "[data-testid=chat-attach]",
            files=[{"name": "red.png", "mimeType": "image/png", "buffer": picked}],
        )
        page.evaluate(PASTE, base64.b64encode(pasted).decode())
        page.wait_for_function(
            "document.querySelectorAll('[data-testid=attached-thumb]').length === 2"
        )
        page.fill("[data-testid=chat-input]", "what colours?")
        page.press("[data-testid=chat-input]", "Enter")
        reply = page.wait_for_selector("[data-testid=reply]")
        assert reply.text_content() == "hologram: A red one and a blue one."
        # The sent line shows both images; the attachments are cleared for the next one.
        assert page.locator("#messages li.you [data-testid=sent-thumb]").count() == 2
        assert page.locator("[data-testid=attached-thumb]").count() == 0
        widths = page.eval_on_selector_all(
            "[data-testid=sent-thumb]", "imgs => imgs.map(i => i.naturalWidth)"
        )
        assert widths == [8, 8]  # the thumbnails are the images themselves, drawn
        path = artifacts(tmp_path, "serve_page") / "media.png"
        page.screenshot(path=str(path), full_page=True)
        assert problems == []

    requests = httpx.get(model.control + "/requests", timeout=10).json()
    user = json.loads(requests[-1]["body"])["messages"][-1]
    urls = [p["image_url"]["url"] for p in user["content"] if p.get("type") == "image_url"]
    assert urls == [
        f"data:image/png;base64,{base64.b64encode(data).decode()}" for data in (picked, pasted)
    ]
    assert [p["text"] for p in user["content"] if p.get("type") == "text"] == ["what colours?"]
    assert len(media_files(data_dir)) == 2


def test_an_image_the_store_refuses_is_an_error_line_and_the_page_goes_on(
    service: Service, data_dir: Path
) -> None:
    with chromium_page(1280, 900, 30_000) as (page, problems):
        page.goto(service.url + "/")
        page.wait_for_selector("#link.up")
        page.set_input_files(
            "[data-testid=chat-attach]",
            files=[{"name": "fake.png", "mimeType": "image/png", "buffer": b"not an image"}],
        )
        page.fill("[data-testid=chat-input]", "look")
        page.press("[data-testid=chat-input]", "Enter")
        error = page.wait_for_selector("#messages li.error")
        assert "declared image/png" in error.text_content()
        page.fill("[data-testid=chat-input]", "plain words")
        page.press("[data-testid=chat-input]", "Enter")
        reply = page.wait_for_selector("[data-testid=reply]")
        assert "plain words" in reply.text_content()
        assert [p for p in problems if "status of 415" not in p] == []
    assert media_files(data_dir) == []
