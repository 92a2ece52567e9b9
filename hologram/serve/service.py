"""`python -m hologram serve`: boot, serve HTTP, run until SIGINT or SIGTERM, drain, shut down.

The web stack is Starlette on uvicorn because the kernel is asyncio through and through: an
ASGI server in the same loop calls the kernel's facade directly (no thread hops, no second
loop), streams server-sent events natively, and the same pair already serves the scripted
model, through the same `InProcessServer`.

Shutdown, in order: the intake closes (new input gets 503); the work in hand gets up to
`drain_timeout` seconds to finish (a second signal cuts this short); the event streams end;
the HTTP server stops taking connections; the kernel closes every store. Whatever input was
acknowledged and not finished stays in the journal and runs at the next start.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
from pathlib import Path

from hologram.config import ConfigError
from hologram.facade import Kernel
from hologram.kernel import AssemblyError, first_completed
from hologram.llm import NO_LLM_HINT, InProcessServer
from hologram.memory import Memory
from hologram.serve.access import TOKEN_FILE, AccessGuard, is_loopback, load_or_create_token
from hologram.serve.api import build_app
from hologram.serve.bodies import DEFAULT_BODY_LIMIT
from hologram.serve.context import ServiceInfo
from hologram.serve.intake import Intake, register_service_channels
from hologram.serve.mcp_server import McpDoor
from hologram.serve.stream import EventStream

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8787


def _say(line: str) -> None:
    print(line, flush=True)


def _llm_line(kernel: Kernel) -> str:
    sources = [] if kernel.state.llm is None else kernel.state.llm.status()
    if sources and sources[0]["offline"]:
        return f"llm: no LLM configured: the offline scripted model answers ({NO_LLM_HINT['en']})"
    return "llm: " + ", ".join(f"{s['source']} ({s['state']})" for s in sources)


def _announce(
    kernel: Kernel,
    url: str,
    token: str | None,
    made: bool,
    settled: float | None,
    indexed: bool,
) -> None:
    """The lines a start prints: the layers, the LLM, memory, the access rule, then ready."""
    for line in kernel.topology():
        _say(line)
    _say(_llm_line(kernel))
    if settled is not None:
        _say(
            f"memory ready in {settled * 1000:.0f} ms (stores loaded, word dictionary read"
            + (
                ")"
                if indexed
                else "; the archive goes on being indexed, newest turns first: recall finds "
                "them as they come)"
            )
        )
    if token is not None:
        where = Path(kernel.data_dir) / TOKEN_FILE
        if made:
            _say(
                f"access: bound beyond loopback; bearer token (shown once; kept in {where}): "
                f"{token}"
            )
        else:
            _say(f"access: bound beyond loopback; bearer token in {where}")
    _say(
        f"hologram ready in {(kernel.boot_seconds or 0) * 1000:.0f} ms on {Path(kernel.data_dir)} "
        f"(pid {os.getpid()}); serving {url} (API {url}api/v1, OpenAI {url}v1, MCP {url}mcp); "
        "stop with Ctrl-C or SIGTERM"
    )


async def serve(
    data_dir: str | os.PathLike[str] | None = None,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    drain_timeout: float = 10.0,
    body_limit: int = DEFAULT_BODY_LIMIT,
) -> int:
    """Run a kernel behind the HTTP API until SIGINT or SIGTERM; return the exit code."""
    loop = asyncio.get_running_loop()
    signals = asyncio.Queue[int]()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, signals.put_nowait, sig)

    kernel = Kernel(data_dir)
    try:
        await kernel.start()
    except (AssemblyError, ConfigError) as exc:
        print(f"hologram: cannot start: {exc}", file=sys.stderr, flush=True)
        return 1
    loopback = is_loopback(host)
    # The socket is bound before the app is built: the app shows the port it got.
    server = InProcessServer(
        None, port, host=host, timeout_graceful_shutdown=3, limit_concurrency=1000
    )
    try:
        sock = server.bind()
        token, made = (None, False) if loopback else load_or_create_token(kernel.data_dir)
    except (OSError, ValueError) as exc:
        print(f"hologram: {exc}", file=sys.stderr, flush=True)
        await kernel.shutdown()
        return 1

    stream = EventStream()
    unsubscribe = stream.attach(kernel.events.subscribe)
    register_service_channels(kernel)
    intake = Intake(kernel)
    mcp = McpDoor(kernel, intake)
    url_host = f"[{host}]" if ":" in host else host
    url = f"http://{url_host}:{server.port}/"
    service = ServiceInfo(
        url=url,
        host=host,
        port=server.port,
        auth="loopback" if loopback else "bearer",
        boot_heap_frozen=0,
    )
    app = build_app(kernel, stream, intake, body_limit=body_limit, service=service, mcp=mcp.app)
    server.app = AccessGuard(app, token=token, loopback_bind=loopback)
    # Input is taken once memory can answer: not while jieba's first load holds the GIL.
    memory = kernel.state.memory
    settled = None if memory is None else await memory.settle()
    indexed = memory is None or await memory.indexed()
    # Counted once: gc.get_freeze_count walks the frozen objects, tens of ms for each ask.
    service["boot_heap_frozen"] = freeze_boot_heap()
    if memory is not None and not indexed:
        kernel.spawn(freeze_when_indexed(memory, service), name="archive-heap", awaited=False)
    async with mcp.running():
        await server.start(sock)
        _announce(kernel, url, token, made, settled, indexed)
        await signals.get()
        await _drain(kernel, intake, signals, drain_timeout)
        stream.close()
        unsubscribe()
    _say("hologram stopping: flushing stores")
    stopping = kernel.spawn(server.stop(), name="http-stop")
    await kernel.shutdown()
    await stopping
    _say("hologram stopped")
    return 0


def freeze_boot_heap() -> int:
    """Keep what boot built (modules, classes, the kernel's stores) out of the garbage
    collector's full passes from now on; returns how many objects that is.

    A full pass walks every container object in the process, and after boot that is
    several hundred thousand, nearly all of them alive for good: measured under
    `benchmarks/serve_load.py`, one pass held the event loop for 110-400 ms, and every
    acknowledgement waiting then waited as long. Frozen objects are never collected, so
    cyclic garbage left by boot itself stays; it is a one-time cost of a few objects. The
    service owns its process, so it decides this; a notebook's kernel does not."""
    gc.freeze()
    return gc.get_freeze_count()


async def freeze_when_indexed(memory: Memory, service: ServiceInfo) -> None:
    """An archive indexed after boot (a year of turns: a list of words per turn) joins
    the heap kept out of full passes once it is whole, as it did when boot waited for it."""
    await memory.indexed(None)
    service["boot_heap_frozen"] = freeze_boot_heap()


async def _drain(
    kernel: Kernel, intake: Intake, signals: asyncio.Queue[int], drain_timeout: float
) -> None:
    """Take no more input and give the work in hand `drain_timeout` seconds; a second
    signal cuts this short."""
    intake.close()
    _say(
        "hologram stopping: taking no more input; finishing the work in hand "
        f"(≤ {drain_timeout:g} s)"
    )
    drained = False

    async def drain() -> None:
        nonlocal drained
        drained = await intake.drain(drain_timeout)

    await first_completed(drain(), signals.get())
    if not drained:
        left = kernel.inputs.status()
        _say(
            f"hologram: unfinished input left in the journal for the next start "
            f"(running {left['running']}, waiting {left['pending_inputs'] + len(left['stack'])})"
        )
