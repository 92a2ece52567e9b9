"""The health check and `python -m hologram doctor`: a fresh data dir passes; an unreachable
LLM source, a crashed plugin and a full disk (a free-space need larger than the disk) each
fail, naming the cause."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from hologram import Kernel
from hologram.llm import ScriptedModelServer
from tests.agent.conftest import kernel, model  # noqa: F401


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def doctor(data_dir: Path, **environ: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hologram", "doctor", "--data", str(data_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", **environ},
    )


def test_doctor_passes_on_a_fresh_data_dir(data_dir: Path) -> None:
    done = doctor(data_dir)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok   selftest" in done.stdout and done.stdout.rstrip().endswith("healthy")


def test_doctor_fails_naming_an_unreachable_llm_source(data_dir: Path) -> None:
    unreachable = f"http://127.0.0.1:{closed_port()}/v1"

    done = doctor(data_dir, HOLOGRAM_LLM_BASE_URL=unreachable, HOLOGRAM_LLM_MODEL="m")

    assert done.returncode == 1
    assert f"FAIL llm:default: unreachable at {unreachable}" in done.stdout


async def test_a_reachable_source_passes(kernel: Kernel, model: ScriptedModelServer) -> None:  # noqa: F811
    report = await kernel.health(with_selftest=False)

    by_name = {c.name: c for c in report.checks}
    assert by_name["llm:default"].ok and model.base_url in by_name["llm:default"].detail
    assert report.ok, report.render()


async def test_a_crashed_plugin_fails_the_check_with_its_last_error(
    data_dir: Path,
    model: ScriptedModelServer,  # noqa: F811
) -> None:
    folder = data_dir / "plugins" / "broken"
    folder.mkdir(parents=True)
    manifest = {"name": "broken", "version": "1", "entry": "main.py", "capabilities": ["tools"]}
    (folder / "plugin.json").write_text(json.dumps({**manifest, "auto_start": True}))
    (folder / "main.py").write_text("raise SystemExit('no config for broken')\n")
    environ = {"HOLOGRAM_LLM_BASE_URL": model.base_url, "HOLOGRAM_LLM_MODEL": "scripted-model"}

    async with Kernel(data_dir, environ=environ) as running:
        report = await running.health(with_selftest=False)

    (failed,) = report.failures()
    assert failed.name == "plugin:broken" and failed.detail.startswith("failed")
    assert "last error" in failed.detail


async def test_a_full_disk_fails_the_check(kernel: Kernel) -> None:  # noqa: F811
    await kernel.config.set("core.health.min_free_bytes", 1 << 60)

    report = await kernel.health(with_selftest=False)

    assert [c.name for c in report.failures()] == ["disk"]
    assert "needs" in report.failures()[0].detail
