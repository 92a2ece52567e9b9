"""`%hologram`: drive a kernel from a notebook.

A magic is a plain function call, so it cannot itself be awaited (`await %hologram …` is a
syntax error). Commands that take time start a task on the notebook's running event loop and
return a `Pending` handle at once; the cell goes on, and a later line may `await` the handle.
What a command shows it shows where it stands in the cell (`hologram.notebook.cells`): a
widget is displayed and a handle returned, a summary is printed once, and an answer that
comes later (a reply, a memory search) fills the place it was given in its own cell.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Generator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from hologram.facade import Kernel, Phase
from hologram.llm import usage_table
from hologram.memory import Recollection
from hologram.notebook.cells import (
    BetweenCells,
    Printed,
    PrintedRows,
    ReplyCell,
    Shown,
    without_comment,
)
from hologram.notebook.changes_widget import ChangesWidget
from hologram.notebook.context_widget import ContextWidget
from hologram.notebook.graph_widget import GraphWidget
from hologram.notebook.layers import LayersWidget
from hologram.notebook.scheduler_widget import SchedulerWidget
from hologram.notebook.terminal_widget import TerminalWidget
from hologram.notebook.upload_widget import UploadWidget
from hologram.plugins import PluginAction
from hologram.sdk import AgentOutputDelta, Event, EventType, Priority
from hologram.security import PathRefused

T = TypeVar("T")
MEMORY_TOP = 10


class Pending(Awaitable[T]):
    """A task started by a magic. `await` it for the result; its repr says what it is doing."""

    def __init__(self, what: str, task: asyncio.Task[T]) -> None:
        self.what = what
        self.task = task

    def __await__(self) -> Generator[Any, None, T]:
        return self.task.__await__()

    def done(self) -> bool:
        return self.task.done()

    def __repr__(self) -> str:
        if not self.task.done():
            state = "running; await this handle to wait for it"
        elif self.task.cancelled():
            state = "cancelled"
        elif self.task.exception() is not None:
            state = f"failed: {self.task.exception()}"
        else:
            state = "done"
        return f"<hologram {self.what}: {state}>"


@magics_class
class HologramMagics(Magics):
    """Holds this notebook's kernel: one per IPython shell, none shared between shells."""

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self.kernel: Kernel | None = None
        self.between_cells = BetweenCells(shell.events)
        self.commands: dict[str, Callable[[Any], Any]] = {
            "start": self._start,
            "status": self._status,
            "layers": self._layers,
            "context": self._context,
            "graph": self._graph,
            "scheduler": self._scheduler,
            "plugins": self._plugins,
            "llm": self._llm,
            "usage": self._usage,
            "mcp": self._mcp,
            "terminals": self._terminals,
            "changes": self._changes,
            "upload": self._upload,
            "memory": self._memory,
            "stop": self._stop,
            "shutdown": self._shutdown,
        }

    @magic_arguments()
    @argument(
        "command",
        help="start: boot a kernel (returns at once; await the handle to wait for it) · "
        "status: what the kernel is doing · layers: the dependency-layers widget · "
        "context: the last prune's scores and the context window · "
        "graph [ENTITY]: graph memory around ENTITY (--depth, --history) · "
        "shutdown: close the kernel, flushing every store · "
        "say TEXT: give the agent TEXT as input (returns at once; the reply shows in the "
        "cell when it arrives, and awaiting the handle gives it; the whole line is the text, "
        "a trailing '?' included; `say --image PATH [--image PATH2] TEXT` sends images with "
        "it, each path inside the firewall's read roots) · "
        "upload: a widget to pick images, type the text and send them together · "
        "memory QUERY: what memory finds for QUERY in every tier, the context window "
        "included (a handle; the table shows in the cell, awaiting gives the DataFrame) · "
        "interrupt [--level L1-L4] TEXT: the same as an interrupt (default L1) · "
        "stop: stop the running turn and every input waiting now · "
        "scheduler: the live preemption timeline · "
        "usage: tokens and cost of every model call, per source, day and channel · "
        "plugins [enable|disable|reload NAME]: every plugin with its health (kind, state, "
        "restarts, last error, tools), or change one (returns a handle to await) · "
        "llm [current|switch NAME]: the model sources in the order a call tries them, "
        "each with its state; the one in use; or switch to another (a handle to await) · "
        "mcp: the MCP servers, each with its state and tools · "
        "terminals: agentcli's terminals, live, from their events · "
        "changes: each tool call's file changes with diffs, and an undo button",
    )
    @argument("args", nargs="*", help="arguments of the command")
    @argument(
        "--data",
        metavar="DIR",
        help="start: data directory (default: $HOLOGRAM_DATA, else ~/.hologram)",
    )
    @argument("--json", action="store_true", help="status: print JSON instead of a summary")
    @argument("--channel", default="notebook", help="say, upload: the channel the input arrives on")
    @argument("--depth", type=int, default=2, help="graph: hops around the entity")
    @argument("--history", action="store_true", help="graph: show closed facts, dashed")
    # IPython types `line_magic(name)` as `_F | Callable[[_F], _F]`, a union that is not a
    # decorator to mypy (it solves `_F` as Never); at run time it is the decorator.
    @line_magic("hologram")  # type: ignore[arg-type]
    def hologram(self, line: str) -> Any:
        """Drive a Hologram kernel from this notebook: `%hologram start --data DIR`, then
        `%hologram layers`, `%hologram status`, `t = %hologram say hi` (then `await t`),
        `%hologram shutdown`. A `# comment` after a command is ignored ('#' then a space)."""
        line = without_comment(line)
        command, _, text = line.strip().partition(" ")
        if command in ("", "help", "-h", "--help"):
            print(self.hologram.__doc__)
            return None
        if command in ("say", "interrupt"):
            # The text is the user's words, not options: only leading options are read.
            options, images, text = _leading_options(text)
            default_level = "L1" if command == "interrupt" else "QUEUED"
            level = _level(options.get("--level", default_level))
            return self._say(text, options.get("--channel", "notebook"), level, images)
        args = parse_argstring(self.hologram, line)
        run = self.commands.get(args.command)
        if run is None:
            known = ", ".join(sorted(self.commands))
            raise UsageError(f"unknown command {args.command!r}; commands: {known}")
        return run(args)

    @magic_arguments()
    @argument("--channel", default="notebook", help="the channel the input arrives on")
    # As `line_magic` above: IPython's union return type hides the decorator from mypy.
    @cell_magic("hologram")  # type: ignore[arg-type]
    def hologram_cell(self, line: str, cell: str) -> Pending[str]:
        """The cell's text is input to the agent, as `%hologram say` with many lines.
        Returns a handle to await; the reply is displayed when it arrives."""
        args = parse_argstring(self.hologram_cell, without_comment(line))
        return self._say(cell.strip("\n"), args.channel, Priority.QUEUED)

    # ---- commands -------------------------------------------------------------------------

    def _say(
        self, text: str, channel: str, level: Priority, images: Sequence[str] = ()
    ) -> Pending[str]:
        self._running_loop()
        kernel = self.require_kernel()
        if not text.strip():
            raise UsageError("nothing to say: `%hologram say TEXT`, or text in a %%hologram cell")
        paths = image_paths(kernel, images)

        cell = ReplyCell(f"(waiting for the reply on {channel})", self.between_cells)

        async def say() -> str:
            ticket = await kernel.inject(text, channel, level=level, media=paths)
            pieces: list[str] = []

            def typed(event: Event) -> None:
                # The reply's output updates in place as the model streams it.
                delta = event.payload
                if not isinstance(delta, AgentOutputDelta):
                    return
                if delta.input_id != ticket.id or delta.reasoning:
                    return
                if delta.restart:
                    pieces.clear()
                pieces.append(delta.text)
                cell.show_partial("".join(pieces))

            unsubscribe = kernel.events.subscribe(EventType.AGENT_OUTPUT_DELTA, typed)
            try:
                reply = (await ticket).reply
            except BaseException as exc:
                cell.show_text(f"(no reply: {type(exc).__name__}: {exc})")
                raise
            finally:
                unsubscribe()
            cell.show_text(reply)
            return reply

        return Pending(f"say on {channel}", kernel.spawn(say(), name=f"say-{channel}"))

    def _upload(self, args: Any) -> Shown[UploadWidget]:
        self._running_loop()
        kernel = self.require_kernel()
        return Shown("upload widget", UploadWidget(kernel, args.channel))

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        try:
            return asyncio.get_running_loop()
        except RuntimeError:
            raise UsageError(
                "%hologram needs a running asyncio loop: use it in Jupyter (ipykernel), "
                "or in IPython with %autoawait on"
            ) from None

    def require_kernel(self) -> Kernel:
        if self.kernel is None:
            raise UsageError("no kernel yet: run `%hologram start` first")
        return self.kernel

    def _start(self, args: Any) -> Pending[Kernel]:
        self._running_loop()
        if self.kernel is not None and self.kernel.phase not in (Phase.STOPPED, Phase.FAILED):
            raise UsageError(
                f"a kernel is already {self.kernel.phase} on {self.kernel.data_dir}; "
                "`%hologram shutdown` it first"
            )
        self.kernel = Kernel(args.data)
        return Pending(
            f"kernel start on {self.kernel.data_dir}",
            self.kernel.spawn(self.kernel.start(), name="kernel-start"),
        )

    def _status(self, args: Any) -> Printed:
        kernel = self.require_kernel()
        status = kernel.status()
        if kernel.state.graph is not None:
            status["graph_memory"] = kernel.state.graph.status()
        if args.json:
            print(json.dumps(status, indent=2, default=str))
        else:
            print(f"kernel {status['id']} {status['phase']} on {status['data_dir']}")
            for index, names in enumerate(status["layers"]):
                print(f"  layer {index}  {', '.join(names)}")
            if "graph_memory" in status:
                beat = status["graph_memory"]["heartbeat_totals"]
                print(
                    f"  memory heartbeat: {beat['model_calls']} model calls, "
                    f"{beat['tokens_sent']}/{beat['tokens_received']} tokens sent/received "
                    f"({beat['measured_calls']} calls counted by the provider, the rest est.)"
                )
        return Printed(status)

    def _usage(self, args: Any) -> Printed:
        kernel = self.require_kernel()
        if kernel.state.llm is None:
            raise UsageError("the kernel has no LLM yet: await the `%hologram start` handle")
        summary = kernel.state.llm.usage.summary()
        print(usage_table(summary))
        return Printed(summary)

    def _layers(self, args: Any) -> Shown[LayersWidget]:
        return Shown("layers widget", LayersWidget.for_kernel(self.require_kernel()))

    def _context(self, args: Any) -> Shown[ContextWidget]:
        kernel = self.require_kernel()
        if kernel.state.memory is None:
            raise UsageError("the kernel has no memory yet: await the `%hologram start` handle")
        return Shown("context widget", ContextWidget.for_kernel(kernel))

    def _scheduler(self, args: Any) -> Shown[SchedulerWidget]:
        return Shown("scheduler widget", SchedulerWidget(self.require_kernel().events.subscribe))

    def _memory(self, args: Any) -> Pending[pd.DataFrame]:
        """What memory finds for the query, in every tier (the window included), best first."""
        self._running_loop()
        kernel = self.require_kernel()
        memory = kernel.state.memory
        query = " ".join(args.args)
        if memory is None:
            raise UsageError("the kernel has no memory yet: await the `%hologram start` handle")
        if not query.strip():
            raise UsageError("what to look for: `%hologram memory QUERY`")
        cell = ReplyCell(f"(searching memory for {query!r})", self.between_cells)

        async def search() -> pd.DataFrame:
            found = await memory.search(query, MEMORY_TOP)
            table = hits_table(found)
            if len(table):
                cell.show(table)
            else:
                cell.show_text(f"nothing in memory relates to {query!r}")
            return table

        return Pending(f"memory search {query!r}", kernel.spawn(search(), name="memory-search"))

    def _plugins(self, args: Any) -> PrintedRows | Pending[dict[str, Any]]:
        kernel = self.require_kernel()
        registry = kernel.state.plugins
        if registry is None:
            raise UsageError("the kernel has no plugins yet: await the `%hologram start` handle")
        if not args.args:
            rows = registry.status()
            print(_plugin_table(rows))
            return PrintedRows(rows)
        # The registry's guarded change path, as pluginmgr and the page's plugin panel take.
        actions = {
            a.value: a for a in (PluginAction.ENABLE, PluginAction.DISABLE, PluginAction.RELOAD)
        }
        action, *names = args.args
        if action not in actions or len(names) != 1:
            raise UsageError(
                "`%hologram plugins` lists them; `%hologram plugins enable|disable|reload NAME` "
                "changes one"
            )
        (name,) = names
        if name not in registry.names():
            raise UsageError(f"no plugin {name!r}; plugins: {', '.join(registry.names())}")
        self._running_loop()

        async def change() -> dict[str, Any]:
            await registry.changes.apply(actions[action], name)
            (row,) = [r for r in registry.status() if r["name"] == name]
            print(_plugin_table([row]))
            return row

        kernel = self.require_kernel()
        return Pending(f"plugin {action} {name}", kernel.spawn(change(), name=f"plugin-{action}"))

    def _llm(self, args: Any) -> PrintedRows | str | Pending[str]:
        llm = self.require_kernel().state.llm
        if llm is None:
            raise UsageError("the kernel has no model sources yet: await `%hologram start`")
        action, *names = args.args or ["list"]
        if action == "list" and not names:
            rows = llm.status()
            for row in rows:
                print(f"{row['source']:<16} {row['adapter']:<10} {row['state']}")
            return PrintedRows(rows)
        if action == "current" and not names:
            return next(iter(llm.ordered_sources()), "")
        if action != "switch" or len(names) != 1:
            raise UsageError("`%hologram llm [current]` shows the sources; `llm switch NAME`")
        self._running_loop()

        async def switch() -> str:
            await llm.set_active(names[0])
            print(f"model source is now {names[0]}")
            return names[0]

        kernel = self.require_kernel()
        return Pending(f"llm switch {names[0]}", kernel.spawn(switch(), name="llm-switch"))

    def _mcp(self, args: Any) -> Printed:
        """The MCP plugin's last report: every server, its state and its tools."""
        registry = self.require_kernel().state.plugins
        if registry is None:
            raise UsageError("the kernel has no plugins yet: await the `%hologram start` handle")
        entry = registry.get("mcp")
        status = entry.sdk.status if entry.sdk is not None else {}
        if entry.state.value != "running":
            print(f"the mcp plugin is {entry.state.value}: `%hologram plugins enable mcp`")
        print(_mcp_table(status))
        return Printed(status)

    def _terminals(self, args: Any) -> Shown[TerminalWidget]:
        return Shown("terminal widget", TerminalWidget(self.require_kernel().events.subscribe))

    def _changes(self, args: Any) -> Shown[ChangesWidget]:
        kernel = self.require_kernel()
        if kernel.state.tracker is None:
            raise UsageError("the kernel has no tracker yet: await the `%hologram start` handle")
        return Shown(
            "changes widget",
            ChangesWidget(kernel.state.tracker, kernel.state.tasks.scope("notebook")),
        )

    def _stop(self, args: Any) -> list[int]:
        covered = self.require_kernel().stop_turn()
        print(f"stopped: {', '.join(f'#{n}' for n in covered) or 'nothing was running'}")
        return covered

    def _graph(self, args: Any) -> Shown[GraphWidget]:
        """The graph widget; it fills in the background (`await widget.loading`)."""
        self._running_loop()
        kernel = self.require_kernel()
        if kernel.state.graph is None:
            raise UsageError(
                "the kernel has no graph memory yet: await the `%hologram start` handle"
            )
        entity = " ".join(args.args)
        return Shown(
            "graph widget",
            GraphWidget.for_kernel(kernel, entity, args.depth, args.history),
            self.between_cells,
        )

    def _shutdown(self, args: Any) -> Pending[list[str]]:
        self._running_loop()
        kernel = self.require_kernel()
        shutdown = kernel.spawn(kernel.shutdown(), name="kernel-shutdown")
        return Pending(f"kernel shutdown on {kernel.data_dir}", shutdown)


