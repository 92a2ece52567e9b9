"""Golden request files: what each adapter sends for a user message with an image and for a
tool result carrying an image (tests/llm/goldens/).

    python -m tests.llm.goldens        # writes them again after a deliberate change

`<adapter>-<case>.json` is the body with the images in the adapter's own wire format (what a
source that reads images sends); an adapter whose model reads no images by default also has
`<adapter>-<case>-notes.json`, the body with each image a text note, as such a source sends it.
The files are written with sorted keys; a test compares them as parsed JSON with a fresh
transform and checks each against the official SDK's request type.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from pathlib import Path
from typing import Any

from hologram.llm import AdapterLibrary, ChatMessage, CompletionRequest, ImageBlock, TextBlock
from hologram.llm.vision import images_as_notes
from hologram.sdk import ToolCall, ToolDef, ToolResult

GOLDENS = Path(__file__).parent / "goldens"

PHOTO = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
CHART = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGM8ISfHwMDAxMDAwMDAAAANBAEIfXHKZgAAAABJRU5ErkJggg=="


def _image(data: str, name: str) -> ImageBlock:
    digest = hashlib.sha256(base64.b64decode(data)).hexdigest()
    return ImageBlock("image/png", data=data, digest=digest, name=name)


CHART_TOOL = ToolDef(
    "plot_sales",
    "Plot the month's sales as a chart",
    {"type": "object", "properties": {"month": {"type": "string"}}, "required": ["month"]},
)


def user_image() -> CompletionRequest:
    return CompletionRequest(
        [
            ChatMessage.system("You are Holo."),
            ChatMessage.user([TextBlock("这是我家的猫，可爱吗？"), _image(PHOTO, "cat.png")]),
        ],
        model="gemini-2.5-flash",
    )


def tool_image() -> CompletionRequest:
    call = ToolCall("call_plot_1", "plot_sales", {"month": "2026-11"})
    return CompletionRequest(
        [
            ChatMessage.system("You are Holo."),
            ChatMessage.user("Show me November's sales."),
            ChatMessage.assistant("", [call]),
            ChatMessage.tool(
                ToolResult(call.id, call.name, "the chart of November"),
                [_image(CHART, "sales.png")],
            ),
            ChatMessage.user("What stands out?"),
        ],
        tools=[CHART_TOOL],
        model="gemini-2.5-flash",
    )


CASES = {"user_image": user_image, "tool_image": tool_image}

# adapter -> (request type of sdk_types.check_request, top-level keys it adds to the format)
ADAPTERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "openai": ("openai", ()),
    "azure_openai": ("openai", ()),
    "deepseek": ("openai", ("thinking",)),
    "openrouter": ("openai", ("reasoning",)),
    "qwen": ("openai", ("enable_thinking",)),
    "moonshot": ("openai", ()),
    "openai_responses": ("responses", ()),
    "anthropic": ("anthropic", ()),
    "gemini": ("gemini", ()),
    "ollama": ("ollama", ()),
}


async def serialize(library: AdapterLibrary, adapter: str, case: str, notes: bool) -> Any:
    request = CASES[case]()
    if notes:
        request = images_as_notes(request).request
    body = await library.load(adapter).transform_request(request.to_unified())
    return json.loads(body)


def golden_names(library: AdapterLibrary) -> list[tuple[str, str, bool]]:
    """(adapter, case, notes) of every golden file."""
    names = []
    for adapter in ADAPTERS:
        vision = library.load(adapter).accepts_images
        for case in CASES:
            names.append((adapter, case, False))
            if not vision:
                names.append((adapter, case, True))
    return names


def path_of(adapter: str, case: str, notes: bool) -> Path:
    return GOLDENS / f"{adapter}-{case}{'-notes' if notes else ''}.json"


async def write_all() -> list[Path]:
    library = AdapterLibrary()
    GOLDENS.mkdir(exist_ok=True)
    written = []
    for adapter, case, notes in golden_names(library):
        body = await serialize(library, adapter, case, notes)
        path = path_of(adapter, case, notes)
        text = json.dumps(body, ensure_ascii=False, indent=2, sort_keys=True)
        path.write_text(text + "\n", encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for written in asyncio.run(write_all()):
        print(written)
