"""`plugin.mcp.servers`: one entry per server, checked where it is read.

A server is either a stdio command (`command`, `args`, `env`, `cwd`) or a streamable-HTTP
endpoint (`url`, `headers`), with a `timeout_s` per request and an `enabled` switch. An
entry that cannot be used is refused with the reason and the others still start.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from wire import SERVER_NAME

_FIELDS = {
    *("command", "args", "env", "cwd", "url", "headers", "timeout_s", "enabled"),
    "touches_files",
}


@dataclass(frozen=True)
class ServerSpec:
    """One entry of `plugin.mcp.servers`, checked (secrets already filled in)."""

    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str = ""
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    timeout_s: float = 30.0
    enabled: bool = True
    touches_files: bool = False
    """A filesystem server: its tools that are not read-only are tracked by the kernel."""

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"


def parse_servers(raw: Any) -> tuple[dict[str, ServerSpec], dict[str, str]]:
    """The servers a setting names, and for each entry that is refused, why."""
    if raw is None:
        return {}, {}
    if isinstance(raw, str):  # `python -m hologram config set` stores an unknown key as text
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            return {}, {"*": f"plugin.mcp.servers is text that is not JSON: {exc}"}
    if not isinstance(raw, dict):
        return {}, {"*": "plugin.mcp.servers must be an object of server name → settings"}
    specs: dict[str, ServerSpec] = {}
    refused: dict[str, str] = {}
    for name, entry in raw.items():
        try:
            specs[name] = _spec(name, entry)
        except ValueError as exc:
            refused[str(name)] = str(exc)
    return specs, refused


def _strings(value: Any, what: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValueError(f"'{what}' must be an object of strings")
    return value


def _spec(name: Any, entry: Any) -> ServerSpec:
    if not isinstance(name, str) or not SERVER_NAME.match(name):
        raise ValueError(
            f"server name {name!r}: 1-24 letters, digits, '-' or single '_' (it becomes part "
            "of tool names mcp__<server>__<tool>)"
        )
    if not isinstance(entry, dict):
        raise ValueError("a server's settings are an object")
    unknown = sorted(set(entry) - _FIELDS)
    if unknown:
        raise ValueError(f"unknown field(s) {unknown}; fields are {sorted(_FIELDS)}")
    command, url = entry.get("command", ""), entry.get("url", "")
    if bool(command) == bool(url):
        raise ValueError("give either 'command' (a stdio server) or 'url' (streamable HTTP)")
    if url and (not isinstance(url, str) or not url.startswith(("http://", "https://"))):
        raise ValueError(f"'url' must be an http:// or https:// address, not {url!r}")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError("'args' must be a list of strings")
    timeout = entry.get("timeout_s", 30.0)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= 600:
        raise ValueError("'timeout_s' must be a number of seconds, above 0 and at most 600")
    if not isinstance(entry.get("enabled", True), bool):
        raise ValueError("'enabled' must be true or false")
    if not isinstance(entry.get("touches_files", False), bool):
        raise ValueError("'touches_files' must be true or false")
    return ServerSpec(
        name=name,
        command=str(command),
        args=tuple(args),
        env=tuple(sorted(_strings(entry.get("env", {}), "env").items())),
        cwd=str(entry.get("cwd", "")),
        url=str(url),
        headers=tuple(sorted(_strings(entry.get("headers", {}), "headers").items())),
        timeout_s=float(timeout),
        enabled=entry.get("enabled", True),
        touches_files=entry.get("touches_files", False),
    )
