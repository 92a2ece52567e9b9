"""A subprocess plugin's process: spawn, handshake, watch, stop (spec 000: dynamic_proc).

The kernel starts the plugin's script with its own interpreter and speaks NDJSON JSON-RPC
over the child's stdin/stdout: `handshake` (protocol versions compared, a mismatch refused
naming both), `plugin.init`, `plugin.start` (the plugin registers its tools, stages and
channels back during this call). Then calls go both ways until it stops.

**Why a watcher on `wait()` and not on EOF.** A plugin's own children inherit its stdout,
so the pipe can stay open long after the plugin died. One task per child waits for the exit
status itself; that, not the end of stdout, is what declares the plugin gone.

**Why the bootstrap.** The child runs a few lines before the script: it asks Linux for
SIGKILL when its parent dies (`prctl(PR_SET_PDEATHSIG)`; the plugin must not outlive a
SIGKILLed kernel), and it makes `hologram` a bare package, so `hologram.plugins.runtime`
and `hologram.sdk` load without importing the whole kernel into every plugin process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

from hologram.kernel import TaskScope
from hologram.plugins.bridge import Bridge
from hologram.plugins.kernel_sdk import KernelSDK
from hologram.plugins.manifest import Manifest
from hologram.plugins.rpc import DEFAULT_MAX_FRAME, PEER_GONE, PROTOCOL_VERSION, Peer, RpcError

log = logging.getLogger(__name__)

HOLOGRAM_DIR = str(Path(__file__).resolve().parent.parent)

BOOTSTRAP = """
import ctypes, os, runpy, signal, sys, types
parent, package_dir, script = int(sys.argv[1]), sys.argv[2], sys.argv[3]
if sys.platform.startswith("linux"):
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
if os.getppid() != parent:  # the kernel died before prctl took hold
    os._exit(70)