def hits_table(found: list[Recollection]) -> pd.DataFrame:
    """Memory hits as a table, best first: the tier each is kept in (context, cold context,
    graph), when, where, the text."""
    rows = [
        {
            "score": hit.score,
            "tier": hit.place.name.lower().replace("_", " "),
            "when": pd.Timestamp(hit.at, unit="s", tz="UTC"),
            "where": hit.where,
            "text": hit.text,
        }
        for hit in found
    ]
    return pd.DataFrame(rows, columns=["score", "tier", "when", "where", "text"])


def _plugin_table(rows: list[dict[str, Any]]) -> str:
    """One line per plugin; a failing one shows its last error beneath it."""
    header = f"{'plugin':<16} {'kind':<10} {'state':<10} {'restarts':>8}  tools"
    lines = [header]
    for row in rows:
        tools = ", ".join(row["tools"]) or "-"
        lines.append(
            f"{row['name']:<16} {row['kind']:<10} {row['state']:<10} {row['restarts']:>8}  {tools}"
        )
        if row["error"]:
            lines.append(f"{'':<16} error: {row['error']}")
        for flag in row["flags"]:
            lines.append(f"{'':<16} flagged: {flag}")
    return "\n".join(lines)


def _mcp_table(status: dict[str, Any]) -> str:
    lines = [f"{'server':<16} {'transport':<9} {'state':<11} {'restarts':>8}  tools"]
    for name, server in status.get("servers", {}).items():
        tools = ", ".join(server["tools"]) or "-"
        lines.append(
            f"{name:<16} {server['transport']:<9} {server['state']:<11} "
            f"{server['restarts']:>8}  {tools}"
        )
        if server["error"]:
            lines.append(f"{'':<16} {server['error']}")
        for tool, why in server.get("refused", {}).items():
            lines.append(f"{'':<16} not offered: {tool}: {why}")
    for name, why in status.get("refused", {}).items():
        lines.append(f"{name:<16} refused: {why}")
    return "\n".join(lines)


