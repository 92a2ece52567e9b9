"""The offline model shows memory: with no LLM configured it quotes what the kernel recalled
for the turn, says it is offline, and names the one setting that connects a real model."""

from __future__ import annotations

from pathlib import Path

from hologram import Kernel
from hologram.llm.offline_model import NO_LLM_HINT, OfflineResponder, recalled_lines
from hologram.memory.recall.hybrid import Place
from hologram.sdk import PromptSection


def request(system: str, asked: str) -> dict:
    return {
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": asked},
        ]
    }


async def test_what_do_i_love_after_i_love_climbing_quotes_the_climbing_turn(
    data_dir: Path,
) -> None:
    async with Kernel(data_dir, environ={}) as kernel:
        await kernel.say("I love climbing")
        await kernel.say("The weather is grey today")
        reply = await kernel.say("What do I love?")
    assert reply.startswith("(offline scripted model) No LLM is configured")
    assert "“I love climbing” (notebook," in reply
    assert "weather" not in reply
    assert NO_LLM_HINT["en"] in reply


async def test_a_search_of_memory_finds_what_was_just_said(data_dir: Path) -> None:
    async with Kernel(data_dir, environ={}) as kernel:
        await kernel.say("I love climbing")
        found = await kernel.state.memory.search("climbing", 3)
        assert (found[0].place, found[0].text) == (Place.CONTEXT, "I love climbing")
        # The turn's own recall leaves the window out: the prompt carries it as the timeline.
        assert await kernel.state.memory.search("climbing", 3, with_window=False) == []


def test_the_best_recalled_lines_come_first_and_the_models_own_words_are_no_memory() -> None:
    system = "\n".join(
        [
            "persona",
            PromptSection.MEMORY,
            "- (2026-01-01 10:00 UTC, qq) Anna climbs on Sundays → (offline scripted model) ok",
            "- (2026-01-02 10:00 UTC, qq) Anna moved to Lyon",
            PromptSection.TIMELINE,
            "[2026-01-03 10:00] notebook: Anna climbs with me on Sundays at the gym",
            "[2026-01-03 10:01] agent: Anna climbs? (offline scripted model) noted",
            "[2026-01-03 10:02] notebook: When does Anna climb?",
        ]
    )
    lines = recalled_lines(
        request(system, "When does Anna climb?")["messages"], "When does Anna climb?"
    )
    assert [line.text for line in lines] == [
        "Anna climbs on Sundays",
        "Anna climbs with me on Sundays at the gym",
        "Anna moved to Lyon",
    ]
    assert (lines[0].where, lines[0].when) == ("qq", "2026-01-01 10:00")


def test_with_nothing_related_it_says_what_it_heard_and_how_to_connect_a_model() -> None:
    system = f"persona\n{PromptSection.TIMELINE}\n[2026-01-03 10:00] notebook: it rains"
    english = OfflineResponder().answer(request(system, "I like green tea")).text
    assert "nothing I recalled relates" in english and "“I like green tea”" in english
    assert NO_LLM_HINT["en"] in english
    chinese = OfflineResponder().answer(request("", "我喜欢绿茶")).text
    assert chinese.startswith("（离线脚本模型）") and NO_LLM_HINT["zh"] in chinese


def test_chinese_memory_is_matched_by_character_pairs() -> None:
    system = f"{PromptSection.TIMELINE}\n[2026-01-03 10:00] qq: 我喜欢攀岩\n[2026-01-03 10:01] qq: 今天下雨"
    answer = OfflineResponder().answer(request(system, "我喜欢什么？")).text
    assert answer.startswith("（离线脚本模型）尚未配置 LLM")
    assert "“我喜欢攀岩”（qq, 2026-01-03 10:00）" in answer and "下雨" not in answer
