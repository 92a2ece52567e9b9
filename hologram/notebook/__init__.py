"""Hologram in Jupyter: the `%hologram` magics and the widgets that show the kernel at work."""

from __future__ import annotations

from typing import Any

from hologram.notebook.cells import Shown, keep_question_marks
from hologram.notebook.layers import LayersModel, LayersWidget, render_svg
from hologram.notebook.magics import HologramMagics, Pending


def load_ipython_extension(ipython: Any) -> None:
    ipython.register_magics(HologramMagics)
    # Before IPython's help syntax, so a `%hologram say …?` line is said, not looked up.
    if keep_question_marks not in ipython.input_transformers_cleanup:
        ipython.input_transformers_cleanup.append(keep_question_marks)


def unload_ipython_extension(ipython: Any) -> None:
    magics = ipython.magics_manager.registry.get(HologramMagics.__name__)
    if isinstance(magics, HologramMagics):
        magics.between_cells.close()
    if keep_question_marks in ipython.input_transformers_cleanup:
        ipython.input_transformers_cleanup.remove(keep_question_marks)


__all__ = [
    "HologramMagics",
    "LayersModel",
    "LayersWidget",
    "Pending",
    "Shown",
    "load_ipython_extension",
    "render_svg",
    "unload_ipython_extension",
]
