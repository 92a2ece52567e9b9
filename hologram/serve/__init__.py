"""The headless service: the same kernel as the notebook, run until a signal stops it."""

from hologram.serve.service import serve

__all__ = ["serve"]
