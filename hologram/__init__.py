"""Hologram: a Jupyter-native research workbench for long-running companion agents.

`from hologram import Kernel` works as ever, but the kernel is imported on first use, not
with the package: a plugin process, `python -m hologram --help` and anything that needs
only `hologram.sdk` should not pay for the whole kernel (numpy, jieba, lupa, starlette…).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hologram._version import __version__
from hologram.kernel import lazy_face

_LAZY = {"hologram.facade": ("Kernel", "Phase")}

__all__ = ["Kernel", "Phase", "__version__"]
__getattr__ = lazy_face(__name__, _LAZY)

if TYPE_CHECKING:
    from hologram.facade import Kernel, Phase


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def load_ipython_extension(ipython: object) -> None:
    """`%load_ext hologram`: register the `%hologram` magics."""
    from hologram.notebook import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: object) -> None:
    """`%unload_ext hologram`: take back what loading added to the shell."""
    from hologram.notebook import unload_ipython_extension as unload

    unload(ipython)
