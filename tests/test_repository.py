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


def test_the_wheel_ships_adapters_plugins_and_the_layer_plan(tmp_path: Path) -> None:
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
