"""A kernel with the scripted model on loopback, and plugin folders written per test."""

from __future__ import annotations

import asyncio
import json
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hologram import Kernel
from hologram.plugins import PluginRegistry
from tests.agent.conftest import Recorder, agent, events, kernel, model, notebook  # noqa: F401

DEADLINE = 15.0


@pytest.fixture
def registry(kernel: Kernel) -> PluginRegistry:  # noqa: F811
    assert kernel.state.plugins is not None
    return kernel.state.plugins


@pytest.fixture
def write_plugin(tmp_path: Path) -> Callable[..., Path]:
    """write_plugin(name, source, entry="main.py", capabilities=[...], **manifest) -> folder."""

    def write(
        name: str,
        source: str,
        *,
        entry: str = "main.py",
        capabilities: list[str] | None = None,
        root: Path | None = None,
        **manifest: Any,
    ) -> Path:
        folder = (root or tmp_path / "plugins") / name
        folder.mkdir(parents=True, exist_ok=True)
        data = {"name": name, "version": "1.0", "entry": entry, **manifest}
        data["capabilities"] = capabilities if capabilities is not None else ["tools", "stages"]
        (folder / "plugin.json").write_text(json.dumps(data))
        (folder / entry).write_text(textwrap.dedent(source))
        return folder

    return write


async def wait_for(predicate: Callable[[], object], what: str) -> None:
    """Poll until `predicate()` holds; the deadline only guards against a hang."""
    async with asyncio.timeout(DEADLINE):
        while not predicate():  # noqa: ASYNC110  (polling observable state)
            await asyncio.sleep(0.01)
    assert predicate(), what


def of(recorder: Recorder, kind: str, plugin: str) -> list[Any]:
    return [e for e in recorder.of(kind) if e.payload.plugin == plugin]
