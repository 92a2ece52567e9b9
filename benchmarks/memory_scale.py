"""Memory at scale: a synthetic year of a companion's life, 200,000 turns in Chinese and
English, replayed into the memory tiers as the kernel stores them today.

    python benchmarks/memory_scale.py [--turns 200000] [--sizes 1000 10000 100000 200000]
                                      [--runs 3] [--queries 100]
    python benchmarks/memory_scale.py --quick          # 2,000 turns, about a minute

It prints ingestion throughput (turns/s), recall p50/p95 at 1k / 10k / 100k / 200k turns
(the sizes up to `--turns`), disk bytes per turn (above an empty data dir), resident memory
(RSS), and boot to ready of a fresh kernel on that data dir, each beside its target from
issue 22:

* recall p95 at 200k turns <= 20 ms;
* boot to ready with 200k turns stored <= 2 s;
* recall cost no worse than log-linear in turns, disk linear: the script fits
  cost ~ turns^k by least squares on log-log and prints k, and the growth from the smallest
  to the largest size divided by the growth of n log n (recall) or of n (disk); a ratio at
  or below 1 meets the check. Each size's row carries the same two ratios since the first
  size, so a run stopped early still shows its growth.

The full year is slow: every turn pays the stores' real writes (the turn store's
transactions, the text log, the graph's transaction when it is archived), about 400
turns/s on a quiet 2-core machine (half that on a busy one), so 200,000 turns take ten
minutes or more.

What is replayed. The sentences, sessions and probes come from the project's own dataset
generator (`datasets/generate.py`, the one that writes `companion_en` and `companion_zh`;
nothing is downloaded): conversations built with successive seeds, English and Chinese
sessions alternating, one session about every hour of the year. The generator's sentence
banks are small, and the graph stores one text block per distinct text, so a year of them
verbatim would collapse into a few hundred blocks; each user turn therefore says two or three
of the bank's user sentences together (its own, plus one or two drawn from the same
language), which keeps most user turns distinct while every word is the generator's. The
companion's replies stay as generated (they repeat, as a companion's acknowledgements do).
A turn is one utterance, as the datasets count them. `--turns N` replays the first N turns
of the same year, at the same pace.

How it is stored. A real kernel (the real module set, real SQLite files and journals in a
temporary data dir) runs on a manual clock moved to each turn's time. Going through whole
turns (`Kernel.say`) would need a model and cost several times more for text the figures do
not need, so the memory modules are driven directly, the way the turn and the heartbeats
drive them: an input is appended to the context window and to the text log, the window is
pruned with it as the query (what falls out is archived into the cold context, at its own
time), the reply is appended; the heartbeat's loops are stopped and their `distill` and
`archive` ticks run at their configured intervals of simulated time (the archive tick moves
cold documents untouched for 72 h into the graph's text blocks, with the triples the rules
find). Consolidation (merge, review) needs a model and is not run. Recall is `Memory.recall`
with the prompt budget's memory tokens: the call a turn makes (the shared hybrid index over
the cold context and the graph's text blocks, then the graph's facts), asked the probe
questions of the generated conversations.

At each size the ingesting kernel is shut down (as a restart would), and boot is measured
in a fresh interpreter per run: the kernel's own `boot_seconds` (to ready), then the time
until a first recall has been answered, which waits for the stores' background loading and
jieba's first load, and for the archive's index (the graph's text blocks, built newest first
in the background) at most `LAYER_WAIT_S` after boot; then the time until that index is
whole. The RSS is that process's once it is, beside this process's while ingesting. The
kernel is then opened again on the same data dir and the year goes on.

The machine has 2 cores and other work runs beside it: figures are noisy (recall medians of
`--runs` runs; compare ratios rather than absolutes).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from hologram import Kernel
from hologram.kernel import ManualClock
from hologram.memory import AGENT_SOURCE
from hologram.memory.facility import LAYER_WAIT_S

ROOT = Path(__file__).resolve().parent.parent
TARGET_RECALL_P95_MS = 20.0
TARGET_BOOT_S = 2.0
YEAR_TURNS = 200_000
YEAR_S = 365 * 86400.0
YEAR_START = datetime(2025, 1, 1, tzinfo=UTC).timestamp()
SIZES = (1_000, 10_000, 100_000, 200_000)
CHANNEL = "companion"
HEARTBEAT_LOOPS = ("distill", "archive")


def generator() -> ModuleType:
    """`datasets/generate.py`, loaded by path: `datasets` is not a package (and a package of
    that name from the index may be installed)."""
    spec = importlib.util.spec_from_file_location(
        "_hologram_generate", ROOT / "datasets" / "generate.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True, slots=True)
class Said:
    at: float
    role: str
    speaker: str
    text: str


def synthetic_year(total: int, seed: int = 22) -> Iterator[Said]:
    """The first `total` turns of the year, in order, at the year's pace (200,000 turns)."""
    gen = generator()
    banks = (("en", gen.EN), ("zh", gen.ZH))
    rng = random.Random(seed)
    pool: dict[str, list[str]] = {}
    for lang, bank in banks:
        conversation = gen.build(bank, lang, 1)
        pool[lang] = sorted({t.text for t in conversation.turns() if t.role == "user"})
    turns_per_session = 24.0  # about what the generator's sessions hold
    session_gap = YEAR_S / (YEAR_TURNS / turns_per_session)
    made, session, build_seed = 0, 0, 100
    while made < total:
        for lang, bank in banks:
            conversation = gen.build(bank, lang, build_seed)
            for generated in conversation.sessions:
                start = YEAR_START + session * session_gap
                session += 1
                for n, turn in enumerate(generated.turns):
                    if made >= total:
                        return
                    text = turn.text
                    if turn.role == "user":
                        extra = rng.sample(pool[lang], rng.choice((1, 2)))
                        text = (" " if lang == "en" else "").join([text, *extra])
                    yield Said(start + n * gen.TURN_GAP_S, turn.role, turn.speaker, text)
                    made += 1
        build_seed += 1


