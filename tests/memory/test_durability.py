"""An acknowledged input survives the kernel being killed with SIGKILL mid-conversation."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from hologram import Kernel

ROOT = Path(__file__).resolve().parents[2]


async def test_a_sigkilled_kernel_loses_no_acknowledged_input(data_dir: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.memory.crash_child", str(data_dir)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    acked: list[str] = []
    assert child.stdout is not None
    try:
        for line in child.stdout:
            acked.append(line.split()[1])
            if len(acked) == 60:  # several prunes and archives have happened by now
                child.send_signal(signal.SIGKILL)
                break
    finally:
        child.kill()
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL, child.stderr.read() if child.stderr else ""
    assert len(acked) == 60

    async with Kernel(data_dir) as kernel:
        memory = kernel.state.memory
        await kernel.state.coldcontext.wait_ready()
        in_window = {e.input.split()[1] for e in memory.context.events}
        archived = {d.input.split()[1] for d in kernel.state.coldcontext.documents()}
        lost = [n for n in acked if n not in in_window | archived]
        assert lost == [], f"acknowledged inputs lost: {lost}"
        assert len(archived) > 20, "the conversation never pruned: the test proves too little"
        assert memory.context.problems == [] or all("line" in p for p in memory.context.problems)
