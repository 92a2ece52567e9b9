"""Images in the LLM layer: in user messages and tool results on every wire format, read back
by the scripted server; the vision flag of each adapter and source; and a model that reads no
images getting text notes naming them, announced, while a source that reads them in the same
fallback order still gets the images."""

from __future__ import annotations

import base64
import hashlib
import json
import logging

import pytest

from hologram.config import ConfigRegistry
from hologram.llm import (
    AdapterLibrary,
    ChatMessage,
    CompletionRequest,
    ImageBlock,
    LuaAdapter,
    ProviderManager,
    ScriptedModelServer,
    ScriptedReply,
    TextBlock,
    images_as_notes,
)
from hologram.llm.adapter import ImageStandIns
from hologram.llm.errors import AdapterError
from hologram.llm.sources import SourceProblem, read_source
from hologram.sdk import EventType, ToolCall, ToolResult

from .conftest import Recorder, add_source
from .golden import collect
from .goldens import CHART, PHOTO, tool_image, user_image

# adapter -> the base path its source's base_url ends with on the scripted server
BASES = {
    "openai": "/v1",
    "azure_openai": "",
    "deepseek": "",
    "openrouter": "/api/v1",
    "qwen": "/compatible-mode/v1",
    "moonshot": "/v1",
    "openai_responses": "/v1",
    "anthropic": "",
    "gemini": "/v1beta",
    "ollama": "",
}
DECLARED = {
    "openai": True,
    "azure_openai": True,
    "openrouter": True,
    "openai_responses": True,
    "anthropic": True,
    "gemini": True,
    "deepseek": False,
    "qwen": False,
    "moonshot": False,
    "ollama": False,
}
DIGEST = hashlib.sha256(base64.b64decode(PHOTO)).hexdigest()


def photo(**fields: str) -> ImageBlock:
    return ImageBlock("image/png", data=PHOTO, **fields)


def looking(image: ImageBlock | None = None) -> CompletionRequest:
    return CompletionRequest(
        [ChatMessage.user([TextBlock("what is this?"), image or photo(digest=DIGEST)])]
    )


# ---- the unified request -------------------------------------------------------------------


def test_a_tool_result_with_images_is_a_block_list_text_first() -> None:
    result = ToolResult("c1", "plot", "the chart")
    chart = ImageBlock("image/png", data=CHART, digest="d" * 64, name="chart.png")
    unified = ChatMessage.tool(result, [chart]).to_unified()
    assert unified["content"] == [
        {"type": "text", "text": "the chart"},
        {
            "type": "image",
            "media_type": "image/png",
            "data": CHART,
            "digest": "d" * 64,
            "name": "chart.png",
        },
    ]
    assert unified["tool_call_id"] == "c1" and unified["name"] == "plot"
    assert ChatMessage.tool(result).to_unified()["content"] == "the chart"


def test_an_image_from_the_media_store_carries_its_digest_and_name() -> None:
    from hologram.sdk import MediaRef

    raw = base64.b64decode(PHOTO)
    ref = MediaRef(DIGEST, "image/png", len(raw), 1, 1, "cat.png")
    block = ImageBlock.from_media(ref, raw)
    assert block == ImageBlock("image/png", data=PHOTO, digest=DIGEST, name="cat.png")
    assert block.size == ref.size


def test_an_images_size_is_read_from_its_base64() -> None:
    for raw in (b"", b"a", b"ab", b"abc", b"abcd" * 1000):
        data = base64.b64encode(raw).decode() or "AA=="
        assert ImageBlock(data=data).size == (len(raw) if raw else 1)
    assert ImageBlock(url="https://example.org/a.png").size == 0


# ---- image data crosses the sandbox as a stand-in --------------------------------------------


