"""Package faces whose names load on first use.

A package's `__init__` names what other packages may use. Where those names pull in heavy
modules (the kernel, httpx, pandas, Lua), the face defers each to the first time it is read,
so a command's `--help`, a client or a plugin process pays only for what it touches:

    _LAZY = {"hologram.serve.api": ("build_app",), "hologram.serve.service": ("serve",)}
    __all__ = ["build_app", "serve"]
    __getattr__ = lazy_face(__name__, _LAZY)

    if TYPE_CHECKING:  # the same names, for type checkers, linters and readers
        from hologram.serve.api import build_app
        from hologram.serve.service import serve
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_face(package: str, where: Mapping[str, Iterable[str]]) -> Callable[[str], Any]:
    """The module `__getattr__` (PEP 562) of `package`, whose names live in the submodules
    `where` maps to them."""
    home = {name: module for module, names in where.items() for name in names}

    def load(name: str) -> Any:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # later lookups are plain attribute reads
        return value

    return load
