"""Output channels: generated tools, caps, meta, long-message splitting."""

from __future__ import annotations

from pathlib import Path

import pytest

from hologram import Kernel
from hologram.channels import CollectingChannel, OutputChannels, OutputRefused, split_message
from hologram.llm import ScriptedModelServer
from hologram.sdk import OutputCap, ToolCall
from hologram.stages import ToolRunner


@pytest.fixture
def channels() -> OutputChannels:
    return OutputChannels()


def test_a_channel_generates_a_send_tool_and_a_help_tool(channels: OutputChannels) -> None:
    channels.register_output_channel(
        "qq", OutputCap.TEXT | OutputCap.IMAGE, "QQ chats", CollectingChannel("qq")
    )
    send, help_tool = channels.tools()
    assert (send.name, help_tool.name) == ("output_send__qq", "output_send__qq_help")
    assert send.parameters["properties"]["type"]["enum"] == ["text", "image"]
    assert send.parameters["required"] == ["payload"]


async def test_a_type_the_channel_cannot_carry_is_refused_to_the_model(
    channels: OutputChannels,
) -> None:
    sink = CollectingChannel("test")
    channels.register_output_channel("test", OutputCap.TEXT, "text only", sink)
    tools = {t.name: t for t in channels.tools()}
    result = await ToolRunner(lambda: 5.0).execute(
        ToolCall("1", "output_send__test", {"payload": "cat.png", "type": "image"}), tools
    )
    assert result.is_error and '"image" is not one of "text"' in result.content
    with pytest.raises(OutputRefused, match="cannot carry 'audio'; it carries: text"):
        await channels.send("test", "x", type="audio")
    assert sink.deliveries == []


async def test_long_text_is_split_into_parts_sent_in_order(channels: OutputChannels) -> None:
    sink = CollectingChannel("sms")
    channels.register_output_channel("sms", OutputCap.TEXT, "short messages", sink, max_chars=25)
    text = "First sentence here. Second one follows. And a third."
    receipt = await channels.send("sms", text)
    assert "in 3 parts" in receipt
    assert sink.texts() == ["First sentence here. ", "Second one follows. ", "And a third."]
    assert "".join(sink.texts()) == text


async def test_meta_is_passed_as_an_object_and_bad_meta_is_refused(
    channels: OutputChannels,
) -> None:
    sink = CollectingChannel("qq")
    channels.register_output_channel("qq", OutputCap.TEXT, "QQ", sink, meta_doc='{"group": id}')
    await channels.send("qq", "hi", '{"group": 42}')
    assert sink.deliveries[0].meta == {"group": 42}
    with pytest.raises(OutputRefused, match="not valid JSON"):
        await channels.send("qq", "hi", "{group")
    with pytest.raises(OutputRefused, match="no output channel 'mail'; live channels: qq"):
        await channels.send("mail", "hi")


async def test_the_help_tool_documents_types_and_meta(channels: OutputChannels) -> None:
    channels.register_output_channel(
        "qq", OutputCap.TEXT, "QQ", CollectingChannel("qq"), meta_doc='{"group": <id>}'
    )
    tools = {t.name: t for t in channels.tools()}
    result = await ToolRunner(lambda: 5.0).execute(ToolCall("1", "output_send__qq_help"), tools)
    assert '{"group": <id>}' in result.content and "types: text" in result.content


def test_channel_names_and_duplicates_are_checked(channels: OutputChannels) -> None:
    channels.register_output_channel("qq", OutputCap.TEXT, "QQ", CollectingChannel("qq"))
    with pytest.raises(ValueError, match="already registered"):
        channels.register_output_channel("qq", OutputCap.TEXT, "QQ", CollectingChannel("qq"))
    with pytest.raises(ValueError, match="not allowed"):
        channels.register_output_channel("Q Q", OutputCap.TEXT, "x", CollectingChannel("x"))


@pytest.mark.parametrize(
    ("text", "limit"),
    [
        ("", 5),
        ("short", 10),
        ("a" * 25, 10),
        ("one two three four five six", 9),
        ("你好。世界！再见。", 4),
    ],
)
def test_splitting_keeps_every_character_and_respects_the_limit(text: str, limit: int) -> None:
    parts = split_message(text, limit)
    assert "".join(parts) == text
    assert all(len(p) <= limit for p in parts)


def test_splitting_prefers_paragraph_and_sentence_breaks() -> None:
    assert split_message("para one.\n\npara two.", 15) == ["para one.\n\n", "para two."]
    assert split_message("Hello there. General Kenobi.", 20) == ["Hello there. ", "General Kenobi."]


async def test_a_production_kernel_offers_the_model_no_test_channel(
    data_dir: Path, model: ScriptedModelServer
) -> None:
    environ = {"HOLOGRAM_LLM_BASE_URL": model.base_url, "HOLOGRAM_LLM_MODEL": "scripted-model"}
    async with Kernel(data_dir, environ=environ) as kernel:
        assert kernel.state.agent is not None
        offered = set(kernel.state.agent.build_tool_defs())

    assert "output_send__notebook" in offered
    assert not {name for name in offered if name.startswith("output_send__test")}
