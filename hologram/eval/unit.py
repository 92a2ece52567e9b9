"""One unit of work: one configuration, one conversation, a fresh kernel in its own data dir.

A unit boots a real kernel on an empty data dir with the configuration's settings, replays
the conversation on its dates, asks every probe, and returns one row per probe. Units share
nothing, so they run side by side in one process, in worker processes or on a cluster.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from hologram.config import CORE_DEFAULTS, ConfigRegistry, MemorySettings
from hologram.eval.config import EvalConfig, Ranker
from hologram.eval.dataset import Conversation, Probe
from hologram.eval.load import load_dataset
from hologram.eval.metrics import probe_scores
from hologram.eval.replay import ReplayLog, replay, start_clock, turn_text
from hologram.eval.tiers import BM25Retriever, Retriever, make_retriever
from hologram.facade import Kernel
from hologram.kernel import Module
from hologram.llm import estimate_tokens
from hologram.memory import RELATED_DOCS_HEADER, Segmenter
from hologram.sdk import EventType

HEARTBEAT_EVENT = "heartbeat_tick"
"""Counted per unit: how often the memory's heartbeat loops ticked during the replay."""


@dataclass(frozen=True, slots=True)
class Unit:
    config: EvalConfig
    dataset: str
    """Path of the dataset (a project directory or a LoCoMo JSON file)."""
    conversation: str
    variants: tuple[EvalConfig, ...] = ()
    """Configurations that differ from `config` only in their name and recall weights:
    asked of the same replayed memory (weights rank the probes, they do not change what
    the replay stores), so a sweep of recall's steps replays each conversation once."""

    @property
    def configs(self) -> tuple[EvalConfig, ...]:
        return (self.config, *self.variants)

    @property
    def key(self) -> str:
        name = Path(self.dataset).stem or Path(self.dataset).name
        safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in self.conversation)
        key = self.config.key
        if self.variants:
            names = [(c.name, c.key) for c in self.configs]
            key = hashlib.sha1(json.dumps(names).encode()).hexdigest()[:10]
        return f"{self.config.name}-{key}-{name}-{safe}"


@dataclass(slots=True)
class UnitResult:
    unit: Unit
    rows: list[dict[str, Any]]
    info: dict[str, Any] = field(default_factory=dict)


def _conversation(unit: Unit) -> tuple[str, Conversation]:
    dataset = load_dataset(unit.dataset)
    for conversation in dataset.conversations:
        if conversation.id == unit.conversation:
            return dataset.name, conversation
    raise KeyError(f"{unit.dataset} has no conversation {unit.conversation!r}")


async def _write_settings(data_dir: Path, settings: dict[str, Any]) -> None:
    """Store the configuration's settings before boot: modules read them at init."""
    registry = await ConfigRegistry.open(data_dir / "config.db", environ={})
    registry.register(CORE_DEFAULTS)
    try:
        for key, value in settings.items():
            await registry.set(key, value)
    finally:
        await registry.close()


def prompt_tokens(texts: Sequence[str], budget: int, top: int) -> int:
    """Tokens of the memory section the prompt would carry: the header and the first `top`
    hits, as many as fit in `budget` (a ceiling, as the prompt builder treats it)."""
    used = estimate_tokens(RELATED_DOCS_HEADER)
    taken = 0
    for text in texts[:top]:
        cost = estimate_tokens(f"- {text}")
        if used + cost > budget:
            break
        used += cost
        taken += 1
    return used if taken else 0


async def _graph_blocks(state: object) -> int | None:
    graph = getattr(state, "graph", None)
    return None if graph is None else len(await graph.store.blocks.list("text"))


