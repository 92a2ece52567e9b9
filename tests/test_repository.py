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


def test_mypy_finds_nothing() -> None:
    """The type checker (configured in pyproject.toml: strict on the sdk and the kernel) on
    the package, then on each shipped plugin as its own root, the way it runs."""
    mypy = shutil.which("mypy", path=str(Path(sys.executable).parent)) or shutil.which("mypy")
    if mypy is None:
        pytest.fail("mypy is not installed: it is part of the [test] extra")
    roots = ["hologram", *sorted(str(p.parent) for p in (ROOT / "plugins").glob("*/main.py"))]
    for root in roots:
        result = subprocess.run([mypy, root], capture_output=True, text=True, cwd=ROOT)
        assert result.returncode == 0, f"mypy {root}:\n{result.stdout}{result.stderr}"


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


#: The floors of the package, lowest first, numbered from 1 as the README's tour numbers
#: them. A module may import its own floor and any floor below, never one above: not at
#: module level, not inside a function, not for a type under TYPE_CHECKING. A name is a
#: package or a top-level module of `hologram`; "" is the package's own face
#: (`from hologram import Kernel`), which stands above everything.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("sdk", "_version", "_shipped"),  # the contract plugins import: pure types
    ("kernel",),  # assembly; it knows no concrete module
    ("config", "events", "media", "knowledge"),  # settings, the bus, the stores
    ("llm", "memory", "stages", "tracker"),  # the subsystems
    ("channels", "health", "security", "agent"),  # the runtime around a turn
    # The plugin host and the built-ins, handed what they need; the data-dir check, which
    # knows every store's schema (it runs first at boot, but reads the stores' modules).
    ("plugins", "update"),
    ("modules", "state", "_group0"),  # the one module list and the state it fills
    ("facade",),  # the Kernel
    ("notebook", "serve", "eval", "transfer"),  # the front ends
    ("client",),  # the service's client, typed by the service's own declarations
    ("cli", "__main__", ""),  # the command line and the package's face
)

#: Import circles of more than one file that may stay, each with its reason. Empty: every
#: circle the house had was broken by giving the lower side what it needs.
ALLOWED_CIRCLES: tuple[frozenset[str], ...] = ()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    """Module -> the modules of hologram it imports, wherever in the file the import is."""
    modules = {_module_name(path): path for path in _hologram_sources()}

    def resolve(name: str) -> str:
        while name not in modules:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert node.level == 0, f"{path.relative_to(ROOT)}: a relative import"
                for alias in node.names:
                    targets.add(f"{node.module}.{alias.name}")
            elif isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
        graph[name] = {
            resolve(t) for t in targets if t == "hologram" or t.startswith("hologram.")
        } - {name}
    return graph


def _floor(module: str) -> int:
    room = module.split(".")[1] if "." in module else ""
    for number, rooms in enumerate(FLOORS, 1):
        if room in rooms:
            return number
    raise AssertionError(
        f"{module} stands on no floor: add hologram/{room or '__init__'} to FLOORS in "
        "tests/test_repository.py, on the floor its imports allow"
    )


def test_no_module_imports_a_floor_above_its_own() -> None:
    upward = [
        f"{module} (floor {_floor(module)}) imports {target} (floor {_floor(target)})"
        for module, targets in sorted(_import_graph().items())
        for target in sorted(targets)
        if _floor(target) > _floor(module)
    ]
    assert upward == [], "\n".join(upward)


def test_no_import_circle_of_more_than_one_file() -> None:
    import networkx as nx

    graph = nx.DiGraph([(a, b) for a, targets in _import_graph().items() for b in targets])
    circles = [
        sorted(component)
        for component in nx.strongly_connected_components(graph)
        if len(component) > 1 and frozenset(component) not in ALLOWED_CIRCLES
    ]
    assert circles == [], "\n".join(", ".join(circle) for circle in circles)


#: Imports that may reach past a package's face, each with its reason. Empty: every name
#: another package uses is on the face of the package that defines it.
ALLOWED_PAST_A_FACE: frozenset[tuple[str, str]] = frozenset()


def test_other_packages_import_only_a_packages_face() -> None:
    """A package's `__init__` names what other packages may use (lazily where its modules are
    heavy, `hologram.kernel.lazy_face`); a module outside the package imports from there,
    never from one of its modules, so the package can rearrange its rooms freely."""
    past = []
    for path in _hologram_sources():
        module = _module_name(path)
        room = module.split(".")[1] if "." in module else ""
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                parts = name.split(".")
                if parts[0] != "hologram" or len(parts) < 3 or parts[1] == room:
                    continue
                if (module, name) not in ALLOWED_PAST_A_FACE:
                    past.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {name}")
    assert past == [], "\n".join(past)


def _literal_names(node: ast.expr) -> list[str]:
    return [
        e.value for e in ast.walk(node) if isinstance(e, ast.Constant) and isinstance(e.value, str)
    ]


def test_a_lazy_face_lists_each_name_once_in_each_of_its_three_places() -> None:
    """A face that loads its names on first use (`lazy_face`) says them three times: where
    each lives (`_LAZY`), what it exports (`__all__`), and the imports a type checker reads.
    The three must agree, or a name is exported that does not load, or loads untyped."""
    faces = 0
    for path in _hologram_sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        lazy: dict[str, list[str]] = {}
        exported: list[str] = []
        typed: dict[str, list[str]] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                if node.targets[0].id == "_LAZY" and isinstance(node.value, ast.Dict):
                    for key, value in zip(node.value.keys, node.value.values, strict=True):
                        assert isinstance(key, ast.Constant)
                        lazy[key.value] = _literal_names(value)
                elif node.targets[0].id == "__all__":
                    exported = _literal_names(node.value)
            elif isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
                for statement in node.body:
                    if isinstance(statement, ast.ImportFrom) and statement.module:
                        names = [a.asname or a.name for a in statement.names]
                        typed.setdefault(statement.module, []).extend(names)
        if not lazy:
            continue
        faces += 1
        where = path.relative_to(ROOT)
        loaded = sorted(n for names in lazy.values() for n in names)
        assert len(loaded) == len(set(loaded)), f"{where}: a name listed twice in _LAZY"
        assert sorted(set(exported) - {"__version__"}) == loaded, f"{where}: __all__ vs _LAZY"
        assert {m: sorted(n) for m, n in typed.items()} == {
            m: sorted(n) for m, n in lazy.items()
        }, f"{where}: the TYPE_CHECKING imports vs _LAZY"
    assert faces >= 8


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
