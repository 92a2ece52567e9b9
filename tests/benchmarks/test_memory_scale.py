"""benchmarks/memory_scale.py at a tiny size: it runs end to end on the real stores and its
report names every figure the issue asks for, each beside its target. No time is asserted:
the benchmark prints figures, the test checks that it prints them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_tiny_run_names_every_figure(tmp_path: Path) -> None:
    tiny = ["--turns", "400", "--sizes", "150", "--runs", "1", "--queries", "6"]
    # No HOLOGRAM_* setting of the caller's reaches the benchmark's kernels.
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOLOGRAM_")}
    done = subprocess.run(
        [sys.executable, "benchmarks/memory_scale.py", *tiny],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "TMPDIR": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    for figure in (
        "ingestion throughput",
        "recall p50",
        "recall p95",
        "bytes/turn",
        "RSS",
        "boot to ready on the data dir of",
        "boot to first recall answered",
        "resident memory (RSS)",
        "disk by store",
    ):
        assert figure in out, f"{figure!r} missing from:\n{out}"
    # Both sizes measured (the one asked for and the whole run), each on a row of its own.
    rows = {int(m.group(1).replace(",", "")) for m in re.finditer(r"^\s+([\d,]+)\s+\d", out, re.M)}
    assert {150, 400} <= rows, out
    # The targets of the table stand beside their figures.
    assert "target <= 2 s at 200k turns" in out
    assert re.search(r"target p95", out) and "(at 200k)" in out
    # The growth checks, with their fitted ratios, for recall and for disk.
    assert re.search(r"recall p95\s+fitted exponent\s+-?[\d.]+\s+growth / n-log-n growth", out)
    assert re.search(r"disk\s+fitted exponent\s+-?[\d.]+\s+growth / linear growth", out)
    # What went in reached the stores: the window stays at its size, the rest was archived.
    stored = re.search(r"window events (\d+), cold documents ([\d,]+)", out)
    assert stored is not None, out
    window, cold = int(stored.group(1)), int(stored.group(2).replace(",", ""))
    assert window <= 45 and cold > 100, out
