"""The Kernel facade: boot, the data dir, shutdown."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from hologram import Kernel, Phase
from hologram._group0 import GIVEN
from hologram.kernel import BootError, DataDirLockedError, Progress, Status, plan
from hologram.modules import kernel_modules
from hologram.sdk import (
    Event,
    EventType,
    SystemNote,
)


def real_layers() -> list[list[str]]:
    """The layers of the real module set, which grows as subsystems land."""
    return plan(kernel_modules(), GIVEN).layer_names()


async def test_kernel_boots_the_real_module_set_and_shuts_down(data_dir: Path) -> None:
    ready: list[Event] = []
    async with Kernel(data_dir) as kernel:
        assert kernel.phase is Phase.READY
        assert kernel.layers == real_layers() and "events" in kernel.layers[0]
        topology = kernel.topology()
        assert (
            topology[0]
            == "group 0  data-dir lock, logging, data-dir check, config db, backup pruning, config snapshot"
        )
        assert topology[1].startswith("layer 0  ") and len(topology) == 1 + len(kernel.layers)
        assert kernel.config.get("core.agent.max_tool_rounds") == 10
        kernel.events.subscribe(EventType.SYSTEM, ready.append)
        kernel.events.emit(SystemNote(kind="note", detail={"text": "hi"}))
        status = kernel.status()
        assert status["phase"] == "ready" and set(status["timings_ms"]) >= {"events", "config db"}
    assert kernel.phase is Phase.STOPPED
    assert [e.payload for e in ready] == [SystemNote(kind="note", detail={"text": "hi"})]
    assert "ready" in (data_dir / "logs" / "hologram.log").read_text()


async def test_shutdown_closes_modules_in_reverse_layer_order_then_group_0(data_dir: Path) -> None:
    kernel = await Kernel(data_dir).start()
    layers = kernel.layers
    closed = await kernel.shutdown()
    assert closed[-6:] == [
        "config snapshot",
        "backup pruning",
        "config db",
        "data-dir check",
        "logging",
        "data-dir lock",
    ]
    modules = closed[:-6]
    assert sorted(modules) == sorted(name for layer in layers for name in layer)
    layer_of = {name: index for index, layer in enumerate(layers) for name in layer}
    assert [layer_of[m] for m in modules] == sorted((layer_of[m] for m in modules), reverse=True)


async def test_config_survives_a_kernel_restart(data_dir: Path) -> None:
    async with Kernel(data_dir) as kernel:
        await kernel.config.set("core.agent.personal_prompt", "You are Holo.")
    async with Kernel(data_dir) as kernel:
        assert kernel.config.get("core.agent.personal_prompt") == "You are Holo."
        assert kernel.state.config_snapshot["core.agent.personal_prompt"] == "You are Holo."


async def test_two_kernels_on_two_data_dirs_run_side_by_side(tmp_path: Path) -> None:
    async with Kernel(tmp_path / "a") as a, Kernel(tmp_path / "b") as b:
        await a.config.set("core.memory.context.top_k", 20)
        assert b.config.get("core.memory.context.top_k") == 40
        assert a.events is not b.events
    log_a = (tmp_path / "a" / "logs" / "hologram.log").read_text()
    assert a.id in log_a and b.id not in log_a


async def test_a_second_kernel_on_the_same_data_dir_in_one_process_is_refused(
    data_dir: Path,
) -> None:
    async with Kernel(data_dir):
        with pytest.raises(BootError) as caught:
            await Kernel(data_dir).start()
        assert isinstance(caught.value.__cause__, DataDirLockedError)
        assert caught.value.__cause__.pid is not None


async def test_a_locked_data_dir_names_the_holders_pid(data_dir: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from hologram.kernel import DataDirLock;"
            "DataDirLock(Path(sys.argv[1])).acquire(); print('locked', flush=True); time.sleep(60)",
            str(data_dir),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        kernel = Kernel(data_dir)
        with pytest.raises(BootError) as caught:
            await kernel.start()
        assert f"PID {holder.pid}" in str(caught.value)
        assert kernel.phase is Phase.FAILED
    finally:
        holder.kill()
        holder.wait()
    # The operating system released the dead holder's lock: no stale lock file to delete.
    async with Kernel(data_dir) as kernel:
        assert kernel.phase is Phase.READY


async def test_boot_observers_see_group_0_and_every_module(data_dir: Path) -> None:
    seen: list[Progress] = []
    kernel = Kernel(data_dir)
    kernel.add_observer(seen.append)
    async with kernel:
        pass
    done = [p.name for p in seen if p.status is Status.DONE]
    group0 = [
        "data-dir lock",
        "logging",
        "data-dir check",
        "config db",
        "backup pruning",
        "config snapshot",
    ]
    assert done[:6] == group0
    assert sorted(done[6:]) == sorted(name for layer in real_layers() for name in layer)
    assert next(p.name for p in seen if p.status is Status.CLOSED) in real_layers()[-1]


async def test_start_can_run_as_a_background_task(data_dir: Path) -> None:
    kernel = Kernel(data_dir)
    task = asyncio.create_task(kernel.start())
    await asyncio.wait_for(kernel.wait_ready(), 10)
    assert task.done() and kernel.phase is Phase.READY
    await kernel.shutdown()
