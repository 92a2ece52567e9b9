"""The repository's own rules: lint, layering, packaging."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_finds_nothing() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.fail("ruff is not installed: it is part of the [test] extra")
    result = subprocess.run(
        [ruff, "check", "--no-cache", str(ROOT)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _hologram_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return [n for n in names if n == "hologram" or n.startswith("hologram.")]


def test_the_sdk_imports_nothing_else_of_hologram() -> None:
    for path in (ROOT / "hologram" / "sdk").rglob("*.py"):
        outside = [n for n in _hologram_imports(path) if not n.startswith("hologram.sdk")]
        assert outside == [], f"{path.relative_to(ROOT)} imports {outside}"


def test_the_kernel_package_knows_no_concrete_module() -> None:
    allowed = ("hologram.kernel", "hologram.sdk")
    for path in (ROOT / "hologram" / "kernel").rglob("*.py"):
        outside = [n for n in _hologram_imports(path) if not n.startswith(allowed)]
        assert outside == [], f"{path.relative_to(ROOT)} imports {outside}"


def test_the_wheel_ships_adapters_plugins_the_layer_plan_and_the_front_ends(
    tmp_path: Path,
) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    (wheel,) = tmp_path.glob("hologram-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "hologram/depgraph.json" in names
    for folder in ("adapters", "plugins"):
        shipped = sorted(
            str(p.relative_to(ROOT)) for p in (ROOT / folder).rglob("*") if p.is_file()
        )
        assert shipped, f"{folder}/ is empty"
        for source in shipped:
            assert f"hologram/_shipped/{source}" in names, f"{source} is missing from the wheel"
    # The widgets' ES modules and the service page: nothing of them is fetched at run time.
    for folder in ("hologram/notebook/js", "hologram/serve/static"):
        front = sorted(str(p.relative_to(ROOT)) for p in (ROOT / folder).rglob("*") if p.is_file())
        assert front, f"{folder}/ is empty"
        missing = [name for name in front if name not in names]
        assert missing == [], f"missing from the wheel: {missing}"


def _hologram_sources() -> list[Path]:
    return sorted((ROOT / "hologram").rglob("*.py"))


def test_every_task_is_started_in_the_kernels_task_group() -> None:
    """Only hologram/kernel/tasks.py creates asyncio tasks: everything else goes through the
    kernel's group (TaskScope.spawn / start, Once, first_completed), so no task is unowned,
    none outlives shutdown, and none fails unseen."""
    home = ROOT / "hologram" / "kernel" / "tasks.py"
    found = []
    for path in _hologram_sources():
        if path == home:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "create_task(" in line or "ensure_future(" in line:
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == [], "\n".join(found)


def test_no_function_is_longer_than_80_lines() -> None:
    long = []
    for path in _hologram_sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > 80:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines})")
    assert long == [], "\n".join(long)


def test_settings_keys_are_spelled_only_in_the_config_package() -> None:
    """A `core.*` key is named by its section in hologram/config/sections.py; everything
    else reads the typed section, so a renamed key cannot leave a reader behind."""
    home = ROOT / "hologram" / "config"
    found = []
    for path in _hologram_sources():
        if home in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            text = node.value if isinstance(node, ast.Constant) else None
            if isinstance(node, ast.JoinedStr) and node.values:
                first = node.values[0]
                text = first.value if isinstance(first, ast.Constant) else None
            if isinstance(text, str) and text.startswith("core."):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {text[:60]!r}")
    assert found == [], "\n".join(found)
