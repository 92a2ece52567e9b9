"""Hologram: a Jupyter-native research workbench for long-running companion agents."""

from hologram.facade import Kernel, Phase

__version__ = "0.1.0"

__all__ = ["Kernel", "Phase", "__version__"]


def load_ipython_extension(ipython: object) -> None:
    """`%load_ext hologram`: register the `%hologram` magics."""
    from hologram.notebook import load_ipython_extension as load

    load(ipython)
