"""Boot benchmarks: the real module set, the assembly overhead per module, and the start of
the command line.

    python benchmarks/boot.py [--runs 15] [--only-cli]

Prints medians beside the targets of ../shared/TARGETS.md. The overhead figure is the time to
plan and boot 200 synthetic modules whose inits do nothing, less the time of calling those
inits directly in the same process, divided by 200. The command line's figures are the wall
time of `python -m hologram --help` and of each command's `--help` in fresh interpreters,
and the import time the interpreter's own `-X importtime` log adds up for the same start.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hologram import Kernel
from hologram.cli import COMMANDS
from hologram.kernel import Assembly, plan

HELP_TARGET_S = 0.3
"""`python -m hologram --help` (issue 45)."""
COMMAND_HELP_TARGET_S = 0.5
"""Each command's `--help` (issue 45)."""


class Noop:
    def __init__(self, name: str, requires: tuple[str, ...], provides: tuple[str, ...]) -> None:
        self.name, self.requires, self.provides = name, requires, provides

    async def init(self, state: Any) -> None:
        for facility in self.provides:
            setattr(state, facility, True)


def synthetic_graph(count: int, seed: int = 7) -> list[Noop]:
    """`count` modules, each needing up to three facilities of earlier ones: about a dozen
    layers, like a kernel grown large."""
    rng = random.Random(seed)
    modules = []
    for i in range(count):
        earlier = [f"f{j}" for j in range(max(0, i - 30), i)]
        needs = tuple(rng.sample(earlier, min(len(earlier), rng.randint(0, 3))))
        modules.append(Noop(f"m{i}", needs, (f"f{i}",)))
    rng.shuffle(modules)
    return modules


def state_class(count: int) -> type:
    return dataclasses.make_dataclass(
        "BenchState", [(f"f{i}", Any, dataclasses.field(default=None)) for i in range(count)]
    )


async def real_boot_seconds(runs: int) -> list[float]:
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(runs):
            started = time.perf_counter()
            kernel = await Kernel(Path(tmp) / f"run{run}").start()
            times.append(time.perf_counter() - started)
            await kernel.shutdown()
    return times


async def overhead_per_module(count: int, runs: int) -> tuple[float, float, float, int]:
    modules = synthetic_graph(count)
    cls = state_class(count)
    assembled, direct = [], []
    layers = 0
    for _ in range(runs):
        started = time.perf_counter()
        resolved = plan(modules)
        await Assembly(resolved, cls()).boot()
        assembled.append(time.perf_counter() - started)
        layers = len(resolved.layers)

        state = cls()
        started = time.perf_counter()
        for module in modules:
            await module.init(state)
        direct.append(time.perf_counter() - started)
    a, d = statistics.median(assembled), statistics.median(direct)
    return a, d, (a - d) / count, layers


def import_seconds() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import hologram.facade"], check=True)
    return time.perf_counter() - started


def start_seconds(args: list[str], runs: int) -> float:
    """The median wall time of `python -m hologram ARGS` in a fresh interpreter."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "hologram", *args], check=True, stdout=subprocess.DEVNULL
        )
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def import_log_seconds(args: list[str]) -> float:
    """What `-X importtime` reports for the same start: the cumulative time of each import
    made at the top level (the nested ones are inside those)."""
    log = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "hologram", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stderr
    total_us = 0
    for line in log.splitlines():
        fields = line.removeprefix("import time:").split("|")
        if len(fields) == 3 and fields[1].strip().isdigit() and not fields[2].startswith("  "):
            total_us += int(fields[1])
    return total_us / 1e6


def command_line_starts(runs: int) -> None:
    rows = [([], HELP_TARGET_S)] + [([c.name], COMMAND_HELP_TARGET_S) for c in COMMANDS]
    for words, target in rows:
        args = [*words, "--help"]
        wall = start_seconds(args, runs)
        imports = import_log_seconds(args)
        mark = "ok" if wall <= target else "OVER"
        print(
            f"python -m hologram {' '.join(args):<24} median {wall * 1000:6.0f} ms "
            f"(target <= {target * 1000:.0f} ms, {mark}); imports {imports * 1000:5.0f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--only-cli", action="store_true", help="only the command line's start")
    args = parser.parse_args()

    command_line_starts(max(3, args.runs // 3))
    if args.only_cli:
        return

    boots = asyncio.run(real_boot_seconds(args.runs))
    total, baseline, per_module, layers = asyncio.run(overhead_per_module(200, args.runs))
    cold = statistics.median(import_seconds() for _ in range(3))

    print(
        f"boot to ready, real module set (in process): median {statistics.median(boots) * 1000:.1f} ms"
        f"  (p90 {sorted(boots)[int(0.9 * len(boots))] * 1000:.1f} ms; target <= 1000 ms)"
    )
    print(f"import hologram.facade in a fresh interpreter: median {cold * 1000:.0f} ms")
    print(
        f"200 synthetic modules in {layers} layers: plan + boot {total * 1000:.2f} ms, "
        f"direct init calls {baseline * 1000:.2f} ms (ratio {total / baseline:.1f}x)"
    )
    print(f"plan + boot overhead per module: {per_module * 1000:.3f} ms  (target <= 0.5 ms)")


if __name__ == "__main__":
    main()
