"""Images from the notebook (issue 18): `%hologram say --image PATH …`, checked by the
firewall's path sandbox, and the upload widget; through a real IPython shell, a real kernel
and the scripted model on loopback."""

from __future__ import annotations

import asyncio
import base64
import io
from datetime import UTC, datetime
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from PIL import Image

from hologram.llm import ScriptedModelServer
from hologram.media import MediaTypeError
from hologram.notebook.upload_widget import UploadWidget


def png(color: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (5, 4), color).save(out, "PNG")
    return out.getvalue()


def data_url(data: bytes) -> str:
    return f"data:image/png;base64,{base64.b64encode(data).decode()}"


def image_urls(model: ScriptedModelServer) -> list[str]:
    content = model.last_request.json["messages"][-1]["content"]
    return [p["image_url"]["url"] for p in content if p.get("type") == "image_url"]


def stored(data_dir: Path) -> list[Path]:
    """The media stored (the tracker keeps the workspace's file contents in the same
    folder as plain blobs, without a description)."""
    return list((data_dir / "media").rglob("*.json"))


@pytest.fixture
def shell(
    shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch, model: ScriptedModelServer
) -> InteractiveShell:
    monkeypatch.setenv("HOLOGRAM_LLM_BASE_URL", model.base_url)
    monkeypatch.setenv("HOLOGRAM_LLM_MODEL", "scripted-model")
    monkeypatch.setenv("HOLOGRAM_LLM_API_KEY", "sk-test")
    return shell


async def test_say_with_images_inside_the_sandbox_shows_them_to_the_model(
    shell: InteractiveShell, model: ScriptedModelServer, data_dir: Path
) -> None:
    await shell.run_line_magic("hologram", f"start --data {data_dir}")
    workspace = data_dir / "workspace"
    workspace.mkdir(exist_ok=True)
    red, blue = png("red"), png("blue")
    (workspace / "red.png").write_bytes(red)
    (workspace / "photos").mkdir()
    (workspace / "photos" / "blue.png").write_bytes(blue)
    model.queue_text("Red, then blue.")
    line = f"say --image red.png --image {workspace / 'photos' / 'blue.png'} what are these?"
    assert await shell.run_line_magic("hologram", line) == "Red, then blue."
    assert image_urls(model) == [data_url(red), data_url(blue)]
    texts = [p["text"] for p in model.last_request.json["messages"][-1]["content"] if "text" in p]
    assert texts == ["what are these?"]
    await shell.run_line_magic("hologram", "shutdown")


async def test_an_image_outside_the_sandbox_is_refused_and_nothing_is_injected(
    shell: InteractiveShell, model: ScriptedModelServer, data_dir: Path, tmp_path: Path
) -> None:
    kernel = await shell.run_line_magic("hologram", f"start --data {data_dir}")
    outside = tmp_path / "outside.png"
    outside.write_bytes(png("red"))
    (data_dir / "workspace").mkdir(exist_ok=True)
    (data_dir / "workspace" / "fine.png").write_bytes(png("green"))
    refused = {
        str(outside): "is outside the read roots",
        "../outside.png": "contains '..'",
        "$HOME/x.png": "which a shell would expand",
        "missing.png": "no such file",
    }
    for path, words in refused.items():
        line = f"say --image fine.png --image {path} look"
        with pytest.raises(UsageError) as error:
            shell.run_line_magic("hologram", line)
        assert words in str(error.value) and f"--image {path}:" in str(error.value)
    await asyncio.sleep(0.2)
    assert model.requests == []
    assert await kernel.inputs.journal.get(1) is None
    assert stored(data_dir) == []
    # The kernel still takes input, with an image that is inside.
    model.queue_text("Green.")
    assert await shell.run_line_magic("hologram", "say --image fine.png colour?") == "Green."
    assert image_urls(model) == [data_url(png("green"))]
    await shell.run_line_magic("hologram", "shutdown")


async def test_the_upload_widget_sends_the_text_with_the_picked_images(
    shell: InteractiveShell, model: ScriptedModelServer, data_dir: Path
) -> None:
    kernel = await shell.run_line_magic("hologram", f"start --data {data_dir}")
    shown = shell.run_line_magic("hologram", "upload")
    widget = shown.widget
    assert isinstance(widget, UploadWidget)
    photo = png("yellow")

    def pick(data: bytes, kind: str) -> None:
        # What the browser's FileUpload sends the kernel, as ipywidgets deserializes it.
        widget.picker.value = (
            {
                "name": "y.png",
                "type": kind,
                "size": len(data),
                "content": memoryview(data),
                "last_modified": datetime.now(UTC),
            },
        )

    pick(photo, "image/png")
    assert len(widget.thumbs.children) == 1
    widget.text.value = "what colour is this?"
    model.queue_text("Yellow.")
    widget.button.click()
    assert widget.sending is not None
    assert await asyncio.wait_for(widget.sending, 10) == "Yellow."
    assert image_urls(model) == [data_url(photo)]
    assert widget.status.value == "input #1: Yellow."
    assert widget.picker.value == () and widget.text.value == ""

    # A file that lies about being an image is refused where it enters: nothing journaled.
    pick(b"plain words, not a picture", "image/png")
    widget.text.value = "and this?"
    widget.button.click()
    with pytest.raises(MediaTypeError):
        await asyncio.wait_for(widget.sending, 10)
    assert widget.status.value.startswith("refused: media item 0: declared image/png")
    assert await kernel.inputs.journal.get(2) is None
    assert len(model.requests) == 1
    await shell.run_line_magic("hologram", "shutdown")