package = types.ModuleType("hologram")
package.__path__ = [package_dir]
package.__file__ = os.path.join(package_dir, "__init__.py")
sys.modules.setdefault("hologram", package)
sys.argv = sys.argv[3:]
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
runpy.run_path(script, run_name="__main__")
"""


async def exit_status(process: asyncio.subprocess.Process) -> int:
    """The exit status, as soon as the process has exited.

    Not `process.wait()`: on Python 3.11 it also waits for every pipe to close, which a
    grandchild holding stdout delays indefinitely. On Linux a pidfd becomes readable when
    the process exits; elsewhere the status is polled (asyncio's child watcher reaps it and
    sets `returncode` either way)."""
    loop = asyncio.get_running_loop()
    try:
        pidfd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):
        pidfd = None
    if pidfd is not None:
        exited: asyncio.Future[None] = loop.create_future()

        def on_exit() -> None:
            if not exited.done():
                exited.set_result(None)

        loop.add_reader(pidfd, on_exit)
        try:
            await exited
        finally:
            loop.remove_reader(pidfd)
            os.close(pidfd)
    while process.returncode is None:  # noqa: ASYNC110  (no event to wait on: a poll)
        await asyncio.sleep(0.005 if pidfd is not None else 0.05)
    return process.returncode


class PluginLoadError(RuntimeError):
    """A plugin that could not be started; the message says which and why."""


ExitCallback = Callable[["SubprocessPlugin", int], None]


class SubprocessPlugin:
    """One external plugin as a child process; `start` and `stop` may repeat (restarts)."""

    def __init__(
        self,
        manifest: Manifest,
        folder: Path,
        *,
        on_exit: ExitCallback,
        on_bad_frame: Callable[[str, str], None],
        data_dir: Path | None = None,
        max_frame: int = DEFAULT_MAX_FRAME,
        start_timeout: float = 10.0,
        tasks: TaskScope,
    ) -> None:
        self.manifest = manifest
        self._scope = tasks
        self.folder = folder
        self.data_dir = data_dir or folder / "data"
        self._on_exit = on_exit
        self._on_bad_frame = on_bad_frame
        self._max_frame = max_frame
        self._start_timeout = start_timeout
        self.process: asyncio.subprocess.Process | None = None
        self.peer: Peer | None = None
        self._bridge: Bridge | None = None
        self._stopping = False
        self._tasks: list[asyncio.Task[object]] = []

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    async def start(self, sdk: KernelSDK) -> None:
        self._stopping = False
        bridge = self._bridge = Bridge(sdk, self.manifest.capabilities)
        script = self.folder / self.manifest.entry
        self.data_dir.mkdir(parents=True, exist_ok=True)
        process = self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            BOOTSTRAP,
            str(os.getpid()),
            HOLOGRAM_DIR,
            str(script),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=self.folder,
            limit=self._max_frame,
        )
        assert process.stdout is not None and process.stdin is not None
        peer = self.peer = Peer(
            process.stdout,
            process.stdin,
            bridge.dispatch,
            name=f"plugin {self.name}",
            max_frame=self._max_frame,
            on_bad_frame=lambda why: self._on_bad_frame(self.name, why),
            tasks=self._scope,
        )
        bridge.peer = peer
        spawn = self._scope.spawn
        self._tasks = [
            spawn(self._read(peer, process), name=f"plugin-{self.name}-reader"),
            spawn(self._stderr(process), name=f"plugin-{self.name}-stderr"),
            spawn(self._watch(peer, process), name=f"plugin-{self.name}-watcher"),
        ]
        try:
            async with asyncio.timeout(self._start_timeout):
                await self._handshake(peer)
                await peer.call(
                    "plugin.init",
                    {
                        "name": self.name,
                        "version": self.manifest.version,
                        "folder": str(self.folder),
                        "data_dir": str(self.data_dir),
                        "settings": sdk.settings.list(),
                        "max_frame": self._max_frame,
                    },
                )
                await peer.call("plugin.start", {})
        except (RpcError, TimeoutError, PluginLoadError) as exc:
            await self._abandon()
            if isinstance(exc, PluginLoadError):
                raise
            why = "did not answer in time" if isinstance(exc, TimeoutError) else exc.message
            raise PluginLoadError(f"plugin {self.name!r} failed to start: {why}") from None

    async def _handshake(self, peer: Peer) -> None:
        try:
            answer = await peer.call("handshake", {"protocol": PROTOCOL_VERSION})
        except RpcError as exc:
            if exc.code == PEER_GONE:
                raise PluginLoadError(
                    f"plugin {self.name!r} failed to start: it ended before the handshake "
                    "(its stderr is in the kernel log)"
                ) from None
            raise PluginLoadError(
                f"plugin {self.name!r} refused the handshake: {exc.message}"
            ) from None
        theirs = answer.get("protocol") if isinstance(answer, dict) else None
        if theirs != PROTOCOL_VERSION:
            raise PluginLoadError(
                f"plugin {self.name!r} speaks protocol {theirs!r}; this kernel speaks protocol "
                f"{PROTOCOL_VERSION}: rebuild the plugin against this kernel's SDK"
            )

    async def _read(self, peer: Peer, process: asyncio.subprocess.Process) -> None:
        reason = await peer.serve()
        if reason != "end of stream" and process.returncode is None:
            # An oversize or cut frame: the stream cannot be trusted any more. Disconnect;
            # the watcher sees the exit and the supervisor decides about a restart.
            log.warning("plugin %s disconnected: %s", self.name, reason)
            with contextlib.suppress(ProcessLookupError):
                process.kill()

    async def _stderr(self, process: asyncio.subprocess.Process) -> None:
        assert process.stderr is not None
        plugin_log = logging.getLogger(f"hologram.plugin.{self.name}")
        while line := await process.stderr.readline():
            plugin_log.info("%s", line.decode("utf-8", "replace").rstrip())

    async def _watch(self, peer: Peer, process: asyncio.subprocess.Process) -> None:
        returncode = await exit_status(process)
        peer.close(f"the plugin process exited with status {returncode}")
        for task in self._tasks:
            if task is not asyncio.current_task():
                task.cancel()  # the reader may wait forever on a pipe a grandchild holds
        _close_pipes(process)
        if not self._stopping:
            self._on_exit(self, returncode)

    async def _abandon(self) -> None:
        self._stopping = True
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            await exit_status(self.process)
        await self._cancel_tasks()

    async def _cancel_tasks(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        if self.process is not None:
            _close_pipes(self.process)

    async def stop(self, grace: float = 2.0) -> None:
        """Ask the plugin to stop, then close its stdin; SIGTERM, then SIGKILL, if it lingers."""
        self._stopping = True
        process, peer = self.process, self.peer
        if process is None or peer is None:
            return
        if process.returncode is None:
            with contextlib.suppress(RpcError, TimeoutError, ConnectionError):
                async with asyncio.timeout(grace):
                    await peer.call("plugin.stop", {})
            if process.stdin is not None:
                process.stdin.close()
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    async with asyncio.timeout(grace):
                        await exit_status(process)
                    break
                except TimeoutError:
                    with contextlib.suppress(ProcessLookupError):
                        process.send_signal(sig)
            await exit_status(process)
        await self._cancel_tasks()


def _close_pipes(process: asyncio.subprocess.Process) -> None:
    # asyncio's Process has no public close; its transport's close() releases the pipes
    # (a grandchild may hold the other ends) instead of leaving that to garbage collection.
    transport = getattr(process, "_transport", None)
    if transport is not None and process.returncode is not None:
        transport.close()
