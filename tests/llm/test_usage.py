"""The usage ledger: prices by model name, the cost of a call's tokens, totals per source, day
and channel, and the table `%hologram usage` prints."""

from __future__ import annotations

import pytest

from hologram.llm import UsageLedger, usage_table
from hologram.llm.messages import TokenUsage
from hologram.llm.usage import NO_CHANNEL, cost_of, price_of

PRICES = {
    "gpt-4o": {"input": 2.5, "cached": 1.25, "output": 10.0},
    "gpt-4o-mini": {"input": 0.15, "output": 0.6},
    "claude": {"input": 3.0, "output": 15.0},
}


@pytest.mark.parametrize(
    ("model", "entry"),
    [
        ("gpt-4o", "gpt-4o"),  # the exact name
        ("gpt-4o-mini", "gpt-4o-mini"),  # exact, though "gpt-4o" is a prefix of it
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),  # the longest matching prefix
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("claude-sonnet-4", "claude"),
    ],
)
def test_a_models_price_is_its_own_entry_else_the_longest_prefix(model: str, entry: str) -> None:
    assert price_of(PRICES, model) == PRICES[entry]


def test_a_model_the_table_does_not_name_has_no_price_and_no_cost() -> None:
    assert price_of(PRICES, "qwen-max") is None
    assert cost_of(PRICES, "qwen-max", TokenUsage(prompt_tokens=1000)) is None
    assert price_of({"odd": 3}, "odd") is None  # an entry that is not a table prices nothing


def test_cached_prompt_tokens_cost_the_cached_price_and_reasoning_is_output() -> None:
    usage = TokenUsage(
        prompt_tokens=1_000_000,
        completion_tokens=200_000,
        cached_tokens=400_000,
        reasoning_tokens=50_000,
    )
    # 600k fresh at 2.5, 400k cached at 1.25, 200k generated (reasoning among them) at 10.
    assert cost_of(PRICES, "gpt-4o", usage) == pytest.approx(1.5 + 0.5 + 2.0)
    # No cached price: cached tokens cost the input price.
    assert cost_of(PRICES, "gpt-4o-mini", usage) == pytest.approx(0.15 + 0.12)
    # A provider that reports more cached tokens than prompt tokens is not paid back.
    odd = TokenUsage(prompt_tokens=100, cached_tokens=500)
    assert cost_of(PRICES, "gpt-4o", odd) == pytest.approx(100 * 1.25 / 1e6)


def test_the_ledger_sums_per_source_day_channel_and_model_and_counts_unpriced_calls() -> None:
    days = iter(["2026-12-05", "2026-12-05", "2026-12-06"])
    ledger = UsageLedger(lambda: PRICES, today=lambda: next(days))
    first = ledger.record("main", "gpt-4o", "notebook", TokenUsage(1000, 100))
    ledger.record("main", "gpt-4o", "http", TokenUsage(2000, 200, cached_tokens=1000))
    ledger.record("backup", "qwen-max", "", TokenUsage(500, 50))
    assert first == pytest.approx((1000 * 2.5 + 100 * 10.0) / 1e6)
    summary = ledger.summary()
    total = summary["total"]
    assert (total["calls"], total["prompt_tokens"], total["completion_tokens"]) == (3, 3500, 350)
    assert total["unpriced_calls"] == 1 and total["cached_tokens"] == 1000
    assert total["cost"] == pytest.approx((1000 * 2.5 + 1000 * 2.5 + 1000 * 1.25 + 300 * 10) / 1e6)
    assert {day: t["calls"] for day, t in summary["by_day"].items()} == {
        "2026-12-05": 2,
        "2026-12-06": 1,
    }
    assert {s: t["calls"] for s, t in summary["by_source"].items()} == {"backup": 1, "main": 2}
    assert set(summary["by_channel"]) == {"http", "notebook", NO_CHANNEL}
    assert (
        summary["by_model"]["qwen-max"]["cost"] == 0
        and summary["by_model"]["qwen-max"]["unpriced_calls"] == 1
    )


def test_a_changed_price_table_prices_the_next_call() -> None:
    prices: dict[str, dict[str, float]] = {}
    ledger = UsageLedger(lambda: prices)
    assert ledger.record("main", "m", "http", TokenUsage(1_000_000, 0)) is None
    prices["m"] = {"input": 1.0}
    assert ledger.record("main", "m", "http", TokenUsage(1_000_000, 0)) == pytest.approx(1.0)


def test_the_printed_table_has_a_row_per_source_day_and_channel_and_no_cost_when_unpriced() -> None:
    days = iter(["2026-12-05", "2026-12-06"])
    ledger = UsageLedger(lambda: {"m": {"input": 1.0, "output": 2.0}}, today=lambda: next(days))
    ledger.record("main", "m", "notebook", TokenUsage(1000, 500, reasoning_tokens=7))
    ledger.record("backup", "unpriced", "http", TokenUsage(10, 5))
    lines = usage_table(ledger.summary()).splitlines()
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:] if len(line.split()) > 1}
    assert rows["total"] == ["2", "1010", "0", "505", "7", "0.0020"]
    assert rows["main"][-1] == "0.0020" and rows["backup"][-1] == "-"
    assert rows["2026-12-05"][0] == "1" and rows["2026-12-06"][0] == "1"
    assert rows["notebook"][:2] == ["1", "1000"] and rows["http"][-1] == "-"
    assert [line for line in lines if line.endswith(":")] == [
        "by source:",
        "by day:",
        "by channel:",
    ]
