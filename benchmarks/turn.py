"""Turn benchmark: the kernel's own cost per turn, model think time excluded.

    python benchmarks/turn.py [--turns 300] [--runs 5]

Every turn takes the path production takes: `kernel.inputs.say`, so the input is written to
the journal (committed, fsync'd) and queued, the scheduler starts it (its running mark commits
meanwhile, not awaited, not fsync'd), and the journal marks it done (committed, fsync'd) once
memory is durable; the journal's commits and their time on its thread are printed with the
turn. Once, for the one-round greeting, the old figure is printed beside it: the same turn run
directly (`Turn.run`, no journal, no scheduler), which is what this benchmark measured before
inputs had one door.

The model is the scripted server with zero delay, in a process of its own so its request
handling does not run on the kernel's event loop; it is reached over real HTTP through the
real Lua adapter. For a one-round turn (the model answers at once) and a three-round turn (two
rounds of tool calls, then the answer) it prints, as medians over runs of the per-run medians:

* the whole turn, wall clock (includes the loopback HTTP round trip and the server's work);
* the kernel's own share: the turn less its model steps (request build, Lua adapter, HTTP);
* turns per second;
* where the kernel's own time goes, by step (stages, prompt build, tool aggregation, tools).

Before measuring, `--context-events` (default 10,000) events of varied text are appended to
the kernel's memory, so every turn appends, prunes and recalls against a memory of that size.
The one-round turn is measured twice: its input a greeting ("How are you?", all stopwords,
so recall has no word to look up: the cheapest turn), then questions about what the memory
holds, whose words each reach an eighth of it (the turn a conversation is made of).

Target (../shared/TARGETS.md): kernel's own cost per one-round turn, memory on, 10k-event
context ≤ 2 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx

from hologram import Kernel
from hologram.agent import TurnInput, TurnResult
from hologram.channels.collect import CollectingChannel
from hologram.sdk import OutputCap, ToolDef, TraceKind

TARGET_MS = 2.0
COMMITS = "journal commits"
SYNCED = "journal commits fsync'd"
COMMITTING = "journal commit (fsync)"
OLD_PATH = "one-round turn, the old figure: the turn alone (no journal, no scheduler)"
SERVER = (
    "import asyncio; from hologram.llm.scripted_server import run_scripted_model; "
    "asyncio.run(run_scripted_model(0, offline=False))"
)


def start_server() -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True, bufsize=1
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.search(r"(http://127\.0\.0\.1:\d+/v1)", line)
    if match is None:
        process.kill()
        raise SystemExit(f"the scripted model server did not start: {line!r}")
    return process, match.group(1)


def one_round(count: int) -> list[dict[str, Any]]:
    return [{"text": "Fine, thanks."} for _ in range(count)]


def three_rounds(count: int) -> list[dict[str, Any]]:
    replies: list[dict[str, Any]] = []
    for i in range(count):
        replies.append({"tool_calls": [{"id": f"a{i}", "name": "bench_echo", "arguments": {}}]})
        replies.append({"tool_calls": [{"id": f"b{i}", "name": "bench_echo", "arguments": {}}]})
        replies.append({"text": "Done."})
    return replies


async def one_turn(kernel: Kernel, text: str, direct: bool) -> TurnResult:
    """Through the kernel's door (journal, scheduler), or with `direct` the turn alone."""
    if direct:
        agent = kernel.state.agent
        assert agent is not None
        return await agent.turn(TurnInput(text, "test")).run()
    return await kernel.inputs.say(text, "test")


async def run_turns(
    kernel: Kernel,
    control: httpx.AsyncClient,
    replies: list[dict[str, Any]],
    turns: int,
    inputs: tuple[str, ...],
    direct: bool = False,
) -> tuple[list[float], list[float], dict[str, float]]:
    """Per turn (its input the next of `inputs`, in turn): wall ms and kernel-own ms; and
    kernel-own ms summed by step name."""
    await control.delete("/_scripted/requests")
    (await control.post("/_scripted/replies", json=replies)).raise_for_status()
    walls, own = [], []
    by_step: dict[str, float] = defaultdict(float)
    journal = kernel.inputs.journal
    commits, synced, committing = journal.commits, journal.synced_commits, journal.commit_s
    for n in range(turns):
        started = time.perf_counter()
        result = await one_turn(kernel, inputs[n % len(inputs)], direct)
        wall = (time.perf_counter() - started) * 1000
        model = result.ms(TraceKind.MODEL)
        walls.append(wall)
        own.append(wall - model)
        for step in result.trace:
            if step.kind != "model":
                by_step[step.name] += step.ms
    # The journal's own figures, as steps of their own (their thread's time, not the loop's):
    # how many commits a turn costs and how long each one's fsync keeps an await waiting.
    by_step[COMMITS] += journal.commits - commits
    by_step[SYNCED] += journal.synced_commits - synced
    by_step[COMMITTING] += (journal.commit_s - committing) * 1000
    kernel.state.channels.get("test").handler.clear()  # type: ignore[union-attr]
    return walls, own, by_step


