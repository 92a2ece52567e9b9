"""Scheduler benchmarks.

    python benchmarks/scheduler.py [--trials 1000]

1. Decision throughput with 10,000 tasks queued: submit + finish cycles against the pure
   scheduler, as decisions per second.
2. Interrupt latency through the dispatcher: an input is in flight as a real HTTP request to
   a server on 127.0.0.1 that never answers; an L3 interrupt is injected; measured from
   `inject` until the in-flight request is cancelled and the interrupt's work has started
   (p50 / p99). The server's view of the connection closing is counted too.
3. The same through a whole kernel: a turn's model call is in flight at the scripted model
   server (real HTTP); `kernel.inject(..., level=L3)` is called; measured until the server has
   seen the call's connection close *and* the scheduler has started the interrupt's turn, from
   the call and from its acknowledgement (the journal row committed with a full fsync).
   Twice: with the call waiting for its first byte, and with the reply streaming (its first
   delta published, the next piece a minute away), which is how a turn is mostly interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from hologram import Kernel
from hologram.agent.dispatcher import Dispatcher
from hologram.agent.scheduler import Scheduler
from hologram.kernel import KernelTasks, SystemClock
from hologram.llm import ScriptedModelServer, ScriptedReply
from hologram.sdk import Event, EventType, Priority, SchedulerDecision


def throughput(queued: int = 10_000, cycles: int = 50_000) -> float:
    s: Scheduler[int] = Scheduler()
    ids = itertools.count(1)  # the input journal's part: the scheduler numbers nothing
    now = 0.0
    for n in range(queued):
        s.submit(next(ids), n, Priority.QUEUED, now=now)
    decisions = 0
    levels = [Priority.QUEUED, Priority.L1, Priority.QUEUED, Priority.L2]
    started = time.perf_counter()
    for n in range(cycles):
        now += 0.001
        _, made = s.submit(next(ids), n, levels[n % 4], now=now)
        decisions += len(made)
        assert s.current is not None
        decisions += len(s.finish(s.current.id, now=now))
    elapsed = time.perf_counter() - started
    return decisions / elapsed


async def interrupt_latency(trials: int) -> tuple[list[float], int]:
    closed = 0
    received = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal closed
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in head.lower().split(b"\r\n")
                if line.startswith(b"content-length")
            )
            await reader.readexactly(length)
            received.set()
            # Never answer; wait for the client to give up on the request.
            if await reader.read(1) == b"":
                closed += 1
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    latencies: list[float] = []
    async with httpx.AsyncClient(timeout=30) as client:
        interrupt_started = asyncio.Event()
        injected_at = 0.0

        class LongTurn:
            async def run(self, stopped: bool) -> str:
                await client.post(f"http://127.0.0.1:{port}/v1/chat/completions", json={"x": 1})
                return "never"

        class Interrupt:
            async def run(self, stopped: bool) -> str:
                latencies.append(time.perf_counter() - injected_at)
                interrupt_started.set()
                return "ok"

        tasks = KernelTasks()  # the benchmark's own group: there is no kernel here
        loop: Dispatcher[LongTurn | Interrupt, str] = Dispatcher(
            SystemClock(), cooldown=0.0, tasks=tasks.scope("scheduler")
        )
        loop.start()
        ids = itertools.count(1)
        for _ in range(trials):
            received.clear()
            interrupt_started.clear()
            long_turn = loop.inject(next(ids), LongTurn())
            await received.wait()  # the request is at the server, waiting for an answer
            received.clear()
            injected_at = time.perf_counter()
            loop.inject(next(ids), Interrupt(), Priority.L3)
            await interrupt_started.wait()
            await received.wait()  # the long turn resumed and asked again; stop it for good
            loop.stop()
            await asyncio.gather(long_turn.outcome, return_exceptions=True)
        await loop.close()
        await tasks.close()
    server.close()
    await asyncio.sleep(0.05)
    return latencies, closed


async def kernel_interrupt_latency(
    trials: int, mid_stream: bool = False
) -> tuple[list[float], list[float]]:
    """Per trial: seconds from the inject call, and from its acknowledgement, until both
    the in-flight model call was seen aborted and the interrupt's turn had started. With
    `mid_stream`, the long turn's reply is streaming when the interrupt comes."""
    from_call: list[float] = []
    from_ack: list[float] = []
    started: dict[int, float] = {}
    streaming = asyncio.Event()

    def on_scheduler(event: Event) -> None:
        decision = event.payload
        if isinstance(decision, SchedulerDecision) and decision.action == "start":
            started[decision.task] = time.perf_counter()

    def slow_reply() -> ScriptedReply:
        if mid_stream:
            return ScriptedReply(text="one two three four five six", chunk_delay=60)
        return ScriptedReply(text="never", delay=60)

    async with ScriptedModelServer() as model:
        environ = {"HOLOGRAM_LLM_BASE_URL": model.base_url, "HOLOGRAM_LLM_MODEL": "m"}
        with tempfile.TemporaryDirectory() as data:
            async with Kernel(Path(data), environ=environ) as kernel:
                await kernel.config.set("core.scheduler.preempt_cooldown_s", 0.0)
            async with Kernel(Path(data), environ=environ) as kernel:
                kernel.events.subscribe(EventType.SCHEDULER, on_scheduler)
                kernel.events.subscribe(EventType.AGENT_OUTPUT_DELTA, lambda e: streaming.set())
                for _ in range(trials):
                    model.queue(slow_reply())
                    model.queue_text("interrupt answered")
                    model.queue(slow_reply())
                    asked = len(model.requests)
                    streaming.clear()
                    long_turn = await kernel.inject("a long question")
                    await model.wait_for_requests(asked + 1)
                    if mid_stream:
                        await streaming.wait()
                    aborted_before = model.disconnects
                    called = time.perf_counter()
                    interrupt = await kernel.inject("the timer rang", level=Priority.L3)
                    acknowledged = time.perf_counter()
                    # A busy poll, not an Event: the figure is the moment both are true.
                    while model.disconnects == aborted_before or interrupt.id not in started:  # noqa: ASYNC110
                        await asyncio.sleep(0)
                    both = time.perf_counter()
                    from_call.append(both - called)
                    from_ack.append(both - acknowledged)
                    await interrupt
                    await model.wait_for_requests(asked + 3)  # the long turn asked again
                    kernel.stop_turn()
                    await asyncio.gather(long_turn, return_exceptions=True)
    return from_call, from_ack


def percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered) * 1000, ordered[int(0.99 * (len(ordered) - 1))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    args = parser.parse_args()
    rates = [throughput() for _ in range(5)]
    print(
        f"scheduler decisions with 10,000 queued: median {statistics.median(rates):,.0f}/s "
        f"(target >= 50,000/s)"
    )
    latencies, closed = asyncio.run(interrupt_latency(args.trials))
    ordered = sorted(latencies)
    p50, p99 = statistics.median(ordered), ordered[int(0.99 * (len(ordered) - 1))]
    print(
        f"inject L3 -> in-flight HTTP request aborted -> interrupt started, {len(ordered)} trials: "
        f"p50 {p50 * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms (target p99 <= 5 ms); "
        f"server saw {closed} of {2 * args.trials} requests aborted by the client"
    )
    kernel_trials = max(1, args.trials // 5)
    for mid_stream, when in ((False, "waiting for its answer"), (True, "streaming its reply")):
        from_call, from_ack = asyncio.run(kernel_interrupt_latency(kernel_trials, mid_stream))
        (call50, call99), (ack50, ack99) = percentiles(from_call), percentiles(from_ack)
        print(
            f"whole kernel, {kernel_trials} trials, model call {when}: kernel.inject(L3) -> "
            f"model call aborted at the server and interrupt turn started: p50 {call50:.2f} ms, "
            f"p99 {call99:.2f} ms from the call; p50 {ack50:.2f} ms, p99 {ack99:.2f} ms from "
            "the acknowledgement (target p99 <= 5 ms)"
        )


if __name__ == "__main__":
    main()
