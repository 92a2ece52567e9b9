"""The tracker's added cost per tool call, and the data-dir migration it ships beside.

    python benchmarks/tracker.py [--files 10000] [--calls 200] [--runs 5] [--turns 100000]

A sandbox of `--files` small text files is shadowed (hashed into the content-addressed
store) and watched. The same tool (it rewrites one file of the sandbox) is called through
the same `ToolRunner` with `touches_files` and without, interleaved call by call in one
process; the figure is the median per-call time of each, their difference (the tracker's
added cost: two watcher sentinels, reading the dirty paths, one SQLite insert) and their
ratio, the median over `--runs` runs; and the time a restart takes to rebuild the shadow from
the snapshot the stop wrote (stat only, against the first start's hashing). Then benchmarks/migration.py's figure: migrating a
data dir of `--turns` turns from the oldest shipped schema.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hologram.media import BlobStore
from hologram.sdk import ToolCall, ToolDef
from hologram.sdk.events import discard
from hologram.stages.execute import ToolRunner
from hologram.tracker import ChangeLog, Tracker


def sandbox(root: Path, files: int) -> None:
    for n in range(files):
        folder = root / f"d{n // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{n:05d}.txt").write_text(f"file {n}\nline two\n")


async def measure(root: Path, calls: int) -> tuple[float, float]:
    workspace = root / "workspace"

    def new_tracker() -> Tracker:
        return Tracker(
            [workspace],
            BlobStore(root / "media"),
            ChangeLog(root / "tracker.db"),
            root / "t",
            discard,
        )

    tracker = new_tracker()
    started = time.perf_counter()
    await asyncio.to_thread(tracker.start)
    print(
        f"  shadow of {len(tracker.shadow):,} files built in {time.perf_counter() - started:.2f} s"
    )
    counter = {"n": 0}

    def rewrite(args: dict[str, object]) -> str:
        counter["n"] += 1
        (workspace / "d000" / "f00000.txt").write_text(f"edit {counter['n']}\n")
        return "ok"

    # An async handler: the plain one would add a thread hop to both sides alike.
    async def handler(args: dict[str, object]) -> str:
        return rewrite(args)

    plain = ToolDef("plain", "rewrite a file", handler=handler)
    tracked = ToolDef("tracked", "rewrite a file", handler=handler, touches_files=True)
    runner = ToolRunner(lambda: 30.0)
    runner.file_tracker = tracker
    tools = {"plain": plain, "tracked": tracked}
    times: dict[str, list[float]] = {"plain": [], "tracked": []}
    for n in range(calls):
        for name in ("plain", "tracked"):
            await asyncio.sleep(0.005)  # the watcher has heard the last call's events
            started = time.perf_counter()
            result = await runner.execute(ToolCall(f"{name}{n}", name, {}), tools)
            times[name].append(time.perf_counter() - started)
            assert not result.is_error, result.content
    recorded = tracker.log.calls(1)[0]
    assert recorded.mechanism == "watcher" and recorded.changes, recorded
    tracker.stop()
    tracker.log.close()
    again = new_tracker()
    started = time.perf_counter()
    await asyncio.to_thread(again.start)
    print(
        f"  restart: shadow of {len(again.shadow):,} files from the last stop's snapshot in "
        f"{time.perf_counter() - started:.2f} s"
    )
    again.stop()
    again.log.close()
    return statistics.median(times["plain"]), statistics.median(times["tracked"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--turns", type=int, default=100_000)
    args = parser.parse_args()
    plain, tracked = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            root = Path(tmp) / f"run{run}"
            sandbox(root / "workspace", args.files)
            p, t = asyncio.run(measure(root, args.calls))
            plain.append(p)
            tracked.append(t)
    p, t = statistics.median(plain), statistics.median(tracked)
    print(f"sandbox of {args.files:,} files, {args.calls} calls each, median of {args.runs} runs")
    print(f"untracked call p50: {p * 1e3:.3f} ms; tracked call p50: {t * 1e3:.3f} ms")
    print(
        f"tracker's added cost per call p50: {(t - p) * 1e3:.3f} ms (target <= 5 ms); "
        f"ratio tracked/untracked: {t / p:.1f}x"
    )
    print("migration (benchmarks/migration.py):", flush=True)
    subprocess.run(
        [sys.executable, str(Path(__file__).with_name("migration.py")), "--turns", str(args.turns)],
        check=True,
    )


if __name__ == "__main__":
    main()
