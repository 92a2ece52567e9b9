"""The MCP client plugin: the tools of MCP servers, offered to the model as its own.

Servers are settings, `plugin.mcp.servers`, one entry per server:

    {"notes": {"command": "python", "args": ["notes_server.py"], "env": {"TOKEN": "@{notes}"}},
     "web":   {"url": "http://127.0.0.1:8000/mcp", "headers": {"Authorization": "Bearer @{web}"},
               "timeout_s": 10}}

A secret is written as `@{alias}` and filled in by the kernel's credential gate, for this
plugin's settings only; what a server answers goes back through the firewall, which masks
it again. Each server's tools become `mcp__<server>__<tool>`; a server with resources or
prompts also gets `mcp__<server>__resources` and `mcp__<server>__prompts`. How a server is
connected, followed and restarted is `servers.Connection`; what its schemas and results
become is `wire`. Every change of a server's state is reported to the kernel (the registry's
status of `mcp`, a `plugin_status` event, a log line), which is what `%hologram mcp` and the
service page show.

Other settings: `health_interval_s` (10), `restart_backoff_s` (0.5), `restart_backoff_max_s`
(30), `connect_timeout_s` (10), `startup_wait_s` (3: how long starting the plugin waits for
the servers' first connections).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from servers import Connection, ServerError
from settings import ServerSpec, parse_servers
from wire import block_text, clean_schema, description, resource_text, result_text, tool_name

from hologram.plugins.runtime import PluginApp

app = PluginApp()
log = logging.getLogger("mcp")


def read_only(tool: Any) -> bool:
    """What the server says of a tool (MCP's `readOnlyHint`): a read-only one is not tracked."""
    annotations = getattr(tool, "annotations", None)
    return bool(getattr(annotations, "readOnlyHint", False))


class Hub:
    """Every configured server, and what the plugin offers of them."""

    def __init__(self) -> None:
        self.connections: dict[str, Connection] = {}
        self.refused: dict[str, str] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def configure(self) -> None:
        """Read the plugin's timings (known once the kernel has sent the settings)."""

        def number(key: str, default: float) -> float:
            value = app.settings.get(key)
            return default if value is None else float(value)

        self.health_interval_s = number("health_interval_s", 10.0)
        self.backoff_s = number("restart_backoff_s", 0.5)
        self.backoff_max_s = number("restart_backoff_max_s", 30.0)
        self.connect_timeout_s = number("connect_timeout_s", 10.0)
        self.startup_wait_s = number("startup_wait_s", 3.0)
        self.default_cwd = app.data_dir or "."

    # ---- the servers ------------------------------------------------------------------------

    async def configured(self) -> dict[str, ServerSpec]:
        specs, self.refused = parse_servers(await app.sdk.settings.resolved("servers"))
        for name, why in self.refused.items():
            log.warning("MCP server %r not started: %s", name, why)
        return {n: s for n, s in specs.items() if s.enabled}

    async def start(self) -> None:
        self.configure()
        for spec in (await self.configured()).values():
            self._launch(spec)
        waiting = [c.attempted.wait() for c in self.connections.values()]
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.startup_wait_s):
                await asyncio.gather(*waiting)
        await self.changed(None)

    def _launch(self, spec: ServerSpec) -> None:
        connection = Connection(spec, self)
        self.connections[spec.name] = connection
        self._tasks[spec.name] = app.spawn(connection.run(), name=f"mcp-{spec.name}")

    async def _drop(self, name: str) -> None:
        task = self._tasks.pop(name)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        connection = self.connections.pop(name)
        await self.withdraw(list(connection.tools))

    async def reconcile(self) -> None:
        """Follow a change of `plugin.mcp.servers`: start, stop or restart what changed."""
        wanted = await self.configured()
        for name in list(self.connections):
            if name not in wanted or wanted[name] != self.connections[name].spec:
                await self._drop(name)
        for name, spec in wanted.items():
            if name not in self.connections:
                self._launch(spec)
        await self.changed(None, "MCP servers reconfigured: " + (", ".join(wanted) or "none"))

    async def stop(self) -> None:
        # All at once: each stdio server is given a moment to exit, and the kernel waits
        # for the plugin's stop only so long.
        await asyncio.gather(*(self._drop(name) for name in list(self._tasks)))

    # ---- what a connection asks for (servers.Host) ------------------------------------------

    async def offer(self, connection: Connection, kernel_name: str, tool: Any) -> None:
        server = connection.name
        timeout = connection.spec.timeout_s + 5  # the kernel's cut-off after the server's
        if tool is None:
            kind = "resources" if kernel_name == tool_name(server, "resources") else "prompts"
            text, schema, handler = EXTRAS[kind]
            await app.sdk.register_tool(
                kernel_name,
                description(text, server, kind),
                schema,
                lambda args, h=handler: h(connection, args),
                timeout=timeout,
            )
            return
        parameters = clean_schema(tool.input_schema)

        async def call(args: dict[str, Any]) -> str:
            result = await connection.call(
                f"tool {tool.name}",
                lambda client: client.call_tool(
                    tool.name, args, read_timeout_seconds=connection.spec.timeout_s
                ),
            )
            text = result_text(result)
            if result.is_error:
                raise ServerError(text or f"tool {tool.name} failed")
            return text

        await app.sdk.register_tool(
            kernel_name,
            description(tool.description, server, tool.name),
            parameters.schema,
            call,
            timeout=timeout,
            optional=list(parameters.optional),
            touches_files=connection.spec.touches_files and not read_only(tool),
        )

    async def withdraw(self, names: list[str]) -> None:
        if names:
            await app.sdk.unregister_tools(names)

    async def changed(
        self, connection: Connection | None, message: str = "", level: str = "info"
    ) -> None:
        status = {
            "servers": {name: c.status() for name, c in sorted(self.connections.items())},
            "refused": dict(self.refused),
        }
        await app.sdk.report_status(status, message, level)


