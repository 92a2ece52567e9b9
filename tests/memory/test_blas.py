"""Memory caps numpy's BLAS pool for its process (core.memory.blas_threads)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

BOOT = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    import threadpoolctl
    from hologram import Kernel

    def blas():
        return [p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]

    async def main(data, threads):
        before = blas()
        if threads is not None:
            async with Kernel(Path(data), environ={}) as kernel:
                await kernel.config.set("core.memory.blas_threads", threads)
            threadpoolctl.threadpool_limits(limits=before[0], user_api="blas")
        async with Kernel(Path(data), environ={}):
            print(json.dumps({"before": before, "after": blas()}))

    asyncio.run(main(sys.argv[1], None if sys.argv[2] == "-" else int(sys.argv[2])))
    """
)


def boot(data: Path, threads: int | None) -> dict[str, list[int]]:
    result = subprocess.run(
        [sys.executable, "-c", BOOT, str(data), "-" if threads is None else str(threads)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_kernel_caps_blas_to_one_thread_unless_told_to_leave_it(tmp_path: Path) -> None:
    default = boot(tmp_path / "a", None)
    assert default["before"], "numpy's BLAS pool was not found"
    assert default["after"] == [min(n, 1) for n in default["before"]]
    left = boot(tmp_path / "b", 0)
    assert left["after"] == left["before"]
