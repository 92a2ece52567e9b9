"""The usage ledger: what every model call cost, in tokens as the provider counted them and in
money by the price table (`core.llm.prices`), summed per source, per day and per channel.

The provider manager records each answer it returns (every caller's: turns, children,
residents, triage and the memory heartbeats' consolidation turns), so the ledger is the one
place to ask what the kernel has spent since it started.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hologram.llm.messages import USAGE_FIELDS, TokenUsage

NO_CHANNEL = "(none)"


def price_of(prices: Mapping[str, Any], model: str) -> Mapping[str, Any] | None:
    """The price entry of `model`: an exact name, else the longest matching prefix."""
    if model in prices:
        entry = prices[model]
    else:
        matches = [name for name in prices if model.startswith(name)]
        if not matches:
            return None
        entry = prices[max(matches, key=len)]
    return entry if isinstance(entry, Mapping) else None


def cost_of(prices: Mapping[str, Any], model: str, usage: TokenUsage) -> float | None:
    """What `usage` of `model` costs, prices being per million tokens: cached prompt tokens at
    the `cached` price (the `input` price when none is given), the rest of the prompt at
    `input`, every generated token (reasoning included) at `output`. None when the table
    does not price the model."""
    entry = price_of(prices, model)
    if entry is None:
        return None
    given = float(entry.get("input", 0.0))
    cached_price = float(entry.get("cached", given))
    output = float(entry.get("output", 0.0))
    cached = min(usage.cached_tokens, usage.prompt_tokens)
    fresh = usage.prompt_tokens - cached
    return (fresh * given + cached * cached_price + usage.completion_tokens * output) / 1e6


@dataclass(slots=True)
class Tally:
    calls: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)
    cost: float = 0.0
    unpriced_calls: int = 0

    def add(self, usage: TokenUsage, cost: float | None) -> None:
        self.calls += 1
        self.usage = self.usage + usage
        if cost is None:
            self.unpriced_calls += 1
        else:
            self.cost += cost

    def to_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            **self.usage.to_json(),
            "cost": round(self.cost, 6),
            "unpriced_calls": self.unpriced_calls,
        }


class UsageLedger:
    """Totals since the kernel started. `prices` is asked on every record, so a changed
    price table applies from the next call."""

    def __init__(
        self,
        prices: Callable[[], Mapping[str, Any]] = dict,
        today: Callable[[], str] | None = None,
    ) -> None:
        self._prices = prices
        self._today = today or (lambda: time.strftime("%Y-%m-%d", time.gmtime()))
        self.total = Tally()
        self.by_source: dict[str, Tally] = {}
        self.by_day: dict[str, Tally] = {}
        self.by_channel: dict[str, Tally] = {}
        self.by_model: dict[str, Tally] = {}

    def cost(self, model: str, usage: TokenUsage) -> float | None:
        return cost_of(self._prices(), model, usage)

    def record(self, source: str, model: str, channel: str, usage: TokenUsage) -> float | None:
        """Count one answer; returns its cost (None when its model has no price)."""
        cost = self.cost(model, usage)
        self.total.add(usage, cost)
        for table, key in (
            (self.by_source, source),
            (self.by_day, self._today()),
            (self.by_channel, channel or NO_CHANNEL),
            (self.by_model, model),
        ):
            table.setdefault(key, Tally()).add(usage, cost)
        return cost

    def summary(self) -> dict[str, Any]:
        def each(table: dict[str, Tally]) -> dict[str, Any]:
            return {key: tally.to_json() for key, tally in sorted(table.items())}

        return {
            "total": self.total.to_json(),
            "by_source": each(self.by_source),
            "by_day": each(self.by_day),
            "by_channel": each(self.by_channel),
            "by_model": each(self.by_model),
        }


def usage_table(summary: Mapping[str, Any]) -> str:
    """The summary as the lines `%hologram usage` prints."""
    names = ("calls", "prompt", "cached", "output", "reason", "cost")
    widths = (6, 9, 8, 8, 8, 10)
    header = f"{'':<22} " + " ".join(f"{n:>{w}}" for n, w in zip(names, widths, strict=True))
    lines = [header]

    def row(name: str, tally: Mapping[str, Any]) -> str:
        cost = f"{tally['cost']:.4f}" if tally["calls"] > tally["unpriced_calls"] else "-"
        return (
            f"{name[:22]:<22} {tally['calls']:>6} {tally['prompt_tokens']:>9} "
            f"{tally['cached_tokens']:>8} {tally['completion_tokens']:>8} "
            f"{tally['reasoning_tokens']:>8} {cost:>10}"
        )

    lines.append(row("total", summary["total"]))
    for title in ("by_source", "by_day", "by_channel"):
        lines.append(title.replace("_", " ") + ":")
        lines += [row("  " + name, tally) for name, tally in summary[title].items()]
    return "\n".join(lines)


__all__ = ["USAGE_FIELDS", "UsageLedger", "cost_of", "price_of", "usage_table"]
