"""agentcli: real terminals for the agent (spec 000: "Terminal ownership: agentcli owns it,
the kernel does not"). Built in because it publishes `terminal_output` events, which the
public SDK withholds.

The model opens PTY terminals (`terminal_create`), types into them (`terminal_write`, which
answers with the output that follows), reads what came since (`terminal_read`), lists and
closes them. agentcli owns everything a terminal is: the PTY, the session, the output
buffer, the history of what was typed, the idle timeout. Views (the service page, the
notebook widget) know terminals only from the events, so one that starts after a session
misses its early output, as the spec says.

A terminal runs where a command would (`hologram.plugins.confinement`): in the sandbox's
write roots, with a scrubbed environment, without network while the switch is off. Its
output reaches the model through the firewall's masking; the tools are hard-private.
A terminal created with `notify` wakes the agent when its program ends: an L3 interrupt on
the `terminal` channel, whose events the context window drops rather than archives (spec:
pruning skips agentcli/terminal sources), with the rights of whoever created it.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import shutil
import subprocess
from typing import TYPE_CHECKING, Annotated, Any

from hologram.plugins.builtin.terminal import Spawn, Terminal
from hologram.plugins.confinement import (
    Refused,
    child_environ,
    start_failure,
    working_directory,
)
from hologram.sdk import (
    Event,
    EventType,
    OutputCap,
    Param,
    Priority,
    TerminalOutput,
    ToolDef,
    ToolError,
    from_wire,
)
from hologram.security import Profile

if TYPE_CHECKING:
    from hologram.plugins.host import PluginHost
    from hologram.plugins.kernel_sdk import KernelParts, KernelSDK

log = logging.getLogger(__name__)

CHANNEL = "terminal"
OWNER_PROFILE = Profile(
    "agentcli.owner", internal=True, description="a terminal the owner opened, waking the agent"
)
TAIL = 2000
"""Characters of a finished program's last output that its notification carries."""


def default_shell() -> list[str]:
    bash = shutil.which("bash")
    return [bash, "--noprofile", "--norc", "-i"] if bash else ["/bin/sh", "-i"]


