"""Service load benchmark: N concurrent HTTP clients against `python -m hologram serve`.

    python benchmarks/serve_load.py [--clients 50] [--requests 20] [--runs 3] [--time-limit 120]
                                    [--settle 0]

Three processes: the service, the scripted model (zero delay, so turns are as fast as the
kernel makes them) and this one, which runs the clients. Everything is on 127.0.0.1. Each
client sends `--requests` operations one after another: mostly inputs, some interrupts
(L1-L3), a few stops. The run is bounded by the operation count and by `--time-limit`.

Printed per run and as medians over runs:

* acknowledgement latency of an input or interrupt (POST answered, i.e. journal committed),
  p50 and p99, beside the target;
* throughput: acknowledgements per second, and finished inputs per second;
* lost inputs: acknowledged, but missing from the journal or not finished (done or stopped)
  when the queue has drained; duplicated: an id acknowledged twice, a journal row nobody
  sent, or an input the scheduler started more than once (from the event stream).

Target (../shared/TARGETS.md): 50 clients, 0 lost or duplicated, p99 acknowledgement ≤ 50 ms.

By default the clients start the moment the service says it is ready, while the kernel is
still loading what it loads in the background after boot (jieba's dictionary, about a second
of one core, most of it inside one call that holds the GIL). `--settle S` starts them S
seconds later instead: the service as it is once warm.

`--diagnose` runs the service from this script with the input journal and the event loop
measured (patched at run time; the package is unchanged) and prints, per run, where an
acknowledgement's time goes: the journal's `record`, each journal write as the loop awaits
it (until its group commit) and each group commit as the journal's thread runs it (statements
and fsync), group commits per input, the loop's lag, the loop thread's
CPU beside the whole process's, and the loop thread's top functions.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import os
import pstats
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx

TARGET_P99_MS = 50.0
API = "/api/v1"
FINISHED = ("done", "stopped", "failed")


@dataclass
class Run:
    acks: dict[int, str] = field(default_factory=dict)
    latencies_ms: list[float] = field(default_factory=list)
    duplicate_acks: int = 0
    refused: Counter[int] = field(default_factory=Counter)
    stops: int = 0
    starts: Counter[int] = field(default_factory=Counter)


def start(args: list[str], pattern: str, **options: Any) -> tuple[subprocess.Popen[str], str]:
    """`python -m hologram ARGS` (or this script, when ARGS start with --serve-instrumented)."""
    command = (
        [sys.executable, __file__]
        if args[0].startswith("--")
        else [sys.executable, "-m", "hologram"]
    )
    process = subprocess.Popen([*command, *args], stdout=subprocess.PIPE, text=True, **options)
    assert process.stdout is not None
    deadline = time.monotonic() + 60
    for line in process.stdout:
        found = re.search(pattern, line)
        if found:
            return process, found.group(1)
        if time.monotonic() > deadline:
            break
    process.kill()
    raise SystemExit(f"{args[0]} did not start")


@dataclass(frozen=True)
class Mix:
    stop: float
    interrupt: float


class Connection:
    """One keep-alive HTTP/1.1 connection on asyncio streams. httpx costs ~2 ms of CPU per
    request, which on a 2-core machine made the load generator, not the service, the
    bottleneck; this costs a few tens of microseconds."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        data = json.dumps(body or {}).encode()
        self.writer.write(
            f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n".encode()
            + data
        )
        status_line = await self.reader.readline()
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        payload = await self.reader.readexactly(length)
        return int(status_line.split()[1]), json.loads(payload)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            await self.writer.wait_closed()


async def client(
    address: tuple[str, int], run: Run, index: int, requests: int, end: float, mix: Mix
) -> None:
    rng = random.Random(index)
    http = Connection(*address)
    try:
        for n in range(requests):
            if time.monotonic() > end:
                return
            roll = rng.random()
            if roll < mix.stop:
                await http.post(f"{API}/stop")
                run.stops += 1
                continue
            text = f"client {index} message {n}"
            body: dict[str, Any] = {"text": text}
            path = f"{API}/input"
            if roll < mix.stop + mix.interrupt:
                path, body["level"] = f"{API}/interrupt", rng.choice(["L1", "L2", "L3"])
            began = time.perf_counter()
            status, answer = await http.post(path, body)
            elapsed = (time.perf_counter() - began) * 1000
            if status != 202:
                run.refused[status] += 1
                continue
            run.latencies_ms.append(elapsed)
            ident = answer["id"]
            if ident in run.acks:
                run.duplicate_acks += 1
            run.acks[ident] = text
    finally:
        await http.close()