async def test_image_data_reaches_the_body_whole_and_the_callers_request_is_untouched() -> None:
    data = base64.b64encode(bytes(range(256)) * 4096).decode()  # 1 MiB
    request = looking(ImageBlock("image/jpeg", data=data))
    unified = request.to_unified("m")
    before = json.dumps(unified)
    for adapter in ("openai", "anthropic", "gemini", "ollama", "openai_responses"):
        body = await AdapterLibrary().load(adapter).transform_request(unified)
        assert data in body and "hologram-image-" not in body
        json.loads(body)
    assert json.dumps(unified) == before


async def test_text_that_spells_a_stand_in_is_left_alone() -> None:
    spelled = "hologram-image-0123456789abcdef-0"
    request = CompletionRequest([ChatMessage.user([TextBlock(spelled), photo()])])
    body = await AdapterLibrary().load("openai").transform_request(request.to_unified("m"))
    [message] = json.loads(body)["messages"]
    assert message["content"][0]["text"] == spelled
    assert message["content"][1]["image_url"]["url"].endswith(PHOTO)


async def test_image_data_that_is_not_plain_base64_still_makes_valid_json() -> None:
    wrapped = PHOTO[:20] + "\n" + PHOTO[20:]  # MIME-style line breaks
    request = looking(ImageBlock("image/png", data=wrapped))
    body = await AdapterLibrary().load("anthropic").transform_request(request.to_unified("m"))
    sent = json.loads(body)["messages"][0]["content"][1]["source"]["data"]
    assert sent == wrapped
    stand_ins = ImageStandIns()
    assert stand_ins.take({"messages": "not a list"}) == {"messages": "not a list"}


# ---- what the scripted server reads back ------------------------------------------------------


@pytest.mark.parametrize("adapter", sorted(BASES))
async def test_the_scripted_server_reads_each_formats_images(
    server: ScriptedModelServer, make_provider, adapter: str
) -> None:
    provider = make_provider(adapter, server.url + BASES[adapter], model="gemini-2.5-flash")
    server.queue(ScriptedReply(text="a cat"), ScriptedReply(text="sales rose"))
    await provider.chat(user_image())
    [seen] = server.last_request.images
    assert (seen.role, seen.data, seen.call_id) == ("user", PHOTO, "")
    assert seen.digest == DIGEST and seen.content == base64.b64decode(PHOTO)
    await collect(provider.chat_stream(tool_image()))
    [chart] = server.last_request.images
    assert chart.role == "tool" and chart.data == CHART
    if adapter != "ollama":  # Ollama's images carry no type
        assert seen.media_type == chart.media_type == "image/png"
    if adapter in ("gemini", "ollama"):  # their wire names the tool, not our call id
        assert chart.tool == "plot_sales"
    else:
        assert chart.call_id == "call_plot_1"


async def test_the_scripted_servers_control_endpoint_lists_images_without_bytes(
    server: ScriptedModelServer, make_provider
) -> None:
    import httpx

    provider = make_provider("openai", server.base_url)
    server.queue(ScriptedReply(text="ok"))
    await provider.chat(user_image())
    async with httpx.AsyncClient(trust_env=False) as client:
        listed = (await client.get(server.url + "/_scripted/requests")).json()
    [image] = listed[-1]["images"]
    assert image["digest"] == DIGEST and image["size"] == len(base64.b64decode(PHOTO))
    assert "data" not in image


async def test_openai_sends_the_images_of_a_run_of_tool_results_in_one_user_message(
    server: ScriptedModelServer, make_provider
) -> None:
    calls = [ToolCall("c1", "snap", {}), ToolCall("c2", "plot", {})]
    request = CompletionRequest(
        [
            ChatMessage.user("show me"),
            ChatMessage.assistant("", calls),
            ChatMessage.tool(ToolResult("c1", "snap", "a photo"), [photo()]),
            ChatMessage.tool(
                ToolResult("c2", "plot", "two charts"),
                [ImageBlock(data=CHART), ImageBlock(data=CHART)],
            ),
        ]
    )
    server.queue(ScriptedReply(text="ok"))
    await make_provider("openai", server.base_url).chat(request)
    messages = server.last_request.json["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user"]
    texts = [p["text"] for p in messages[-1]["content"] if p["type"] == "text"]
    assert texts == [
        "[the image returned by snap (call c1)]",
        "[2 images returned by plot (call c2)]",
    ]
    seen = server.last_request.images
    assert [(i.call_id, i.tool, i.data) for i in seen] == [
        ("c1", "snap", PHOTO),
        ("c2", "plot", CHART),
        ("c2", "plot", CHART),
    ]


