"""The memory modules in a real kernel: the facilities, the shared embedder, restarts."""

from __future__ import annotations

from pathlib import Path

import pytest

from hologram import Kernel
from hologram.kernel import BootError
from hologram.memory import ColdContext, Memory, TextLog


async def test_the_kernel_provides_memory_coldcontext_and_text_memory(data_dir: Path) -> None:
    async with Kernel(data_dir) as kernel:
        state = kernel.state
        assert isinstance(state.memory, Memory) and isinstance(state.coldcontext, ColdContext)
        assert isinstance(state.text_memory, TextLog)
        assert state.memory.embedder is state.coldcontext.embedder, "two vector spaces"
        assert state.memory.embedder.name == "default"
        await state.memory.context.append("notebook", input="我养了一只猫，叫年糕")
        await state.coldcontext.commit("The cat's vet is Dr. Okafor on Elm Street")
        sections = await state.memory.recall_sections("who is the cat's vet", 500, len)
        assert sections and "Okafor" in sections[0]
    async with Kernel(data_dir) as kernel:
        assert [e.input for e in kernel.state.memory.context.events] == ["我养了一只猫，叫年糕"]


async def test_an_unknown_embedder_stops_the_boot_with_the_names_that_exist(
    data_dir: Path,
) -> None:
    async with Kernel(data_dir) as kernel:
        await kernel.config.set("core.memory.embedder", "chineseclip")
    kernel = Kernel(data_dir)
    with pytest.raises(BootError) as caught:
        await kernel.start()
    text = str(caught.value) + str(caught.value.__cause__ or "")
    assert "chineseclip" in text or "coldcontext" in text
    await kernel.shutdown()


async def test_the_turn_steps_store_input_reply_and_cleaned_tool_outputs(data_dir: Path) -> None:
    from hologram.sdk import StageContext, ToolDef, ToolResult

    async with Kernel(data_dir) as kernel:
        state = kernel.state
        state.stagehost.register_tool(
            ToolDef("weather_today", "d", handler=lambda a: "", cleaner=lambda s: s.split("|")[1])
        )
        memory = state.memory
        ctx = StageContext(raw_message="will it rain in Hangzhou?", channel="qq")
        await memory.append_input(ctx)
        await memory.append_tool_results([ToolResult("c1", "weather_today", "<tpl>|rain at 3pm")])
        ctx.final_text = "Yes, take an umbrella."
        reply = await memory.append_reply(ctx)
        assert reply.source == "agent" and reply.tool_outputs[0].content == "<tpl>|rain at 3pm"
        assert reply.vector_text == "Yes, take an umbrella. rain at 3pm"
        lines = memory.timeline()
        assert lines[0].endswith("qq: will it rain in Hangzhou?")
        assert lines[1].endswith("agent: Yes, take an umbrella.")
        logged = state.text_memory.read(None)
        assert [(r["role"], r["text"]) for r in logged] == [
            ("user", "will it rain in Hangzhou?"),
            ("agent", "Yes, take an umbrella."),
        ]
        # The graph layer adds its own tools beside these (tests/graph test them).
        assert {"coldcontext_query", "coldcontext_commit"} <= {t.name for t in memory.tools()}
        await state.coldcontext.commit("Hangzhou umbrella shop on West Lake road")
        items = await memory.recall("umbrella in Hangzhou", 1000)
        assert items and items[0].source == "coldcontext" and "West Lake" in items[0].text