def questions() -> list[str]:
    gen = generator()
    found = [
        p.question
        for c in (gen.build(gen.EN, "en", 11), gen.build(gen.ZH, "zh", 12))
        for p in c.probes
    ]
    random.Random(5).shuffle(found)
    return found


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[max(math.ceil(len(ordered) * share) - 1, 0)]


def disk_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


@dataclass
class Checkpoint:
    turns: int
    ingest_s: float
    recall_p50_ms: float
    recall_p95_ms: float
    disk: int
    rss: int
    stores: dict[str, int] = field(default_factory=dict)
    boots: list[dict[str, float]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def boot(self, key: str) -> float:
        return statistics.median(b[key] for b in self.boots)


class Replayer:
    """Drives one kernel's memory the way the turn and the heartbeats do."""

    def __init__(
        self, kernel: Kernel, clock: ManualClock, next_tick: dict[str, float] | None = None
    ) -> None:
        state = kernel.state
        assert state.memory is not None and state.graph is not None
        self.kernel = kernel
        self.clock = clock
        self.memory = state.memory
        self.text_log = state.text_memory
        self.graph = state.graph
        self.heartbeat = state.graph.heartbeat
        agent = state.agent
        self.budget = agent.parts.prompt_budget().memory_tokens if agent is not None else 4000
        self.next_tick = next_tick or {
            loop: clock.now() + self.heartbeat.settings.interval_min(loop) * 60.0
            for loop in HEARTBEAT_LOOPS
        }

    async def store(self, said: Said) -> None:
        if said.at > self.clock.now():
            await self.clock.advance(said.at - self.clock.now())
        for loop in HEARTBEAT_LOOPS:
            if self.clock.now() >= self.next_tick[loop]:
                await self.heartbeat.tick(loop)
                self.next_tick[loop] = (
                    self.clock.now() + self.heartbeat.settings.interval_min(loop) * 60.0
                )
        context = self.memory.context
        if said.role == "agent":
            event = await context.append(AGENT_SOURCE, response=said.text, channel=CHANNEL)
            if self.text_log is not None:
                await self.text_log.write("agent", said.text, channel=CHANNEL, id=event.id)
            return
        event = await context.append(said.speaker, input=said.text, channel=CHANNEL)
        if self.text_log is not None:
            await self.text_log.write("user", said.text, channel=CHANNEL, id=event.id)
        await self.memory.prune(said.text)

    async def recall_ms(self, asked: list[str]) -> list[float]:
        times = []
        for question in asked:
            started = time.perf_counter()
            await self.memory.recall(question, self.budget)
            times.append((time.perf_counter() - started) * 1000)
        return times


def store_sizes(data: Path) -> dict[str, int]:
    memory = data / "memory"
    # The window, the cold context and the graph's text blocks are the rows of their place
    # in the turn store.
    turns = sum(p.stat().st_size for p in memory.glob("turns.db*"))
    sizes = {"turns (window, cold, graph text)": turns}
    text_log = memory / "text"
    sizes["text log"] = disk_bytes(text_log) if text_log.exists() else 0
    sizes["graph"] = sum(p.stat().st_size for p in data.glob("graph.db*"))
    return sizes


async def open_kernel(data: Path, clock: ManualClock) -> Kernel:
    kernel = await Kernel(data, clock=clock).start()
    # The loops are driven by hand at their intervals, so a tick never overlaps a turn.
    await kernel.state.graph.heartbeat.close()
    await kernel.state.coldcontext.wait_ready()
    return kernel


def graph_counts(kernel: Kernel, stats: dict[str, Any]) -> dict[str, int]:
    blocks = stats.get("blocks")
    return {
        "window events": len(kernel.state.memory.context),
        "cold documents": len(kernel.state.coldcontext),
        "graph text blocks": int(blocks.get("text", 0)) if isinstance(blocks, dict) else 0,
        "graph entities": int(stats.get("entities", 0)),
        "graph facts": int(stats.get("current_facts", 0)) + int(stats.get("closed_facts", 0)),
    }


async def ingest(
    data: Path, total: int, sizes: list[int], runs: int, asked: list[str]
) -> tuple[list[Checkpoint], int, dict[str, int]]:
    """Replay the year into `data`, measuring at each of `sizes`. At each size the kernel is
    shut down, booted `runs` times in fresh interpreters, and opened again to go on: every
    size gets its boot figures, and a run stopped early keeps what it printed."""
    clock = ManualClock(start=YEAR_START - 60.0)
    checkpoints: list[Checkpoint] = []
    kernel = await open_kernel(data, clock)
    replay = Replayer(kernel, clock)
    await replay.recall_ms(asked[:5])  # jieba's first load, off the figures
    empty = disk_bytes(data)
    print(HEADER, flush=True)
    ingest_s, stored = 0.0, 0
    turns = synthetic_year(total)
    try:
        for size in sizes:
            started = time.perf_counter()
            for said in turns:
                await replay.store(said)
                stored += 1
                if stored % 5_000 == 0:
                    spent = ingest_s + time.perf_counter() - started
                    print(f"  … {stored:,} turns in {spent:.0f} s", file=sys.stderr, flush=True)
                if stored >= size:
                    break
            ingest_s += time.perf_counter() - started
            await replay.recall_ms(asked[:10])  # warm the caches of the new size
            p50s, p95s = [], []
            for _ in range(runs):
                times = await replay.recall_ms(asked)
                p50s.append(statistics.median(times))
                p95s.append(percentile(times, 0.95))
            rss = rss_bytes()
            counts = graph_counts(kernel, await kernel.state.graph.store.stats())
            await kernel.shutdown()
            boots = await asyncio.to_thread(boot_runs, data, runs, asked[0])
            checkpoint = Checkpoint(
                stored,
                ingest_s,
                statistics.median(p50s),
                statistics.median(p95s),
                disk_bytes(data),
                rss,
                store_sizes(data),
                boots,
                counts,
            )
            checkpoints.append(checkpoint)
            row(
                checkpoint, checkpoints[0], checkpoints[-2] if len(checkpoints) > 1 else None, empty
            )
            if size != sizes[-1]:
                kernel = await open_kernel(data, clock)
                replay = Replayer(kernel, clock, replay.next_tick)
    finally:
        await kernel.shutdown()
    return checkpoints, empty, checkpoints[-1].counts


BOOT = """
import asyncio, json, sys, time
from pathlib import Path
from hologram import Kernel

def rss():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0

async def main():
    started = time.perf_counter()
    kernel = await Kernel(Path(sys.argv[1])).start()
    ready = time.perf_counter() - started
    rss_ready = rss()
    await kernel.state.memory.recall(sys.argv[2], 4000)
    recalled = time.perf_counter() - started
    await kernel.state.graph.store.blocks.wait_ready()
    indexed = time.perf_counter() - started
    out = {"boot_s": kernel.boot_seconds, "ready_s": ready, "first_recall_s": recalled,
           "indexed_s": indexed, "rss_ready": rss_ready, "rss_loaded": rss()}
    await kernel.shutdown()
    print(json.dumps(out))

asyncio.run(main())
"""


def boot_runs(data: Path, runs: int, question: str) -> list[dict[str, float]]:
    found = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", BOOT, str(data), question],
            capture_output=True,
            text=True,
            check=True,
        )
        found.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return found


