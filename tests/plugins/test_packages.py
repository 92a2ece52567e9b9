"""`.hmap` packages: installed and uninstalled through the registry; bad ones refused
without touching the plugins folder."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from hologram import Kernel
from hologram.plugins import PackageError, PluginRegistry, State, build_package
from hologram.sdk import ToolCall

LUA = 'sdk.register_tool("pkg_ping", "Ping.", nil, function() return "pong" end)\n'


def zip_of(files: dict[str, str | bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def manifest(**fields: object) -> str:
    return json.dumps(
        {"name": "pkg", "version": "1.0", "entry": "main.lua", "capabilities": ["tools"], **fields}
    )


def snapshot(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


async def test_an_installed_package_runs_and_uninstall_removes_it(
    registry: PluginRegistry, kernel: Kernel, write_plugin: Callable[..., Path]
) -> None:
    data = build_package(write_plugin("pkg", LUA, entry="main.lua"))
    entry = await registry.install_package(data)
    assert entry.state is State.RUNNING and entry.origin == "user"
    assert (kernel.data_dir / "plugins" / "pkg" / "main.lua").is_file()
    result = await kernel.state.stagehost.execute(ToolCall("c", "pkg_ping", {}))
    assert result.content == "pong"
    await registry.uninstall("pkg")
    assert not (kernel.data_dir / "plugins" / "pkg").exists()
    assert "pkg_ping" not in kernel.state.stagehost.tools


async def test_a_package_in_one_top_folder_installs_from_a_file_path(
    registry: PluginRegistry, tmp_path: Path
) -> None:
    path = tmp_path / "pkg.hmap"
    path.write_bytes(zip_of({"pkg/plugin.json": manifest(), "pkg/main.lua": LUA}))
    assert (await registry.install_package(path)).state is State.RUNNING


@pytest.mark.parametrize(
    ("files", "fragment"),
    [
        ({"plugin.json": manifest(), "main.lua": LUA, "../evil.sh": "x"}, "zip slip"),
        ({"plugin.json": manifest(), "main.lua": LUA, "/etc/evil": "x"}, "zip slip"),
        ({"main.lua": LUA}, "no plugin.json"),
        ({"plugin.json": "{not json", "main.lua": LUA}, "not valid JSON"),
        (
            {"plugin.json": manifest(requires_facilities=["memroy"]), "main.lua": LUA},
            "unknown facility",
        ),
        ({"plugin.json": manifest(entry="other.lua"), "main.lua": LUA}, "is not in the package"),
        ({"plugin.json": manifest(auto_start=False), "main.lua": LUA}, "ships no SKILL.md"),
        ({"plugin.json": manifest(name="pluginmgr"), "main.lua": LUA}, "is built in"),
    ],
)
async def test_bad_packages_are_refused_without_touching_the_plugins_folder(
    registry: PluginRegistry, kernel: Kernel, files: dict[str, str], fragment: str
) -> None:
    plugins = kernel.data_dir / "plugins"
    before = snapshot(plugins)
    with pytest.raises(PackageError, match=fragment):
        await registry.install_package(zip_of(files))
    assert snapshot(plugins) == before


async def test_an_oversize_package_and_a_non_zip_are_refused(
    registry: PluginRegistry, kernel: Kernel
) -> None:
    await kernel.config.set("core.plugins.max_package_bytes", 1000)
    with pytest.raises(PackageError, match="over the limit of 1000"):
        await registry.install_package(
            zip_of({"plugin.json": manifest(), "main.lua": LUA, "pad": b"\0" * 5000}) + b"\0" * 1000
        )
    with pytest.raises(PackageError, match=r"not a \.hmap package"):
        await registry.install_package(b"plain bytes")
    assert snapshot(kernel.data_dir / "plugins") == []


async def test_auto_start_false_with_a_skill_installs_without_starting(
    registry: PluginRegistry,
) -> None:
    skill = "---\nname: pkg\ndescription: how to use pkg\n---\nCall pkg_ping.\n"
    data = zip_of({"plugin.json": manifest(auto_start=False), "main.lua": LUA, "SKILL.md": skill})
    entry = await registry.install_package(data)
    assert entry.state is State.AVAILABLE