async def watch_starts(base: str, run: Run, ready: asyncio.Event) -> None:
    """Count how often the scheduler starts each input (a resume after preemption is not a
    start; a second start would be a duplicate run)."""
    timeout = httpx.Timeout(10, read=None)
    async with (
        httpx.AsyncClient(base_url=base, timeout=timeout) as http,
        http.stream("GET", "/events", params={"types": "scheduler"}) as stream,
    ):
        ready.set()
        async for line in stream.aiter_lines():
            if line.startswith("data: "):
                payload = json.loads(line[6:])["payload"]
                if payload.get("action") == "start":
                    run.starts[payload["task"]] += 1


async def one_run(
    clients: int,
    requests: int,
    time_limit: float,
    mix: Mix,
    model_delay: float,
    diagnose: bool,
    settle: float = 0.0,
) -> dict[str, float]:
    # The model's stderr is quiet: it reports every request the service aborts on purpose
    # (a preemption or a stop cancels the in-flight model call).
    model, model_url = start(
        ["scripted-model", "--port", "0"],
        r"(http://127\.0\.0\.1:\d+/v1)",
        stderr=subprocess.DEVNULL,
    )
    if model_delay > 0:
        # Enough delayed answers for every request, preempted ones included; after them the
        # offline rules answer at once.
        replies = [{"text": "ok", "delay": model_delay}] * (clients * requests * 2)
        control = model_url.removesuffix("/v1") + "/_scripted/replies"
        async with httpx.AsyncClient(timeout=30) as setup:
            (await setup.post(control, json=replies)).raise_for_status()
    data = tempfile.mkdtemp(prefix="hologram-serve-load-")
    env_args = ["serve", "--data", data, "--port", "0"]
    stats_path = os.path.join(data, "diagnosis.json")
    if diagnose:
        env_args = ["--serve-instrumented", data, stats_path]
    os.environ["HOLOGRAM_LLM_BASE_URL"] = model_url
    os.environ["HOLOGRAM_LLM_API_KEY"] = "sk-bench"
    service, url = start(env_args, r"serving (http://127\.0\.0\.1:\d+)/")
    base = url + "/api/v1"
    run = Run()
    try:
        ready = asyncio.Event()
        watcher = asyncio.create_task(watch_starts(base, run, ready))
        await ready.wait()
        await asyncio.sleep(settle)
        address = ("127.0.0.1", int(url.rsplit(":", 1)[1]))
        async with httpx.AsyncClient(base_url=base, timeout=30) as http:
            began = time.perf_counter()
            end = time.monotonic() + time_limit
            await asyncio.gather(
                *(client(address, run, i, requests, end, mix) for i in range(clients))
            )
            sending = time.perf_counter() - began
            # Let the queue drain (bounded by the same time limit).
            drained = False
            while True:
                status = (await http.get("/status")).json()
                scheduler = status["scheduler"]
                idle = scheduler["running"] is None and not scheduler["pending_inputs"]
                if idle and not scheduler["stack"]:
                    drained = True
                    break
                if time.monotonic() > end + time_limit:
                    queue = scheduler.pop("queue")
                    print(
                        f"  the queue did not drain: {scheduler}, {len(queue)} queued; "
                        f"journal {status['inputs']}",
                        file=sys.stderr,
                    )
                    break
                await asyncio.sleep(0.1)
            finishing = time.perf_counter() - began
            records = {}
            for ident in run.acks:
                answer = await http.get(f"/inputs/{ident}")
                records[ident] = answer.json() if answer.status_code == 200 else None
            journal_rows = sum(status["inputs"].values())
        watcher.cancel()
    finally:
        service.terminate()
        model.terminate()
        service.wait(timeout=60)
        model.wait(timeout=60)
    lost = unfinished = 0
    for ident, text in run.acks.items():
        record = records[ident]
        if record is None or record["text"] != text:
            lost += 1
            print(f"  lost: input {ident} {text!r}: {record}", file=sys.stderr)
        elif record["state"] not in FINISHED:
            if drained:  # the scheduler is idle: nothing will ever run it in this run
                lost += 1
                print(
                    f"  left {record['state']} by an idle scheduler: input {ident}", file=sys.stderr
                )
            else:
                unfinished += 1
    if diagnose:
        print_diagnosis(stats_path, len(run.acks))
    twice = sum(n - 1 for n in run.starts.values() if n > 1)
    duplicated = run.duplicate_acks + max(0, journal_rows - len(run.acks)) + twice
    ordered = sorted(run.latencies_ms)
    return {
        "acks": len(run.acks),
        "p50": statistics.median(ordered),
        "p99": ordered[max(0, int(len(ordered) * 0.99) - 1)],
        "ack_per_s": len(run.acks) / sending,
        "done_per_s": len(run.acks) / finishing,
        "lost": lost,
        "unfinished": unfinished,
        "duplicated": duplicated,
        "stops": run.stops,
        "refused": sum(run.refused.values()),
    }


