"""The headless service: the same kernel as the notebook, behind an HTTP API, a live event
stream and a small web page, run until a signal stops it.

Names load with the submodule that defines them, on first use: the `serve` command's
`--help` and the client (`hologram.client`, which reads the endpoints' declarations) need
no kernel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hologram.kernel import lazy_face

_LAZY = {
    "hologram.serve.api": ("build_app",),
    "hologram.serve.calls": ("Call", "EventStream", "HologramError", "Operations"),
    "hologram.serve.inputs": ("Ack",),
    "hologram.serve.service": ("serve",),
    "hologram.serve.stream": ("StreamEvent",),
}

__all__ = [
    "Ack",
    "Call",
    "EventStream",
    "HologramError",
    "Operations",
    "StreamEvent",
    "build_app",
    "serve",
]
__getattr__ = lazy_face(__name__, _LAZY)

if TYPE_CHECKING:
    from hologram.serve.api import build_app
    from hologram.serve.calls import Call, EventStream, HologramError, Operations
    from hologram.serve.inputs import Ack
    from hologram.serve.service import serve
    from hologram.serve.stream import StreamEvent