def _leading_options(text: str) -> tuple[dict[str, str], list[str], str]:
    """`--channel X --image a.png --level L3 the words` → ({--channel: X, --level: L3},
    [a.png], "the words"); `--image` may be given more than once."""
    options: dict[str, str] = {}
    images: list[str] = []
    while True:
        parts = text.split(None, 2)
        if len(parts) >= 2 and parts[0] in ("--channel", "--level", "--image"):
            if parts[0] == "--image":
                images.append(parts[1])
            else:
                options[parts[0]] = parts[1]
            text = parts[2] if len(parts) == 3 else ""
        else:
            return options, images, text


def image_paths(kernel: Kernel, given: Sequence[str]) -> list[Path]:
    """Each path as the firewall's path sandbox resolves it (inside its read roots), or a
    `UsageError` naming the first it refuses: nothing is read or injected then."""
    if not given:
        return []
    security = kernel.state.security
    if security is None:
        raise UsageError("the kernel has no firewall yet: await the `%hologram start` handle")
    sandbox = security.policy().sandbox
    paths = []
    for raw in given:
        try:
            path = sandbox.check(raw)
        except PathRefused as exc:
            raise UsageError(
                f"--image {raw}: refused by the firewall's path sandbox: {exc} "
                "(put the image inside a read root, core.security.read_roots)"
            ) from None
        if not path.is_file():
            raise UsageError(f"--image {raw}: no such file ({path})")
        paths.append(path)
    return paths


def _level(name: str) -> Priority:
    try:
        return Priority[name.upper()]
    except KeyError:
        raise UsageError(
            f"unknown level {name!r}; levels: QUEUED, L1, L2, L3 (L4 is the kernel's)"
        ) from None