# ---- --diagnose: where an acknowledgement's time goes ---------------------------------------


def _quantiles(values: list[float]) -> str:
    if not values:
        return "none"
    ordered = sorted(values)
    p99 = ordered[max(0, int(len(ordered) * 0.99) - 1)]
    return f"p50 {statistics.median(ordered):6.2f} ms, p99 {p99:6.2f} ms (n={len(ordered)})"


def serve_instrumented(data: str, stats_path: str) -> None:
    """The service, with the input journal and the event loop measured from outside: the
    journal's `record` as the HTTP handler awaits it, its writes as the loop awaits them, its
    group commits as its thread runs them (statements and fsync), and the loop's lag (how
    late a 5 ms sleep wakes). Patched at run time here; nothing in the package changes."""
    from hologram.agent.journal import InputJournal
    from hologram.serve import serve

    stats: dict[str, Any] = {"record": [], "commit_wait": [], "commit_run": [], "lag": []}
    original_apply, original_write = InputJournal._apply, InputJournal._write
    original_record = InputJournal.record

    def apply(self: InputJournal, statements: Any) -> Any:
        # One call is one group commit: its statements, then the commit and its fsync.
        began = time.perf_counter()
        try:
            return original_apply(self, statements)
        finally:
            stats["commit_run"].append((time.perf_counter() - began) * 1000)

    async def write(self: InputJournal, *args: Any) -> Any:
        began = time.perf_counter()
        try:
            return await original_write(self, *args)
        finally:
            stats["commit_wait"].append((time.perf_counter() - began) * 1000)

    async def record(self: InputJournal, *args: Any, **options: Any) -> Any:
        began = time.perf_counter()
        try:
            return await original_record(self, *args, **options)
        finally:
            stats["record"].append((time.perf_counter() - began) * 1000)

    InputJournal._apply = apply  # type: ignore[method-assign]
    InputJournal._write = write  # type: ignore[method-assign]
    InputJournal.record = record  # type: ignore[method-assign]

    async def main() -> int:
        async def lag() -> None:
            while True:
                began = time.perf_counter()
                await asyncio.sleep(0.005)
                stats["lag"].append((time.perf_counter() - began) * 1000 - 5.0)

        watcher = asyncio.create_task(lag())
        cpu, wall = time.thread_time(), time.perf_counter()
        # cProfile on 3.11 follows only the thread that enables it: this is the loop's share.
        profile = cProfile.Profile()
        profile.enable()
        code = await serve(data, port=0, drain_timeout=10)
        profile.disable()
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(12)
        stats["profile"] = out.getvalue()
        stats["loop_cpu_s"] = time.thread_time() - cpu
        stats["process_cpu_s"] = time.process_time()
        stats["wall_s"] = time.perf_counter() - wall
        watcher.cancel()
        return code

    samples: Counter[str] = Counter()
    sampling = threading.Event()

    def sample() -> None:
        """Every 5 ms, each other thread's innermost hologram frame: what the threads beside
        the loop are doing for the kernel (waiting on disk included)."""
        me, loop_thread = threading.get_ident(), threading.main_thread().ident
        while not sampling.wait(0.005):
            for ident, frame in sys._current_frames().items():
                if ident in (me, loop_thread):
                    continue
                where, walk = None, frame
                while walk is not None and where is None:
                    if "/hologram/" in walk.f_code.co_filename:
                        where = walk
                    walk = walk.f_back
                if where is not None:  # threads idle in their pools have no hologram frame
                    code = where.f_code
                    samples[f"{os.path.basename(code.co_filename)}:{code.co_name}"] += 1

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    code = asyncio.run(main())
    sampling.set()
    sampler.join()
    stats["thread_samples"] = samples.most_common(10)
    with open(stats_path, "w", encoding="utf-8") as file:
        json.dump(stats, file)
    raise SystemExit(code)


