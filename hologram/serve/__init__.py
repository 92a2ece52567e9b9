"""The headless service: the same kernel as the notebook, behind an HTTP API, a live event
stream and a small web page, run until a signal stops it; and its terminal client."""

from hologram.serve.api import build_app
from hologram.serve.service import serve

__all__ = ["build_app", "serve"]
