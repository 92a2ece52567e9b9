"""The tracker (spec: TrackerAPI): what each file-touching tool call changed in the sandbox.

How it learns what a call touched: a `watchfiles` watcher (inotify) on the sandbox roots runs
for the kernel's life. Between calls its events keep the shadow current (so a call's BEFORE
bytes are kept); during a call they mark paths dirty. When the call ends, the tracker writes a
sentinel file into its own watched folder outside the sandbox and waits for the watcher to
report it: inotify delivers one watch's events in order, so by then every change the call
made has been heard. Only the dirty paths are read and compared, never the whole sandbox.

When the watcher is not running (it could not start, or it did not answer the sentinel in
time), the fallback is a scan of the paths the call's arguments name (`path`, `source`,
`destination`, ... resolved against the write roots); that fallback is logged and
published as `tracker_fallback`.

At start the shadow is loaded from the snapshot the last stop wrote (`<data>/tracker/
shadow.json`), so the start-up scan stats every file and reads only those changed since; with
no snapshot (a first start, a crash) it hashes every file. When the firewall's write roots
change, `retarget` moves the watcher and the shadow to the new roots.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hologram.media import BlobStore
from hologram.sdk import Event, ToolCall, ToolDef, TrackerFailed, TrackerFallback
from hologram.tracker.log import Change, ChangeLog
from hologram.tracker.shadow import Shadow, inside
from hologram.tracker.undo import undo_call

log = logging.getLogger(__name__)

SYNC_WAIT_S = 2.0
"""How long the end of a call waits for the watcher to hear its sentinel."""
PATH_KEYS = ("path", "paths", "source", "destination", "target", "file", "files", "directory")


@dataclass(slots=True)
class Watch:
    """One tracked call in flight."""

    call: ToolCall
    tool: ToolDef
    arguments: dict[str, Any]
    at: float
    begin_mark: str
    heard_begin: bool = False
    dirty: set[str] = field(default_factory=set)


class Tracker:
    def __init__(
        self,
        roots: list[Path],
        blobs: BlobStore,
        changelog: ChangeLog,
        state_dir: Path,
        publish: Callable[..., Any],
    ) -> None:
        self.roots = [Path(os.path.realpath(r)) for r in roots]
        self.blobs = blobs
        self.log = changelog
        self.shadow = Shadow(self.roots, blobs)
        self._sync_dir = state_dir / "sync"
        self._snapshot = state_dir / "shadow.json"
        self._publish = publish
        self._active: dict[int, Watch] = {}
        self._lock = threading.Lock()
        self._tokens = itertools.count(1)
        self._waiting: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.watching = False
        self.fallbacks = 0
        self.failures = 0

    # ---- life -------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the watcher, then build the shadow (events during the scan only refresh
        entries, so nothing is missed between the two)."""
        for root in self.roots:
            root.mkdir(parents=True, exist_ok=True)
        self._sync_dir.mkdir(parents=True, exist_ok=True)
        for stale in self._sync_dir.iterdir():
            stale.unlink(missing_ok=True)
        self._start_watcher()
        try:
            self.shadow.load(self._snapshot)
        except ValueError as exc:
            # Kept aside as every damaged file of the data dir is, though only a cache.
            aside = self._snapshot.with_name(f"{self._snapshot.name}.corrupt-{int(time.time())}")
            os.replace(self._snapshot, aside)
            self._announce(
                f"the shadow snapshot is unusable ({exc}; kept as {aside.name}); hashing every file"
            )
        self.shadow.scan()

    def stop(self) -> None:
        self._stop_watcher()
        try:
            self.shadow.save(self._snapshot)
        except OSError as exc:
            log.warning("tracker: could not save the shadow snapshot: %s", exc)

    def retarget(self, roots: list[Path]) -> bool:
        """Watch and shadow `roots` from now on (the firewall's write roots changed); False
        when they are the roots already. A call running meanwhile falls back to its declared
        paths, announced as usual."""
        wanted = [Path(os.path.realpath(r)) for r in roots]
        if wanted == self.roots:
            return False
        self._stop_watcher()
        for root in wanted:
            root.mkdir(parents=True, exist_ok=True)
        self.shadow.roots = wanted
        self._start_watcher()
        self.shadow.scan()
        # Last: `roots` says the move is done, the new roots watched and shadowed.
        self.roots = wanted
        return True

    def _start_watcher(self) -> None:
        """A watcher of the shadow's roots (the roots being moved to, in `retarget`)."""
        self._stop = threading.Event()
        ready = threading.Event()
        self._thread = threading.Thread(
            target=self._watch, args=(ready, self._stop), name="tracker-watch", daemon=True
        )
        self._thread.start()
        ready.wait(5.0)

    def _stop_watcher(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
        self.watching = False

    def _watch(self, ready: threading.Event, stop: threading.Event) -> None:
        try:
            from watchfiles import watch

            paths = [*self.shadow.roots, self._sync_dir]
            self.watching = True
            ready.set()
            for batch in watch(
                *paths,
                watch_filter=None,
                debounce=50,
                step=1,
                stop_event=stop,
                rust_timeout=500,
                yield_on_timeout=False,
                raise_interrupt=False,
            ):
                self._heard({path for _change, path in batch})
        except Exception as exc:  # the fallback takes over; announced once
            self.watching = False
            self._announce("the file watcher stopped; scanning declared paths instead", exc)
        finally:
            if stop is self._stop:  # not a watcher replaced by `retarget`
                self.watching = False
            ready.set()

    def _heard(self, paths: set[str]) -> None:
        sync = str(self._sync_dir)
        names = {os.path.basename(p) for p in paths if p.startswith(sync)}
        with self._lock:
            for watch in self._active.values():
                watch.heard_begin = watch.heard_begin or watch.begin_mark in names
            # A call hears the events from its own begin sentinel's batch on: inotify keeps
            # their order, so none of them came before the call began (within that one
            # batch the order is lost, and a change made just before is blamed on the call).
            active = [w for w in self._active.values() if w.heard_begin]
        # The batch's other paths first: a sentinel answered means they are all handled.
        for path in sorted(paths, key=lambda p: p.startswith(sync)):
            if path.startswith(sync):
                waiter = self._waiting.pop(os.path.basename(path), None)
                if waiter is not None:
                    loop, future = waiter
                    loop.call_soon_threadsafe(_settle, future)
            elif active:
                for watch in active:
                    watch.dirty.add(path)
            else:
                try:
                    self.shadow.changes([path])
                except OSError:
                    log.debug("tracker: %s changed while it was read", path, exc_info=True)

    # ---- around a tool call (stages.execute.FileTracker) -----------------------------------

    async def begin(self, call: ToolCall, tool: ToolDef, arguments: dict[str, Any]) -> int:
        """Start tracking `call`: a begin sentinel is written and not waited for. What the
        watcher hears before it still goes into the shadow, so it is neither blamed on the
        call nor taken for its BEFORE state."""
        token = next(self._tokens)
        watch = Watch(call, tool, arguments, time.time(), f"sync-{os.getpid()}-begin-{token}")
        with self._lock:
            self._active[token] = watch
        if self.watching:
            try:
                (self._sync_dir / watch.begin_mark).touch()
            except OSError as exc:
                self._announce("could not mark the start of a call", exc)
        return token

    async def end(self, token: int) -> list[Change]:
        """Record what the call changed; never raises (a failure is announced)."""
        with self._lock:
            watch = self._active.get(token)
        if watch is None:
            return []
        try:
            mechanism = "watcher" if await self._sync(token) else "declared-paths"
            with self._lock:
                self._active.pop(token, None)
            if mechanism == "watcher":
                paths: Iterable[str] = watch.dirty
            else:
                paths = self.declared_paths(watch.arguments)
            return await asyncio.to_thread(self._record, watch, mechanism, list(paths))
        except Exception as exc:
            self.failures += 1
            self._announce(f"could not record the changes of {watch.tool.name}", exc)
            return []
        finally:
            with self._lock:
                self._active.pop(token, None)
            (self._sync_dir / watch.begin_mark).unlink(missing_ok=True)

    def _record(self, watch: Watch, mechanism: str, paths: list[str]) -> list[Change]:
        changes = self.shadow.changes(paths)
        if changes:
            self.log.record(watch.call.id, watch.tool.name, watch.at, mechanism, changes)
        return changes

    async def _sync(self, token: int) -> bool:
        if not self.watching:
            self.fallbacks += 1
            self._announce("no file watcher is running; scanning the paths the call names")
            return False
        try:
            await self._flush(f"end-{token}")
            return True
        except TimeoutError:
            self.fallbacks += 1
            self._announce("the file watcher did not answer in time; scanning declared paths")
            return False

    async def _flush(self, tag: str) -> None:
        """Return once the watcher has handled every event queued before now: it reports a
        sentinel written now only after them (inotify keeps one watch's order)."""
        name = f"sync-{os.getpid()}-{tag}"
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._waiting[name] = (loop, future)
        sentinel = self._sync_dir / name
        sentinel.touch()
        try:
            await asyncio.wait_for(future, SYNC_WAIT_S)
        finally:
            self._waiting.pop(name, None)
            sentinel.unlink(missing_ok=True)

    def declared_paths(self, arguments: dict[str, Any]) -> list[str]:
        """The paths a call's arguments name, inside the roots (relative ones are tried
        under each root, as the firewall resolves them against the first)."""
        found: list[str] = []
        for key in PATH_KEYS:
            value = arguments.get(key)
            values = value if isinstance(value, list) else [value]
            for text in values:
                if not isinstance(text, str) or not text:
                    continue
                given = Path(text)
                options = [given] if given.is_absolute() else [r / given for r in self.roots]
                for option in options:
                    real = Path(os.path.realpath(option))
                    if inside(real, self.roots):
                        found.append(str(real))
        return found

    # ---- undo -------------------------------------------------------------------------------

    async def undo(self, call_id: str) -> list[Change]:
        changes = await asyncio.to_thread(undo_call, self.log, self.blobs, call_id)
        touched = [c.path for c in changes] + [c.old_path for c in changes if c.old_path]
        await asyncio.to_thread(self.shadow.changes, touched)
        return changes

    def _announce(self, what: str, exc: BaseException | None = None) -> None:
        log.warning("tracker: %s", what, exc_info=exc)
        error = repr(exc) if exc else ""
        payload: TrackerFailed | TrackerFallback = (
            TrackerFailed(message=what, error=error)
            if exc is not None
            else TrackerFallback(message=what, error=error)
        )
        self._publish(Event(payload.event_type, payload, source="tracker"))


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
