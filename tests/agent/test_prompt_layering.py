"""Prompt layering (spec 000): each text where its lifetime puts it."""

from __future__ import annotations

from pathlib import Path

import pytest

from hologram import Kernel
from hologram.agent import (
    SKILL_INFO,
    Persona,
    PromptBudget,
    PromptInputs,
    Skill,
    SkillIndex,
    build_system_prompt,
    parse_skill_file,
)
from hologram.channels import CollectingChannel, OutputChannels
from hologram.llm import ScriptedModelServer
from hologram.sdk import MemItem, OutputCap, PromptSection, ToolCall
from hologram.stages import ToolRunner

from .test_turn_pipeline import system_prompt


def test_persona_comes_from_personal_md_else_the_setting(tmp_path: Path) -> None:
    path = tmp_path / "personal" / "personal.md"
    persona = Persona(path, lambda: "From the setting.")
    assert persona.text() == "From the setting."
    path.parent.mkdir()
    path.write_text("You are Mira. Call the user Sam.\n", encoding="utf-8")
    assert persona.text() == "You are Mira. Call the user Sam."


def test_output_rules_list_exactly_the_live_channels_offered() -> None:
    channels = OutputChannels()
    channels.register_output_channel("qq", OutputCap.TEXT, "QQ chats", CollectingChannel("qq"))
    channels.register_output_channel("mail", OutputCap.FILE, "e-mail", CollectingChannel("m"))
    prompt = build_system_prompt(
        PromptInputs(
            persona="P",
            reply_channel="qq",
            channels=channels.channels(),
            offered_tools=frozenset({"output_send__qq", "output_send__qq_help"}),
        )
    )
    assert "delivered on the 'qq' channel" in prompt
    assert "output_send__qq: QQ chats (types: text)" in prompt
    assert "output_send__mail" not in prompt  # its tools are not offered this turn


def test_the_parallelism_rule_appears_only_when_tools_are_offered() -> None:
    bare = build_system_prompt(PromptInputs(persona="P", reply_channel=""))
    tooled = build_system_prompt(
        PromptInputs(persona="P", reply_channel="", offered_tools=frozenset({"x"}))
    )
    assert "concurrently" not in bare and "concurrently" in tooled


def test_the_skills_index_carries_names_and_descriptions_not_bodies() -> None:
    skills = [Skill("trip", "plan a trip step by step", "1. ask dates\n2. book")]
    prompt = build_system_prompt(
        PromptInputs(
            persona="P", reply_channel="", skills=skills, offered_tools=frozenset({SKILL_INFO})
        )
    )
    assert "- trip: plan a trip step by step" in prompt and "ask dates" not in prompt


def test_memory_and_context_stay_within_their_budgets() -> None:
    memory = [MemItem(f"fact {i} " + "x" * 40, "graph", score=i) for i in range(50)]
    timeline = [f"turn {i}: " + "y" * 40 for i in range(50)]
    prompt = build_system_prompt(
        PromptInputs(
            persona="P",
            reply_channel="",
            memory=memory,
            timeline=timeline,
            budget=PromptBudget(memory_tokens=60, context_tokens=60),
        )
    )
    assert "fact 49" in prompt and "fact 0 " not in prompt  # the most relevant first
    assert "turn 49" in prompt and "turn 0:" not in prompt  # the newest first
    assert prompt.index("turn 48") < prompt.index("turn 49")  # still in time order


def test_skill_files_load_from_the_data_dir_and_broken_ones_are_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "trip").mkdir()
    (tmp_path / "trip" / "SKILL.md").write_text(
        "---\nname: trip\ndescription: plan a trip\n---\n1. ask dates\n", encoding="utf-8"
    )
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "SKILL.md").write_text("no front matter", encoding="utf-8")
    index = SkillIndex()
    assert index.load_dir(tmp_path) == ["trip"]
    assert "needs a 'description:'" in caplog.text
    assert parse_skill_file(tmp_path / "trip" / "SKILL.md").body == "1. ask dates"


async def test_skill_info_exists_only_with_skills_and_returns_the_body() -> None:
    index = SkillIndex()
    assert index.tool() is None
    index.add(Skill("trip", "plan a trip", "1. ask dates"))
    tool = index.tool()
    assert tool is not None and tool.name == SKILL_INFO
    result = await ToolRunner(lambda: 5.0).execute(
        ToolCall("1", SKILL_INFO, {"name": "trip"}), {SKILL_INFO: tool}
    )
    assert result.content == "1. ask dates"


async def test_the_knowledge_most_relevant_to_the_input_is_in_the_system_prompt(
    kernel: Kernel, model: ScriptedModelServer
) -> None:
    kb = kernel.state.knowledge
    assert kb is not None
    await kb.create("garden/tomatoes", "Tomatoes need watering every morning in July.")
    await kb.create("cars/tyres", "Check the tyre pressure once a month.")
    model.queue_text("Water them in the morning.")

    await kernel.say("how often do the tomatoes need watering?")

    prompt = system_prompt(model.last_request)
    assert PromptSection.KNOWLEDGE in prompt
    assert "Tomatoes need watering every morning in July." in prompt
    assert prompt.index(PromptSection.KNOWLEDGE) > prompt.index("## Output")
    assert "tyre pressure" not in prompt


async def test_knowledge_in_the_prompt_can_be_switched_off(
    kernel: Kernel, model: ScriptedModelServer
) -> None:
    assert kernel.state.knowledge is not None
    await kernel.state.knowledge.create("garden/tomatoes", "Tomatoes need watering daily.")
    await kernel.config.set("core.agent.knowledge_hits", 0)
    model.queue_text("ok")

    await kernel.say("when should I water the tomatoes?")

    assert PromptSection.KNOWLEDGE not in system_prompt(model.last_request)