class AgentCLI:
    name = "agentcli"
    security_profiles = (OWNER_PROFILE,)

    def __init__(self, host: PluginHost) -> None:
        self._parts: KernelParts = host.parts
        self._data_dir = host.data_dir
        self._sdk: KernelSDK | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._terminals: dict[str, Terminal] = {}
        #: Set while a terminal is open: the idle sweep waits on it instead of waking on the
        #: clock for nothing.
        self._opened = asyncio.Event()
        self._ids = itertools.count(1)

    def _setting(self, key: str, default: Any) -> Any:
        assert self._sdk is not None
        value = self._sdk.settings.get(key)
        return default if value is None else value

    # ---- life -------------------------------------------------------------------------------

    async def start(self, sdk: KernelSDK) -> None:
        self._sdk = sdk
        for tool in self._tools():
            # What a terminal's commands change on disk is tracked (and undoable).
            touches = tool.__name__ in ("terminal_create", "terminal_write")
            sdk.register_tool(
                ToolDef.from_function(tool, owner=self.name, no_memory=True, touches_files=touches)
            )
        sdk.register_output_channel(
            CHANNEL,
            OutputCap.TEXT,
            "notes shown beside the terminals; a turn woken by a finished terminal answers here",
            self._note,
        )
        self._sweeper = self._parts.tasks.spawn(self._sweep(), name="agentcli-idle")

    async def stop(self) -> None:
        """Every terminal ends with the plugin, and the plugin with the kernel."""
        if self._sweeper is not None:
            self._sweeper.cancel()
        for terminal_id in list(self._terminals):
            await self._close(terminal_id, "closed")

    def _publish(self, terminal: Terminal, kind: str, **fields: Any) -> None:
        if self._sdk is None:
            return
        # What a kind tells besides (its output, its exit status) is in `fields`: a field
        # the payload names is set by name, the rest travels as its detail.
        payload = from_wire(
            EventType.TERMINAL_OUTPUT,
            {
                "terminal": terminal.id,
                "name": terminal.name,
                "event": kind,
                "running": terminal.running,
                "pid": terminal.pid,
                **fields,
            },
        )
        self._sdk.publish(Event(EventType.TERMINAL_OUTPUT, payload, source=self.name))

    def _told(self, terminal: Terminal, kind: str, fields: dict[str, Any]) -> None:
        # A terminal closed on purpose has said so already; its program's end is no news.
        if kind != "exited" or terminal.id in self._terminals:
            self._publish(terminal, kind, **fields)

    def _note(self, payload: str, meta: dict[str, Any], kind: str) -> str:
        assert self._sdk is not None
        self._sdk.publish(
            Event(
                EventType.TERMINAL_OUTPUT,
                TerminalOutput(event="note", data=payload),
                source=self.name,
            )
        )
        return "shown beside the terminals"

    # ---- the tools ----------------------------------------------------------------------------

    def _tools(self) -> list[Any]:
        async def terminal_create(
            command: Annotated[str, Param("a program to run; empty: an interactive shell")] = "",
            directory: Annotated[str, Param("working directory inside the sandbox")] = "",
            name: Annotated[str, Param("a label for the views", max_length=40)] = "",
            notify: Annotated[bool, Param("wake me with its last output when it ends")] = False,
        ) -> str:
            """Open a real terminal (a PTY) running a shell or a program; answers with its id
            and first output. Type into it with terminal_write, close it when done."""
            return await self.create(command, directory, name, notify)

        async def terminal_write(
            terminal: Annotated[str, Param("the terminal's id, e.g. t1")],
            text: Annotated[str, Param("what to type")],
            enter: Annotated[bool, Param("press Enter after the text")] = True,
            wait_s: Annotated[float, Param("seconds to wait for the output", ge=0, le=30)] = 1.0,
        ) -> str:
            """Type into a terminal; answers with the output that follows, once it pauses
            (or after wait_s). Control characters work: "\\u0003" is Ctrl-C."""
            found = self._get(terminal)
            try:
                await found.write(text + ("\n" if enter and not text.endswith("\n") else ""))
            except RuntimeError as exc:
                raise ToolError(str(exc)) from None
            await found.settle(wait_s)
            return self._output(found)

        async def terminal_read(
            terminal: Annotated[str, Param("the terminal's id")],
            wait_s: Annotated[float, Param("seconds to wait for output", ge=0, le=30)] = 0.0,
        ) -> str:
            """The terminal's output since it was last read."""
            found = self._get(terminal)
            if wait_s:
                await found.settle(wait_s)
            return self._output(found)

        async def terminal_close(terminal: Annotated[str, Param("the terminal's id")]) -> str:
            """Close a terminal: its program and everything it started are ended."""
            found = self._get(terminal)
            text = self._output(found)
            await self._close(terminal, "closed")
            return text

        def terminal_list() -> str:
            """The open terminals: id, name, state, idle seconds, what was typed last."""
            now = self._parts.clock.monotonic()
            rows = [
                {
                    "terminal": t.id,
                    "name": t.name,
                    "running": t.running,
                    "exit_status": t.exit_status,
                    "pid": t.pid,
                    "idle_s": round(now - t.last_active, 1),
                    "typed": list(t.history)[-5:],
                }
                for t in self._terminals.values()
            ]
            return json.dumps(rows, ensure_ascii=False)

        return [terminal_create, terminal_write, terminal_read, terminal_close, terminal_list]

    def _get(self, terminal_id: str) -> Terminal:
        found = self._terminals.get(terminal_id)
        if found is None:
            known = ", ".join(self._terminals) or "none open"
            raise ToolError(f"no terminal {terminal_id!r}; terminals: {known}")
        return found

    def _output(self, terminal: Terminal) -> str:
        text, dropped = terminal.take()
        terminal.last_active = self._parts.clock.monotonic()
        if dropped:
            text = f"[{dropped} bytes of earlier output were dropped: the buffer is full]\n{text}"
        if not terminal.running and terminal.exit_status is not None:
            text += f"\n[the program ended with status {terminal.exit_status}]"
        return text

    # ---- opening and closing ------------------------------------------------------------------

    async def create(self, command: str, directory: str, name: str, notify: bool) -> str:
        assert self._sdk is not None
        if len(self._terminals) >= int(self._setting("max_terminals", 8)):
            raise ToolError(
                f"{len(self._terminals)} terminals are open, the most allowed: close one first"
            )
        context = self._sdk.call_context()
        network = bool(context.get("network", True))
        roots = context.get("write_roots") or [str(self._data_dir / "workspace")]
        shell = list(self._setting("shell", []) or default_shell())
        try:
            spawn = Spawn(
                argv=[*shell[:1], "-c", command] if command else shell,
                cwd=working_directory(directory, roots),
                env={
                    **child_environ(os.environ, self._setting("env", {})),
                    "TERM": "dumb",
                    "PS1": "$ ",
                },
                network=network,
                buffer_bytes=int(self._setting("buffer_bytes", 64 * 1024)),
            )
        except (Refused, ValueError) as exc:
            raise ToolError(str(exc)) from None
        terminal_id = f"t{next(self._ids)}"
        terminal = Terminal(
            terminal_id,
            name or command or "shell",
            spawn,
            lambda kind, fields: self._told(terminal, kind, fields),
            now=self._parts.clock.monotonic,
        )
        try:
            await terminal.start()
        except (OSError, subprocess.SubprocessError) as exc:
            raise ToolError(str(start_failure(exc, network))) from None
        self._terminals[terminal_id] = terminal
        self._opened.set()
        self._publish(terminal, "created", command=command or " ".join(shell))
        self._parts.tasks.spawn(
            self._watch(terminal, notify, bool(context.get("internal"))),
            name=f"agentcli-{terminal_id}",
        )
        await terminal.settle(1.0)
        return json.dumps(
            {"terminal": terminal_id, "pid": terminal.pid, "output": self._output(terminal)},
            ensure_ascii=False,
        )

    async def _watch(self, terminal: Terminal, notify: bool, internal: bool) -> None:
        status = await terminal.wait_exit()
        if not notify or self._sdk is None or terminal.id not in self._terminals:
            return
        tail = terminal.peek()[-TAIL:]
        text = f"[terminal {terminal.id} ({terminal.name}) ended with status {status}]\n{tail}"
        await self._sdk.inject_interrupt(
            text,
            CHANNEL,
            Priority.L3,
            security_profile=OWNER_PROFILE.name if internal else "",
        )

    async def _close(self, terminal_id: str, why: str) -> None:
        terminal = self._terminals.pop(terminal_id, None)
        if terminal is None:
            return
        await terminal.close()
        terminal.flush()
        process = terminal.process
        self._publish(terminal, why, status=None if process is None else process.returncode)

    async def _sweep(self) -> None:
        """Close the terminals nobody has touched for `idle_timeout_s`. With none open it
        waits for the first instead of polling: on a replay's clock, weeks of one-second
        polls were millions of wake-ups, nearly all of a replay's time."""
        clock = self._parts.clock
        while True:
            if not self._terminals:
                self._opened.clear()
                await clock.idle_until(self._opened)
            idle_s = float(self._setting("idle_timeout_s", 600.0))
            await clock.sleep(max(min(idle_s / 4, 1.0), 0.05))
            now = clock.monotonic()
            for terminal in list(self._terminals.values()):
                if now - terminal.last_active >= idle_s:
                    log.info("agentcli: terminal %s idle for %.0f s, closed", terminal.id, idle_s)
                    await self._close(terminal.id, "timeout")