async def test_ollama_names_an_image_by_url_in_words_instead_of_failing(
    server: ScriptedModelServer, make_provider
) -> None:
    server.queue(ScriptedReply(text="ok"))
    request = looking(ImageBlock("image/png", url="https://example.org/cat.png"))
    await make_provider("ollama", server.url, accepts_images=True).chat(request)
    [message] = server.last_request.json["messages"]
    assert "https://example.org/cat.png" in message["content"] and "images" not in message


# ---- the vision flag --------------------------------------------------------------------------


def test_each_shipped_adapter_declares_whether_its_model_reads_images() -> None:
    library = AdapterLibrary()
    assert {n: library.load(n).accepts_images for n in library.names()} == DECLARED


def test_an_adapter_that_says_nothing_reads_no_images_and_a_wrong_value_is_refused() -> None:
    script = """return { name = "x", version = "1", endpoint = "/x", headers = {}, %s
      transform_request = function(r) return r end, transform_response = function(r) return {} end }"""
    assert LuaAdapter.from_source(script % "", "x.lua").accepts_images is False
    assert LuaAdapter.from_source(script % "accepts_images = true,", "x.lua").accepts_images
    with pytest.raises(AdapterError, match="accepts_images must be a boolean"):
        LuaAdapter.from_source(script % 'accepts_images = "yes",', "x.lua")


async def test_a_source_setting_overrides_the_adapters_declaration(
    config: ConfigRegistry, manager: ProviderManager, server: ScriptedModelServer
) -> None:
    await add_source(config, "local", server.url, adapter="ollama")
    await add_source(config, "gpt", server.base_url, adapter="openai")
    await config.set("core.llm.source_order", ["local", "gpt"])
    await config.set("core.llm.active_source", "local")
    await manager.refresh()
    assert manager.accepts_images is False and manager.accepts_images_of("gpt") is True
    await config.set("core.llm.sources.local.accepts_images", True)  # a llava, say
    await config.set("core.llm.sources.gpt.accepts_images", False)
    await manager.refresh()
    assert manager.accepts_images is True and manager.accepts_images_of("gpt") is False
    assert [s["accepts_images"] for s in manager.status()] == [True, False]


async def test_a_vision_setting_that_is_not_a_boolean_names_the_key(
    config: ConfigRegistry, server: ScriptedModelServer
) -> None:
    await add_source(config, "odd", server.base_url)
    await config.set("core.llm.sources.odd.accepts_images", "sometimes")
    problem = read_source(config, "odd")
    assert isinstance(problem, SourceProblem)
    from hologram.config.known import unknown_reason

    assert unknown_reason("core.llm.sources.odd.accepts_images", (), {}) is None
    assert "core.llm.sources.odd.accepts_images must be true or false" in problem.message


# ---- a model that reads no images ----------------------------------------------------------


def test_a_note_names_the_media_and_the_seemedia_call() -> None:
    request = looking(photo(digest=DIGEST, name="cat.png"))
    notes = images_as_notes(request)
    [message] = notes.request.messages
    assert isinstance(message.content, str)
    assert message.content.startswith("what is this?\n[image/png 70 B sha256:" + DIGEST[:12])
    assert "'cat.png'" in message.content and f'seemedia tool takes digest "{DIGEST}"' in (
        message.content
    )
    assert notes.images == [photo(digest=DIGEST, name="cat.png")]
    assert request.messages[0].images  # the caller's request still has its image
    unstored = images_as_notes(looking(ImageBlock(url="https://example.org/a.png")))
    text = unstored.request.messages[0].content
    assert "https://example.org/a.png" in text and "seemedia" not in text


