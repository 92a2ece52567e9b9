"""Hologram in Jupyter: the `%hologram` magics and the widgets that show the kernel at work."""

from __future__ import annotations

from typing import Any

from hologram.notebook.layers import LayersModel, LayersWidget, render_svg
from hologram.notebook.magics import HologramMagics, Pending


def load_ipython_extension(ipython: Any) -> None:
    ipython.register_magics(HologramMagics)


__all__ = [
    "HologramMagics",
    "LayersModel",
    "LayersWidget",
    "Pending",
    "load_ipython_extension",
    "render_svg",
]