# ---- resources and prompts, one tool each per server ---------------------------------------------


async def resources(connection: Connection, args: dict[str, Any]) -> str:
    uri = args.get("uri") or ""
    if not uri:
        listed = await connection.call("resources/list", lambda c: c.list_resources())
        templates = await connection.call(
            "resources/templates/list", lambda c: c.list_resource_templates()
        )
        rows = [
            {"uri": str(r.uri), "name": r.name, "description": r.description, "mime": r.mime_type}
            for r in listed.resources
        ] + [
            {"uri_template": t.uri_template, "name": t.name, "description": t.description}
            for t in templates.resource_templates
        ]
        return json.dumps(rows, ensure_ascii=False)
    read = await connection.call(f"resource {uri}", lambda c: c.read_resource(uri))
    return "\n".join(resource_text(contents) for contents in read.contents)


async def prompts(connection: Connection, args: dict[str, Any]) -> str:
    name = args.get("name") or ""
    if not name:
        listed = await connection.call("prompts/list", lambda c: c.list_prompts())
        rows = [
            {
                "name": p.name,
                "description": p.description,
                "arguments": [
                    {"name": a.name, "required": bool(a.required)} for a in p.arguments or []
                ],
            }
            for p in listed.prompts
        ]
        return json.dumps(rows, ensure_ascii=False)
    arguments = {k: str(v) for k, v in (args.get("arguments") or {}).items()}
    got = await connection.call(f"prompt {name}", lambda c: c.get_prompt(name, arguments))
    return "\n".join(f"{m.role}: {block_text(m.content)}" for m in got.messages)


EXTRAS: dict[str, tuple[str, dict[str, Any], Any]] = {
    "resources": (
        "The server's resources: without 'uri', the list (and URI templates); with it, "
        "that resource's contents.",
        {
            "type": "object",
            "properties": {"uri": {"type": "string"}},
            "additionalProperties": False,
        },
        resources,
    ),
    "prompts": (
        "The server's prompts: without 'name', the list with their arguments; with it, that "
        "prompt's messages.",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "arguments": {"type": "object", "additionalProperties": {"type": "string"}},
            },
            "additionalProperties": False,
        },
        prompts,
    ),
}


hub = Hub()


@app.on_start
async def start(sdk: Any) -> None:
    await hub.start()

    async def settings_changed(event: dict[str, Any]) -> None:
        if str(event.get("payload", {}).get("key", "")).startswith("plugin.mcp.servers"):
            app.spawn(hub.reconcile(), name="mcp-reconcile")

    await sdk.subscribe("config_changed", settings_changed)


@app.on_stop
async def stop() -> None:
    await hub.stop()


app.run()