def fitted_exponent(xs: list[float], ys: list[float]) -> float:
    """k in y ~ x^k, least squares on log-log."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(max(y, 1e-9)) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    den = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / den if den else 0.0


def mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


HEADER = (
    f"{'turns':>9} {'recall p50':>11} {'recall p95':>11} {'target p95':>11} "
    f"{'disk':>10} {'bytes/turn':>11} {'RSS':>9} {'turns/s':>8} {'boot':>8} "
    f"{'1st recall':>10} {'p95/nlogn':>9} {'disk/n':>7}"
)


def row(c: Checkpoint, first: Checkpoint, previous: Checkpoint | None, empty: int) -> None:
    """One size's line, printed as soon as it is measured (a long run shows its way); the
    last two columns are the growth since the first size over that of n log n and of n."""
    done_turns, done_s = (previous.turns, previous.ingest_s) if previous else (0, 0.0)
    rate = (c.turns - done_turns) / max(c.ingest_s - done_s, 1e-9)
    target = f"{TARGET_RECALL_P95_MS:>8.0f} ms" if c.turns >= YEAR_TURNS else "(at 200k)"
    mark = ""
    if c.turns >= YEAR_TURNS:
        mark = "  ok" if c.recall_p95_ms <= TARGET_RECALL_P95_MS else "  MISSED"
    recall_growth = disk_growth = "-"
    if c.turns > first.turns > 1:
        nlogn = (c.turns * math.log(c.turns)) / (first.turns * math.log(first.turns))
        recall_growth = f"{c.recall_p95_ms / first.recall_p95_ms / nlogn:.3f}"
        disk_growth = f"{(c.disk - empty) / (first.disk - empty) / (c.turns / first.turns):.3f}"
    print(
        f"{c.turns:>9,} {c.recall_p50_ms:>9.2f}ms {c.recall_p95_ms:>9.2f}ms {target:>11} "
        f"{mb(c.disk):>10} {(c.disk - empty) / c.turns:>11,.0f} {mb(c.rss):>9} {rate:>8,.0f} "
        f"{c.boot('boot_s') * 1000:>6.0f}ms {c.boot('first_recall_s') * 1000:>8.0f}ms "
        f"{recall_growth:>9} {disk_growth:>7}{mark}",
        flush=True,
    )


def report(
    args: argparse.Namespace,
    checkpoints: list[Checkpoint],
    empty: int,
    counts: dict[str, int],
) -> None:
    last = checkpoints[-1]
    print(
        f"\nmemory at scale: {last.turns:,} turns of a synthetic year (zh and en), "
        f"recall medians of {args.runs} runs of {args.queries} questions; "
        "a busy 2-core machine: noisy figures"
    )
    print(
        f"\ningestion throughput          {last.turns / last.ingest_s:8,.0f} turns/s  "
        f"({last.ingest_s:.0f} s for {last.turns:,} turns)"
    )
    parts = ", ".join(f"{name} {mb(size)}" for name, size in last.stores.items())
    print(f"\ndisk by store at {last.turns:,} turns: {parts} (empty data dir {mb(empty)})")
    print("stored: " + ", ".join(f"{name} {n:,}" for name, n in counts.items()))
    if len(checkpoints) >= 2:
        first = checkpoints[0]
        n0, n1 = first.turns, last.turns
        xs = [float(c.turns) for c in checkpoints]
        nlogn = (n1 * math.log(n1)) / (n0 * math.log(n0))
        print(
            f"\ngrowth from {n0:,} to {n1:,} turns (x{n1 / n0:,.0f}; n log n grows x{nlogn:,.1f}):"
        )
        for label, values in (
            ("recall p50", [c.recall_p50_ms for c in checkpoints]),
            ("recall p95", [c.recall_p95_ms for c in checkpoints]),
        ):
            ratio = (values[-1] / values[0]) / nlogn
            verdict = "ok" if ratio <= 1.0 else "WORSE than log-linear"
            print(
                f"  {label:<12} fitted exponent {fitted_exponent(xs, values):5.2f}  "
                f"growth / n-log-n growth {ratio:6.3f}  (target <= 1: no worse than log-linear) "
                f"{verdict}"
            )
        grown = [c.disk - empty for c in checkpoints]
        ratio = (grown[-1] / grown[0]) / (n1 / n0)
        verdict = "ok" if ratio <= 1.0 else "WORSE than linear"
        print(
            f"  {'disk':<12} fitted exponent {fitted_exponent(xs, [float(g) for g in grown]):5.2f}  "
            f"growth / linear growth     {ratio:6.3f}  (target <= 1: linear) {verdict}"
        )
    else:
        print("\ngrowth: one size only; give --turns of 10,000 or more for the fitted ratios")
    boots = last.boots
    boot = last.boot("boot_s")
    recalled = last.boot("first_recall_s")
    mark = "ok" if boot <= TARGET_BOOT_S else "MISSED"
    target = f"target <= {TARGET_BOOT_S:g} s at 200k turns"
    print(
        f"\nboot to ready on the data dir of {last.turns:,} turns  {boot * 1000:8.0f} ms  ({target}; median of "
        f"{len(boots)} fresh interpreters)" + (f"  {mark}" if last.turns >= YEAR_TURNS else "")
    )
    print(
        f"boot to first recall answered  {recalled * 1000:8.0f} ms  (waits for the stores' loading, "
        f"and at most {LAYER_WAIT_S:g} s after boot for the archive's index)"
    )
    print(
        f"boot to the archive indexed    {last.boot('indexed_s') * 1000:8.0f} ms  (in the "
        "background, newest turns first: recall finds what is indexed so far)"
    )
    print(
        f"resident memory (RSS)          {mb(statistics.median(b['rss_loaded'] for b in boots))} "
        f"booted kernel with its memory loaded ({mb(statistics.median(b['rss_ready'] for b in boots))} "
        f"at ready); {mb(last.rss)} in the ingesting process"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=YEAR_TURNS, help="turns of the year replayed")
    parser.add_argument("--quick", action="store_true", help="2,000 turns, about a minute")
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=list(SIZES), help="turns at which to measure"
    )
    parser.add_argument("--runs", type=int, default=3, help="recall runs and boots (medians)")
    parser.add_argument("--queries", type=int, default=100, help="recall questions per run")
    args = parser.parse_args()
    if args.quick:
        # The first 72 h of the year (about 1,650 turns) stay in the cold context; 2,000
        # turns is the smallest run that also archives into the graph.
        args.turns, args.runs, args.queries = 2_000, 2, min(args.queries, 50)
    if args.turns < 1:
        parser.error("--turns must be at least 1")
    sizes = sorted({s for s in args.sizes if s < args.turns} | {args.turns})
    asked = questions()
    asked = (asked * (args.queries // len(asked) + 1))[: args.queries]
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        checkpoints, empty, counts = asyncio.run(ingest(data, args.turns, sizes, args.runs, asked))
    report(args, checkpoints, empty, counts)
    print("\n" + json.dumps(vars(args)))


if __name__ == "__main__":
    main()