async def test_a_source_without_vision_gets_notes_and_the_fallback_is_announced(
    config: ConfigRegistry,
    manager: ProviderManager,
    recorder: Recorder,
    server: ScriptedModelServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await add_source(config, "ds", server.url, adapter="deepseek")
    await config.set("core.llm.active_source", "ds")
    server.queue(ScriptedReply(text="I cannot see it, but I can look it up"))
    with caplog.at_level(logging.WARNING, logger="hologram.llm.manager"):
        await manager.chat(looking())
    sent = server.last_request
    assert sent.images == [] and PHOTO not in sent.body.decode()
    assert f'"{DIGEST}"' in sent.json["messages"][0]["content"]
    [event] = recorder.of(EventType.PROVIDER_IMAGES_AS_TEXT)
    assert event.payload.llm_source == "ds" and event.payload.adapter == "deepseek"
    assert event.payload.images == [
        {"digest": DIGEST, "media_type": "image/png", "size": 70, "name": ""}
    ]
    assert any("reads no images" in r.getMessage() for r in caplog.records)


async def test_a_request_without_images_is_sent_as_it_is_and_announces_nothing(
    config: ConfigRegistry, manager: ProviderManager, recorder: Recorder, server
) -> None:
    await add_source(config, "ds", server.url, adapter="deepseek")
    await config.set("core.llm.active_source", "ds")
    server.queue(ScriptedReply(text="hi"))
    await manager.chat(CompletionRequest([ChatMessage.user("hello")]))
    assert recorder.of(EventType.PROVIDER_IMAGES_AS_TEXT) == []


@pytest.mark.parametrize("streamed", [False, True])
async def test_fallback_from_a_vision_source_to_one_without_sends_each_what_it_can_read(
    config: ConfigRegistry,
    manager: ProviderManager,
    recorder: Recorder,
    server: ScriptedModelServer,
    second_server: ScriptedModelServer,
    streamed: bool,
) -> None:
    await add_source(config, "vision", server.base_url, adapter="openai")
    await add_source(config, "text", second_server.url, adapter="deepseek")
    await config.set("core.llm.source_order", ["vision", "text"])
    await config.set("core.llm.active_source", "vision")
    server.queue(ScriptedReply(error="server"))
    second_server.queue(ScriptedReply(text="from the text model"))
    if streamed:
        chunks = await collect(manager.chat_stream(looking()))
        answer = chunks[-1].response
    else:
        answer = await manager.chat(looking())
    assert answer is not None and answer.content == "from the text model"
    [first] = server.last_request.images
    assert first.data == PHOTO  # the vision source was sent the image itself
    assert second_server.last_request.images == []  # the text one, a note
    assert "seemedia" in second_server.last_request.body.decode()
    [event] = recorder.of(EventType.PROVIDER_IMAGES_AS_TEXT)
    assert event.payload.llm_source == "text"
    assert len(recorder.of(EventType.PROVIDER_FALLBACK)) == 1


async def test_fallback_from_a_source_without_vision_to_one_with_it_sends_the_image(
    config: ConfigRegistry,
    manager: ProviderManager,
    server: ScriptedModelServer,
    second_server: ScriptedModelServer,
) -> None:
    await add_source(config, "text", server.url, adapter="deepseek")
    await add_source(config, "vision", second_server.base_url, adapter="openai")
    await config.set("core.llm.source_order", ["text", "vision"])
    await config.set("core.llm.active_source", "text")
    server.queue(ScriptedReply(error="server"))
    second_server.queue(ScriptedReply(text="a cat"))
    assert (await manager.chat(looking())).content == "a cat"
    assert server.last_request.images == []
    assert [i.data for i in second_server.last_request.images] == [PHOTO]