async def run_unit(
    unit: Unit,
    work_dir: Path | None = None,
    *,
    modules: Callable[[], Sequence[Module]] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> UnitResult:
    """Run `unit` in a fresh kernel. `modules` replaces the real module set (tests add a
    module that records clock ticks); `work_dir` holds the data dir (a temp dir if None);
    `progress(done, steps)` is told after each replayed turn and each asked probe."""
    dataset_name, conversation = _conversation(unit)
    steps = unit_steps(conversation, len(unit.configs))
    report = progress or (lambda _done, _steps: None)
    config = unit.config
    if config.ranker is Ranker.BM25:
        return await _run_baseline(unit, dataset_name, conversation, report)
    with tempfile.TemporaryDirectory(dir=work_dir, prefix="eval-") as tmp:
        data_dir = Path(tmp) / "data"
        await _write_settings(data_dir, config.settings)
        clock = start_clock(conversation)
        kernel = Kernel(
            data_dir,
            clock=clock,
            environ={},
            modules=None if modules is None else list(modules()),
        )
        started = time.perf_counter()
        async with kernel:
            memory, cold = kernel.state.memory, kernel.state.coldcontext
            assert memory is not None and cold is not None, "a replay needs memory modules"
            ticks: list[float] = []
            kernel.events.subscribe(HEARTBEAT_EVENT, lambda _e: ticks.append(clock.now()))
            log = ReplayLog()
            kernel.events.subscribe(EventType.COLD_CONTEXT_ARCHIVED, log.on_archived)
            await replay(
                memory,
                log,
                clock,
                conversation,
                config,
                lambda turns, _turns: report(turns, steps),
            )
            replay_s = time.perf_counter() - started
            segmenter = Segmenter()
            await asyncio.to_thread(segmenter.keywords, "warm up")  # jieba's load is not a query
            query_top = kernel.config.read(MemorySettings).query_top
            rows = []
            sessions = session_map(conversation)
            asked = conversation.turn_count
            words = cold.recall_index.words
            for each in unit.configs:
                # The weights are read on every search, by the one index the window, the
                # cold context and the graph's text blocks share; the replay ran with the
                # defaults, so every configuration of the unit asks the same memory.
                words.weights = each.recall_weights()
                retriever = await make_retriever(
                    memory, cold, kernel.state.graph, each, log, segmenter
                )
                for probe in conversation.probes:
                    rows.append(
                        await _ask(retriever, probe, each, unit, dataset_name, query_top, sessions)
                    )
                    asked += 1
                    report(asked, steps)
            info = {
                "turns": log.turns,
                "prunes": log.prunes,
                "archived": log.archived,
                "window": len(memory.context),
                "cold_documents": len(cold),
                "graph_blocks": await _graph_blocks(kernel.state),
                "heartbeat_ticks": len(ticks),
                "replay_seconds": replay_s,
                "first_turn_at": next(conversation.turns()).at if conversation.turn_count else None,
                "clock_at_end": clock.now(),
                "problems": list(conversation.problems),
            }
    return UnitResult(unit, rows, info)


async def _run_baseline(
    unit: Unit,
    dataset_name: str,
    conversation: Conversation,
    report: Callable[[int, int], None],
) -> UnitResult:
    """The BM25 baseline: every turn as the configuration's template stores it, no kernel."""
    steps = unit_steps(conversation)
    segmenter = Segmenter()
    documents = [(t.id, turn_text(unit.config.text, t)) for t in conversation.turns()]
    retriever = await asyncio.to_thread(BM25Retriever, documents, segmenter)
    report(conversation.turn_count, steps)
    sessions = session_map(conversation)
    rows = []
    query_top = MemorySettings().query_top
    for asked, probe in enumerate(conversation.probes, 1):
        rows.append(
            await _ask(retriever, probe, unit.config, unit, dataset_name, query_top, sessions)
        )
        report(conversation.turn_count + asked, steps)
    return UnitResult(unit, rows, {"turns": conversation.turn_count, "baseline": "bm25s"})


def session_map(conversation: Conversation) -> dict[str, str]:
    """Each turn's session, for session recall."""
    return {t.id: str(s.index) for s in conversation.sessions for t in s.turns}


async def _ask(
    retriever: Retriever,
    probe: Probe,
    config: EvalConfig,
    unit: Unit,
    dataset_name: str,
    query_top: int,
    sessions: dict[str, str],
) -> dict[str, Any]:
    """One probe asked of `config`'s tier: its row of scores."""
    began = time.perf_counter()
    found = await retriever.search(probe.question, config.depth)
    latency_ms = (time.perf_counter() - began) * 1000
    ranked = [turn_id for turn_id, _ in found]
    return {
        "config": config.name,
        "dataset": dataset_name,
        "conversation": unit.conversation,
        "probe": probe.id,
        "category": probe.category,
        "question": probe.question,
        "evidence": list(probe.evidence),
        "scored": probe.scored,
        **probe_scores(ranked, probe.evidence, probe.stale, sessions),
        "latency_ms": latency_ms,
        "prompt_tokens": prompt_tokens([t for _, t in found], config.memory_budget, query_top),
        "retrieved": ranked,
    }


def unit_steps(conversation: Conversation, configs: int = 1) -> int:
    """A unit's work as its progress counts it: every turn replayed, every probe asked (by
    each of its `configs`)."""
    return conversation.turn_count + configs * len(conversation.probes)


def run_unit_blocking(
    unit: Unit, work_dir: str | None = None, progress: ProgressQueue | None = None
) -> UnitResult:
    """`run_unit` in its own event loop: what a worker process or a cluster task calls.
    Progress goes to `progress` (a manager's queue) as ``(unit key, done, steps)``."""

    def report(done: int, steps: int) -> None:
        if progress is not None:
            progress.put((unit.key, done, steps))

    directory = None if work_dir is None else Path(work_dir)
    return asyncio.run(run_unit(unit, directory, progress=report))


class ProgressQueue(Protocol):
    """What a worker needs of a `multiprocessing.Manager().Queue()`."""

    def put(self, item: tuple[str, int, int]) -> None: ...