TOPICS = ("tea", "rain", "the cat", "train tickets", "a birthday", "work", "跑步", "周末的电影")
GREETING = ("How are you?",)
"""All stopwords: the cheapest recall there is (no word to look up)."""
QUESTIONS = (
    "What did I tell you about the train tickets?",
    "Is the cat feeling better?",
    "Did we talk about tea last week?",
    "你还记得我说的周末的电影吗？",
    "What was the plan for the birthday?",
    "我最近跑步跑得怎么样？",
)
"""Questions about the memory's topics: each topic is in an eighth of the events filled in,
as a person's questions reach what was said before."""


async def fill_memory(kernel: Kernel, events: int) -> None:
    memory = kernel.state.memory
    assert memory is not None
    for n in range(events):
        topic = TOPICS[n % len(TOPICS)]
        if n % 2:
            await memory.context.append("agent", response=f"noted #{n} about {topic}")
        else:
            await memory.context.append("notebook", input=f"message {n}: {topic}", channel="nb")


async def measure(turns: int, runs: int, context_events: int) -> None:
    process, base_url = start_server()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            environ = {
                "HOLOGRAM_LLM_BASE_URL": base_url,
                "HOLOGRAM_LLM_MODEL": "gpt-4o",  # a known window: no per-turn warning
                "HOLOGRAM_LLM_API_KEY": "sk-bench",
            }
            async with (
                Kernel(Path(tmp) / "data", environ=environ) as kernel,
                httpx.AsyncClient(base_url=base_url.removesuffix("/v1")) as control,
            ):
                assert kernel.state.stagehost is not None and kernel.state.channels is not None
                # The replies' channel: collected, and cleared after each run.
                kernel.state.channels.register_output_channel(
                    "test", OutputCap.TEXT, "the benchmark's replies", CollectingChannel("test")
                )
                await fill_memory(kernel, context_events)
                kernel.state.stagehost.register_tool(ToolDef("bench_echo", "Echo.", handler=_echo))
                owns: dict[str, float] = {}
                for label, script, per_turn, inputs, direct in (
                    ("one-round turn", one_round, 1, GREETING, False),
                    (OLD_PATH, one_round, 1, GREETING, True),
                    (
                        "one-round turn, questions about what memory holds",
                        one_round,
                        1,
                        QUESTIONS,
                        False,
                    ),
                    ("three-round turn", three_rounds, 3, GREETING, False),
                ):
                    await run_turns(kernel, control, script(20), 20, inputs, direct)  # warm-up
                    wall_medians, own_medians = [], []
                    steps: dict[str, float] = defaultdict(float)
                    for _ in range(runs):
                        walls, own, by_step = await run_turns(
                            kernel, control, script(turns), turns, inputs, direct
                        )
                        wall_medians.append(statistics.median(walls))
                        own_medians.append(statistics.median(own))
                        for name, ms in by_step.items():
                            steps[name] += ms
                    owns[label] = report(
                        label, per_turn, wall_medians, own_medians, steps, direct, turns * runs
                    )
                door = owns["one-round turn"] - owns[OLD_PATH]
                print(
                    f"\nthe door's share of a one-round turn (the record's commit, the scheduler, "
                    f"memory's flush, the done mark's commit): {door:.3f} ms"
                )
    finally:
        process.terminate()
        process.wait(10)


async def _echo(args: dict[str, Any]) -> str:
    return "echo"


def report(
    label: str,
    rounds: int,
    wall_medians: list[float],
    own_medians: list[float],
    steps: dict[str, float],
    direct: bool = False,
    turns: int = 1,
) -> float:
    """Print one kind of turn's figures (`steps` summed over `turns` turns); returns its
    kernel's own cost (ms)."""
    wall = statistics.median(wall_medians)
    own = statistics.median(own_medians)
    path = "" if direct else ", through the journal and the scheduler"
    print(f"\n{label} ({rounds} model call{'s' if rounds > 1 else ''}{path})")
    print(f"  whole turn (with HTTP to the model)  {wall:7.3f} ms   {1000 / wall:7.0f} turns/s")
    verdict = "within" if own <= TARGET_MS else "OVER"
    print(
        f"  kernel's own cost (no model steps)   {own:7.3f} ms   target ≤ {TARGET_MS:g} ms"
        + (f"  [{verdict}]" if rounds == 1 else "")
    )
    if direct:
        return own  # its steps are the turn's steps, shown with the production path's
    commits, synced = steps.pop(COMMITS, 0.0), steps.pop(SYNCED, 0.0)
    committing = steps.pop(COMMITTING, 0.0)
    if commits:
        print(
            f"  journal: {commits / turns:.2f} commits a turn ({synced / turns:.2f} fsync'd), "
            f"{committing / turns:.3f} ms a turn committing on its thread"
        )
    total = sum(steps.values()) or 1.0
    shares = sorted(steps.items(), key=lambda kv: kv[1], reverse=True)
    print("  share of the kernel's own time by step (steps, not the gaps between them):")
    for name, ms in shares:
        print(f"    {name:24s} {100 * ms / total:5.1f} %")
    return own


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=300, help="turns per run")
    parser.add_argument("--runs", type=int, default=5, help="runs (the median is reported)")
    parser.add_argument("--context-events", type=int, default=10_000, help="memory filled first")
    args = parser.parse_args()
    asyncio.run(measure(args.turns, args.runs, args.context_events))
    print("\n" + json.dumps(vars(args)))


if __name__ == "__main__":
    main()
