"""A kernel (scripted model on loopback) with a tool that writes, renames and deletes files
in its workspace, declared as touching files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import pytest

from hologram import Kernel
from hologram.sdk import Param, ToolCall, ToolDef, ToolResult
from tests.agent.conftest import Recorder, agent, events, kernel, model, notebook  # noqa: F401
from tests.plugins.conftest import registry, wait_for, write_plugin  # noqa: F401


def edit_tool(workspace: Path, outside: Path | None = None) -> ToolDef:
    def edit(
        op: Annotated[str, Param("write, rename, delete, chmod or outside")],
        path: Annotated[str, Param("a path under the workspace")],
        content: str = "",
        to: str = "",
        mode: int = 0o644,
    ) -> str:
        """Change one file of the workspace."""
        target = workspace / path
        if op == "write":
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
        elif op == "rename":
            os.rename(target, workspace / to)
        elif op == "delete":
            target.unlink()
        elif op == "chmod":
            os.chmod(target, mode)
        elif op == "outside" and outside is not None:
            (outside / path).write_text(content)
        return "done"

    return ToolDef.from_function(edit, touches_files=True)


@pytest.fixture
def workspace(kernel: Kernel) -> Path:  # noqa: F811
    return (kernel.data_dir / "workspace").resolve()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside"
    path.mkdir()
    return path


@pytest.fixture
def edit(kernel: Kernel, workspace: Path, outside: Path) -> ToolDef:  # noqa: F811
    return kernel.state.stagehost.register_tool(edit_tool(workspace, outside))


async def call(
    kernel: Kernel,  # noqa: F811
    ident: str,
    /,
    name: str = "edit",
    **arguments: object,
) -> ToolResult:
    result = await kernel.state.stagehost.execute(ToolCall(ident, name, dict(arguments)))
    assert not result.is_error, result.content
    return result


__all__ = ["Recorder", "call", "edit_tool"]
