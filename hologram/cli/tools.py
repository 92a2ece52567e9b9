"""`python -m hologram tools list|call`: the kernel's tools without a model.

The kernel boots on the data dir as it would for `serve` (so the plugins, the MCP servers in
`plugin.mcp.servers` and the firewall are the real ones), the tools a turn would offer are
listed, or one is called through the same guarded runner a turn uses, as the owner (the
internal principal: a call made from the owner's console), and the kernel shuts down.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from hologram.facade import Kernel
from hologram.plugins import PluginLoadError
from hologram.sdk import ToolCall, ToolDef
from hologram.stages import infer_owner


async def run_tools(args: argparse.Namespace) -> int:
    arguments: dict[str, Any] = {}
    if args.action == "call":
        try:
            arguments = json.loads(args.args)
        except json.JSONDecodeError as exc:
            print(f"hologram: --args is not JSON: {exc}", file=sys.stderr)
            return 2
        if not isinstance(arguments, dict):
            print("hologram: --args must be a JSON object of the tool's arguments", file=sys.stderr)
            return 2
    async with Kernel(args.data) as kernel:
        registry = kernel.state.plugins
        stagehost = kernel.state.stagehost
        assert registry is not None and kernel.state.agent is not None and stagehost is not None
        for name in args.enable:
            try:
                await registry.enable(name)
            except (KeyError, PluginLoadError) as exc:
                print(f"hologram: plugin {name!r} did not start: {exc}", file=sys.stderr)
                return 1
        tools = kernel.state.agent.build_tool_defs()
        if args.action == "list":
            _print_tools(tools, as_json=args.json)
            return 0
        result = await stagehost.runner.execute(ToolCall("cli-1", args.name, arguments), tools)
    if result.is_error:
        print(result.content, file=sys.stderr)
        return 1
    print(result.content)
    return 0


def _print_tools(tools: dict[str, ToolDef], *, as_json: bool) -> None:
    rows: list[dict[str, Any]] = [
        {
            "name": tool.name,
            "owner": tool.owner or infer_owner(tool.name),
            "description": tool.description,
            "parameters": tool.parameters,
        }
        for tool in sorted(tools.values(), key=lambda t: t.name)
    ]
    if as_json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    width = max((len(r["name"]) for r in rows), default=4)
    for row in rows:
        summary = row["description"].strip().splitlines()[0] if row["description"] else ""
        params = ", ".join(row["parameters"].get("properties", {})) or "-"
        print(f"{row['name']:<{width}}  {row['owner']:<12}  ({params})  {summary}")