def print_diagnosis(path: str, acks: int) -> None:
    with open(path, encoding="utf-8") as file:
        stats = json.load(file)
    commits = len(stats["commit_run"])
    print(f"  diagnosis ({acks} acknowledged):")
    print(f"    journal.record (insert + commit, as awaited)   {_quantiles(stats['record'])}")
    print(
        f"    journal write, awaited (until its group commit)  {_quantiles(stats['commit_wait'])}"
    )
    print(f"    group commit, run in the journal's thread        {_quantiles(stats['commit_run'])}")
    print(
        f"    journal commits per acknowledged input         {commits / max(acks, 1):6.2f} "
        f"({sum(stats['commit_run']) / 1000:.2f} s of fsync in all)"
    )
    print(f"    event-loop lag (5 ms sleep, lateness)           {_quantiles(stats['lag'])}")
    table = stats["profile"].split("ncalls", 1)[-1].splitlines()[1:]
    print("    the loop thread's own time, top functions (cProfile, tottime):")
    for line in (row for row in table if row.strip()):
        print("      " + line.strip()[:150])
    total = sum(n for _, n in stats["thread_samples"]) or 1
    print("    the other threads at work, sampled every 5 ms (innermost hologram frame):")
    for name, n in stats["thread_samples"]:
        print(f"      {n / total:6.1%}  {name}")
    print(
        f"    CPU: loop thread {stats['loop_cpu_s']:.2f} s, whole process "
        f"{stats['process_cpu_s']:.2f} s, over {stats['wall_s']:.2f} s of service wall time"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=20, help="operations per client")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=120.0, help="seconds per phase")
    parser.add_argument("--stop-share", type=float, default=0.03, help="share of stops")
    parser.add_argument("--interrupt-share", type=float, default=0.15, help="share of interrupts")
    parser.add_argument(
        "--model-delay", type=float, default=0.0, help="model think time per call, seconds"
    )
    parser.add_argument(
        "--settle",
        type=float,
        default=0.0,
        help="seconds between the service's ready line and the first client (0: at once)",
    )
    parser.add_argument(
        "--diagnose",
        action="store_true",
        help="run the service instrumented: where an acknowledgement's time goes",
    )
    if len(sys.argv) == 4 and sys.argv[1] == "--serve-instrumented":
        serve_instrumented(sys.argv[2], sys.argv[3])
        return
    args = parser.parse_args()
    mix = Mix(args.stop_share, args.interrupt_share)
    results = []
    for n in range(args.runs):
        result = asyncio.run(
            one_run(
                args.clients,
                args.requests,
                args.time_limit,
                mix,
                args.model_delay,
                args.diagnose,
                args.settle,
            )
        )
        results.append(result)
        print(
            f"run {n + 1}: {result['acks']:.0f} acknowledged, ack p50 {result['p50']:.1f} ms, "
            f"p99 {result['p99']:.1f} ms, {result['ack_per_s']:.0f} acks/s, "
            f"{result['done_per_s']:.0f} finished/s, lost {result['lost']:.0f}, "
            f"duplicated {result['duplicated']:.0f}, not drained in time "
            f"{result['unfinished']:.0f}, stops {result['stops']:.0f}, "
            f"refused {result['refused']:.0f}"
        )
    med = {k: statistics.median(r[k] for r in results) for k in results[0]}
    lost = sum(r["lost"] for r in results)
    duplicated = sum(r["duplicated"] for r in results)
    print(
        f"\n{args.clients} clients x {args.requests} operations ({mix.stop:.0%} stops, "
        f"{mix.interrupt:.0%} interrupts, model delay {args.model_delay:g} s, "
        f"clients {args.settle:g} s after ready), median of {args.runs} runs"
    )
    print(f"  ack latency p50      {med['p50']:7.1f} ms")
    print(f"  ack latency p99      {med['p99']:7.1f} ms   target ≤ {TARGET_P99_MS:.0f} ms")
    print(f"  acknowledgements     {med['ack_per_s']:7.0f} /s")
    print(f"  inputs finished      {med['done_per_s']:7.0f} /s (send to drained)")
    print(f"  lost (all runs)      {lost:7.0f}      target 0")
    print(f"  duplicated (all)     {duplicated:7.0f}      target 0")
    undrained = sum(r["unfinished"] for r in results)
    if undrained:
        print(f"  not drained in time  {undrained:7.0f}      (raise --time-limit)")
    if lost or duplicated or undrained:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
