"""Service load benchmark: N concurrent HTTP clients against `python -m hologram serve`.

    python benchmarks/serve_load.py [--clients 50] [--requests 20] [--runs 3] [--time-limit 120]

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
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
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
    process = subprocess.Popen(
        [sys.executable, "-m", "hologram", *args], stdout=subprocess.PIPE, text=True, **options
    )
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
    clients: int, requests: int, time_limit: float, mix: Mix, model_delay: float
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
    os.environ["HOLOGRAM_LLM_BASE_URL"] = model_url
    os.environ["HOLOGRAM_LLM_API_KEY"] = "sk-bench"
    service, url = start(env_args, r"serving (http://127\.0\.0\.1:\d+)/")
    base = url + "/api/v1"
    run = Run()
    try:
        ready = asyncio.Event()
        watcher = asyncio.create_task(watch_starts(base, run, ready))
        await ready.wait()
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
    args = parser.parse_args()
    mix = Mix(args.stop_share, args.interrupt_share)
    results = []
    for n in range(args.runs):
        result = asyncio.run(
            one_run(args.clients, args.requests, args.time_limit, mix, args.model_delay)
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
        f"{mix.interrupt:.0%} interrupts, model delay {args.model_delay:g} s), "
        f"median of {args.runs} runs"
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
