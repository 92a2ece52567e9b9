"""The golden request files (tests/llm/goldens/): every adapter's body for a user message
with an image and for a tool result carrying one is what the files say, and a body the
official SDK's request type accepts key by key. A change to an adapter's image handling
shows here as a diff of the file; `python -m tests.llm.goldens` writes the files again."""

from __future__ import annotations

import json

import pytest

from hologram.llm import AdapterLibrary

from .goldens import ADAPTERS, CASES, CHART, GOLDENS, PHOTO, golden_names, path_of, serialize
from .sdk_types import check_request

LIBRARY = AdapterLibrary()
NAMES = golden_names(LIBRARY)


def _id(name: tuple[str, str, bool]) -> str:
    return path_of(*name).stem


def test_there_is_a_golden_for_every_adapter_and_case_and_no_other() -> None:
    on_disk = {p.name for p in GOLDENS.glob("*.json")}
    assert on_disk == {path_of(*n).name for n in NAMES}
    assert {a for a, _, _ in NAMES} == set(ADAPTERS) == set(LIBRARY.names())
    assert {c for _, c, _ in NAMES} == set(CASES)


@pytest.mark.parametrize("name", NAMES, ids=_id)
async def test_the_adapter_sends_what_its_golden_file_says(name: tuple[str, str, bool]) -> None:
    adapter, case, notes = name
    fresh = await serialize(LIBRARY, adapter, case, notes)
    assert fresh == json.loads(path_of(*name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", NAMES, ids=_id)
def test_each_golden_is_a_body_the_sdks_request_type_accepts(name: tuple[str, str, bool]) -> None:
    adapter, _, _ = name
    kind, extensions = ADAPTERS[adapter]
    check_request(kind, json.loads(path_of(*name).read_text(encoding="utf-8")), *extensions)


def _images(value: object) -> list[str]:
    """Every base64 image payload anywhere in a body (a data: URL, a data field)."""
    text = json.dumps(value)
    return [name for name, data in (("photo", PHOTO), ("chart", CHART)) if data in text]


@pytest.mark.parametrize("name", NAMES, ids=_id)
def test_the_image_is_in_the_body_unless_the_model_reads_none(
    name: tuple[str, str, bool],
) -> None:
    _, case, notes = name
    body = json.loads(path_of(*name).read_text(encoding="utf-8"))
    expected = "photo" if case == "user_image" else "chart"
    if notes:
        assert _images(body) == []
        assert "seemedia" in json.dumps(body, ensure_ascii=False)
    else:
        assert _images(body) == [expected]


def _tool_golden(adapter: str) -> dict:
    return json.loads(path_of(adapter, "tool_image", False).read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "adapter", ["openai", "azure_openai", "deepseek", "openrouter", "qwen", "moonshot"]
)
def test_chat_completions_send_a_tool_results_image_in_a_user_message_after_it(
    adapter: str,
) -> None:
    messages = _tool_golden(adapter)["messages"]
    roles = [m["role"] for m in messages]
    assert roles == ["system", "user", "assistant", "tool", "user", "user"]
    assert messages[3]["content"] == "the chart of November"  # a tool message stays text
    note, image = messages[4]["content"]
    assert "plot_sales" in note["text"] and "call_plot_1" in note["text"]
    assert image["image_url"]["url"] == "data:image/png;base64," + CHART


def test_responses_put_the_image_in_the_function_call_output() -> None:
    [output] = [i for i in _tool_golden("openai_responses")["input"] if "output" in i]
    assert output["output"] == [
        {"type": "input_text", "text": "the chart of November"},
        {"type": "input_image", "image_url": "data:image/png;base64," + CHART, "detail": "auto"},
    ]


def test_anthropic_puts_the_image_inside_the_tool_result() -> None:
    last = _tool_golden("anthropic")["messages"][-1]
    result, words = last["content"]
    assert result["type"] == "tool_result" and words == {"type": "text", "text": "What stands out?"}
    assert result["content"][1]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": CHART,
    }


def test_gemini_puts_the_image_in_the_function_responses_parts() -> None:
    [response] = [
        p["functionResponse"]
        for c in _tool_golden("gemini")["contents"]
        for p in c["parts"]
        if "functionResponse" in p
    ]
    assert response["response"] == {"result": "the chart of November"}
    assert response["parts"] == [{"inlineData": {"mimeType": "image/png", "data": CHART}}]


def test_ollama_puts_the_image_on_the_tool_message() -> None:
    [tool] = [m for m in _tool_golden("ollama")["messages"] if m["role"] == "tool"]
    assert tool["images"] == [CHART] and tool["content"] == "the chart of November"
