"""Uvicorn inside the service's own event loop, on the host and port it was asked for.

Uvicorn and Starlette because the kernel is asyncio through and through: an ASGI server in
the same loop calls the kernel's facade directly (no thread hops, no second loop), streams
server-sent events natively, and the same pair already serves the scripted model. The socket
is made here so it is a TCP socket asyncio knows to set TCP_NODELAY on (see
`hologram.llm.scripted_server.InProcessServer`: without it small responses wait ~40 ms).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator
from typing import Any

import uvicorn


class _OwnSignals(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield  # the service handles SIGINT/SIGTERM itself, to drain before stopping


def bind(host: str, port: int) -> socket.socket:
    """A listening socket; raises OSError naming the address when it is taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(exc.errno, f"cannot listen on {host}:{port}: {exc.strerror}") from None
    return sock


class HttpServer:
    def __init__(self, app: Any, sock: socket.socket) -> None:
        self.sock = sock
        config = uvicorn.Config(
            app,
            log_config=None,
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=3,
            limit_concurrency=1000,
        )
        self._server = _OwnSignals(config)
        self._task: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    async def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(
            self._server.serve(sockets=[self.sock]), name="hologram-http"
        )
        # uvicorn has no "started" future; its flag flips within a few loop turns.
        while not self._server.started:
            if self._task.done():
                self._task.result()
                raise RuntimeError("the HTTP server stopped while starting")
            await asyncio.sleep(0.005)

    async def stop(self) -> None:
        if self._task is None:
            return
        self._server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None
