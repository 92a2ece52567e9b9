"""Rule distillation (spec: pipeline.Pipeline): personal facts picked out of what the user
says by pattern, every ten minutes, with the raw records kept seven days.

我叫X / 我住在X / 我喜欢X / 我X岁 / 我的工作是X, and their English equivalents, become
triples about the speaker. Name, home, age and job hold one value at a time, so "I moved:
I live in Berlin now" closes the fact that they lived in Paris.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hologram.memory.graph.store import GraphStore
from hologram.memory.graph.types import Triple
from hologram.sdk import Clock

log = logging.getLogger(__name__)

_ZH_END = r"[^，。！？、；,.!?;\s]{1,20}"
_EN_END = r"[^,.!?;\n]{1,40}"
_ZH_NUM = "零一二两三四五六七八九十百"


@dataclass(frozen=True, slots=True)
class Rule:
    pattern: re.Pattern[str]
    relation: str
    target_type: str


RULES: tuple[Rule, ...] = (
    Rule(re.compile(rf"我叫(?P<x>{_ZH_END})"), "name", "person"),
    Rule(re.compile(rf"我住在(?P<x>{_ZH_END})"), "lives_in", "place"),
    Rule(re.compile(rf"我喜欢(?P<x>{_ZH_END})"), "likes", ""),
    Rule(re.compile(rf"我(?:今年)?(?P<x>\d{{1,3}}|[{_ZH_NUM}]{{1,4}})岁"), "age", "number"),
    Rule(re.compile(rf"我的工作是(?P<x>{_ZH_END})"), "job", "job"),
    Rule(
        re.compile(rf"\b(?:my name is|i am called|i'm called|call me)\s+(?P<x>{_EN_END})", re.I),
        "name",
        "person",
    ),
    Rule(re.compile(rf"\bi (?:now )?live in\s+(?P<x>{_EN_END})", re.I), "lives_in", "place"),
    Rule(re.compile(rf"\bi (?:really )?(?:like|love|enjoy)\s+(?P<x>{_EN_END})", re.I), "likes", ""),
    Rule(re.compile(r"\bi(?: am|'m) (?P<x>\d{1,3}) years? old\b", re.I), "age", "number"),
    Rule(re.compile(rf"\b(?:my job is|i work as)\s+(?:an? )?(?P<x>{_EN_END})", re.I), "job", "job"),
)

_EN_CUT = re.compile(r"\s+(?:and|but|because|so|who|which|now)\b.*$", re.I)
_ZH_CUT = re.compile(r"(?:和|但是|因为|所以|了|的时候).*$")
_ZH_DIGITS = {ch: i for i, ch in enumerate("零一二三四五六七八九")} | {"两": 2}


def _zh_number(text: str) -> str:
    """一 … 九十九 as digits (ages); anything else is returned unchanged."""
    if text.isdigit() or not text:
        return text
    if "十" not in text:
        return str(_ZH_DIGITS[text]) if len(text) == 1 and text in _ZH_DIGITS else text
    tens, _, ones = text.partition("十")
    if (tens and tens not in _ZH_DIGITS) or (ones and ones not in _ZH_DIGITS):
        return text
    return str((_ZH_DIGITS[tens] if tens else 1) * 10 + (_ZH_DIGITS[ones] if ones else 0))


def extract(text: str, speaker: str = "user") -> list[Triple]:
    """The triples the rules find in `text`, said by `speaker`; the sentence is kept."""
    triples: list[Triple] = []
    for rule in RULES:
        for match in rule.pattern.finditer(text):
            value = match.group("x").strip()
            value = _EN_CUT.sub("", value) if value.isascii() else _ZH_CUT.sub("", value)
            if rule.relation == "age":
                value = _zh_number(value)
            value = value.strip(" '\"“”")
            if not value:
                continue
            triples.append(
                Triple(
                    speaker,
                    rule.relation,
                    value,
                    "person",
                    rule.target_type,
                    sentence_text=text.strip()[:500],
                    origin="distill",
                )
            )
    return triples


EXPIRY_CHECK_MAX_S = 86400.0
"""Processed records past retention are looked for when the oldest of them comes of age,
and at least this often on the kernel's clock (a retention setting shortened since)."""


def _next_check(oldest_at: float | None, retention_s: float, now: float) -> float:
    """When the processed record said at `oldest_at` comes of age (capped at a day)."""
    due = float("inf") if oldest_at is None else float(oldest_at) + retention_s
    return min(due, now + EXPIRY_CHECK_MAX_S)


class DistillPipeline:
    """Records what users say (durably, in the graph database) and distils the pending
    records into the graph on each tick.

    A tick with nothing recorded since the last one touches no database: the pipeline is
    the graph database's only writer of records, so it knows. An idle companion's ticks
    are then free, and a replay's clock, which moves through weeks of ten-minute ticks,
    does not pay five SQLite round trips for each."""

    def __init__(
        self,
        graph: GraphStore,
        clock: Clock,
        *,
        retention_s: Callable[[], float] = lambda: 7 * 86400.0,
    ) -> None:
        self.graph = graph
        self.clock = clock
        self.retention_s = retention_s
        #: Records may wait: true at start (a run before this one may have left some) and
        #: after every `record`; cleared as a tick reads them. Processed ones are looked for
        #: past retention at start, then when the oldest comes of age.
        self._recorded = True
        self._next_expiry_check = float("-inf")

    async def record(self, text: str, speaker: str = "user") -> None:
        if not isinstance(text, str) or not text.strip():
            return
        async with self.graph.transaction() as db:
            await db.execute(
                "INSERT INTO distill_records (speaker, text, at) VALUES (?, ?, ?)",
                (speaker or "user", text, self.clock.now()),
            )
        self._recorded = True

    async def pending(self) -> int:
        row = await self.graph.fetchone(
            "SELECT COUNT(*) FROM distill_records WHERE processed_at IS NULL"
        )
        return int(row[0])

    async def distill_once(self) -> dict[str, Any]:
        """Distil every pending record; drop processed records past retention."""
        now = self.clock.now()
        expiring = now >= self._next_expiry_check
        if not self._recorded and not expiring:
            return {"records": 0, "triples": 0, "closed": 0, "expired": 0}
        # Cleared before the read: a record written while this tick runs sets it again.
        self._recorded = False
        rows = await self.graph.fetchall(
            "SELECT id, speaker, text, at FROM distill_records WHERE processed_at IS NULL "
            "ORDER BY id"
        )
        triples = [t for _, speaker, text, _ in rows for t in extract(text, speaker)]
        report = await self.graph.commit(triples, origin="distill") if triples else None
        expired = 0
        if rows or expiring:
            async with self.graph.transaction() as db:
                await db.executemany(
                    "UPDATE distill_records SET processed_at = ? WHERE id = ?",
                    [(now, r[0]) for r in rows],
                )
                retention = self.retention_s()
                if expiring:
                    cursor = await db.execute(
                        "DELETE FROM distill_records WHERE processed_at IS NOT NULL AND at < ?",
                        (now - retention,),
                    )
                    expired = cursor.rowcount
                    oldest = list(
                        await db.execute_fetchall(
                            "SELECT MIN(at) FROM distill_records WHERE processed_at IS NOT NULL"
                        )
                    )
                    self._next_expiry_check = _next_check(oldest[0][0], retention, now)
                elif rows:
                    soonest = _next_check(min(r[3] for r in rows), retention, now)
                    self._next_expiry_check = min(self._next_expiry_check, soonest)
        return {
            "records": len(rows),
            "triples": len(triples),
            "closed": len(report.closed) if report else 0,
            "expired": expired,
        }
