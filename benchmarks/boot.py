"""Boot benchmarks: the real module set, and the assembly overhead per module.

    python benchmarks/boot.py [--runs 15]

Prints medians beside the targets of ../shared/TARGETS.md. The overhead figure is the time to
plan and boot 200 synthetic modules whose inits do nothing, less the time of calling those
inits directly in the same process, divided by 200.
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
from hologram.kernel import Assembly, plan


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()

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
