"""The context budget (spec 000, "Context Budget") and the token estimate."""

from __future__ import annotations

import logging

import pytest

from hologram.llm import compute_budget, context_window, estimate_message_tokens, estimate_tokens
from hologram.llm.budget import CONSERVATIVE_WINDOW


def test_a_declared_context_window_wins_over_the_table() -> None:
    assert context_window("gpt-4o", declared=50_000) == (50_000, "declared")


def test_known_models_are_looked_up_by_longest_prefix() -> None:
    assert context_window("gpt-4o-mini-2024-07-18") == (128_000, "known")
    assert context_window("gpt-4.1-nano") == (1_047_576, "known")
    assert context_window("models/gemini-1.5-pro-002") == (2_097_152, "known")
    assert context_window("claude-sonnet-4-20250514") == (200_000, "known")


def test_an_unknown_model_warns_and_falls_back_conservatively(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="hologram.llm.budget"):
        window, origin = context_window("AUTO")
    assert (window, origin) == (CONSERVATIVE_WINDOW, "fallback")
    assert "core.llm.sources.<name>.context_window" in caplog.text and "'AUTO'" in caplog.text


def test_the_working_band_is_eighty_percent_capped_at_600k() -> None:
    assert compute_budget(128_000).target == 102_400
    assert compute_budget(1_048_576).target == 600_000
    assert compute_budget(1_048_576, max_target_tokens=200_000).target == 200_000


def test_memory_gets_a_third_of_what_the_fixed_prompt_leaves_and_context_the_rest() -> None:
    budget = compute_budget(128_000, fixed=2_400)
    assert budget.memory == (102_400 - 2_400) // 3 == 33_333
    assert budget.context == 102_400 - 2_400 - 33_333
    assert budget.memory + budget.context + budget.fixed == budget.target


def test_a_fixed_prompt_larger_than_the_band_leaves_nothing_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="hologram.llm.budget"):
        budget = compute_budget(8_000, fixed=10_000)
    assert budget.overfull and budget.memory == 0 and budget.context == 0
    assert "fills the working band" in caplog.text


def test_bad_budget_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="max_ctx must be positive"):
        compute_budget(0)
    with pytest.raises(ValueError, match="fixed must not be negative"):
        compute_budget(1000, fixed=-1)


def test_the_estimate_counts_a_token_per_cjk_character_and_four_characters_otherwise() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("你好世界") == 4
    assert estimate_tokens("こんにちは") == 5
    assert estimate_tokens("hello world!") == 3  # 12 characters
    assert estimate_tokens("我喜欢 Python") == 3 + 2  # 3 ideographs + " Python" (7 chars)
    # Chinese text costs far more per character than English: the estimate must show it.
    assert estimate_tokens("记" * 100) > 3 * estimate_tokens("a" * 100)


def test_message_estimates_add_a_per_message_overhead() -> None:
    assert estimate_message_tokens(["hi", "你好"]) == estimate_tokens("hi") + 2 + 2 * 4
