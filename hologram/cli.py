"""`python -m hologram …`: the command line."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hologram import __version__
from hologram._group0 import GIVEN, group0
from hologram.config import CORE_DEFAULTS, ConfigError, ConfigRegistry, mask
from hologram.kernel import (
    REGENERATE,
    AssemblyError,
    DataDirLock,
    plan,
    resolve_data_dir,
    stale_reason,
    write_depgraph,
)
from hologram.modules import kernel_modules
from hologram.update import UpdateError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m hologram",
        description="Hologram: a research workbench for long-running companion agents.",
    )
    parser.add_argument("--version", action="version", version=f"hologram {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    from hologram.eval.cli import add_eval_parser
    from hologram.update.cli import add_data_parser

    for add in (
        _add_serve,
        _add_chat,
        _add_mcp,
        _add_graph,
        _add_depgraph,
        _add_scripted_model,
        _add_config,
        _add_tools,
        _add_doctor,
        add_eval_parser,
        _add_transfer,
    ):
        add(commands)
    add_data_parser(commands, data_option)
    from hologram.tracker.cli import add_changes_parser

    add_changes_parser(commands, data_option)
    return parser


def data_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data", metavar="DIR", help="data directory (default: $HOLOGRAM_DATA, else ~/.hologram)"
    )


def _add_serve(commands: Any) -> None:
    serve = commands.add_parser(
        "serve",
        help="boot the kernel and run it until SIGINT or SIGTERM",
        description="Boot the kernel on the data dir, print its layers, and keep it running "
        "until SIGINT or SIGTERM, then shut down cleanly.",
    )
    data_option(serve)
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default: 127.0.0.1); any non-loopback address requires "
        "the bearer token kept in <data>/serve_token",
    )
    serve.add_argument(
        "--port", type=int, default=8787, help="port (default: 8787; 0 picks a free one)"
    )
    serve.add_argument(
        "--drain-timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="on SIGINT/SIGTERM, seconds the work in hand may take to finish (default: 10)",
    )


def _add_chat(commands: Any) -> None:
    chat = commands.add_parser(
        "chat",
        help="talk to a running service from the terminal",
        description="A terminal client of a running service: each line is an input; replies "
        "stream in from its event stream. Commands: /stop, /interrupt L1|L2|L3 TEXT, /status, "
        "/quit.",
    )
    chat.add_argument(
        "--url", default="http://127.0.0.1:8787", help="the service (default: %(default)s)"
    )
    chat.add_argument(
        "--token", help="bearer token (default: $HOLOGRAM_TOKEN), for a non-loopback service"
    )


def _add_mcp(commands: Any) -> None:
    mcp = commands.add_parser(
        "mcp",
        help="serve the companion as an MCP server over stdio",
        description="Boot the kernel on the data dir and serve it as an MCP server on stdin "
        "and stdout (memory recall and commit, knowledge search and create, send_input) until "
        "the client closes stdin. A running service serves the same at /mcp (streamable HTTP).",
    )
    data_option(mcp)


def _add_doctor(commands: Any) -> None:
    doctor = commands.add_parser(
        "doctor",
        help="check the kernel's health and print the report",
        description="Boot the kernel on the data dir and check it: a self-test turn on a "
        "virtual kernel, each module, each LLM source's reachability, each plugin's state and "
        "the disk space. Exits 1 when a check fails, naming the cause.",
    )
    data_option(doctor)


def _add_graph(commands: Any) -> None:
    graph = commands.add_parser(
        "graph",
        help="print the kernel's module layers",
        description="Print group 0 and the layers the module graph resolves into.",
    )
    graph.add_argument("--json", action="store_true", help="machine-readable output")


def _add_depgraph(commands: Any) -> None:
    depgraph = commands.add_parser(
        "depgraph",
        help="write or check the shipped layer plan",
        description="The layer plan of the real module set ships inside the package; boot "
        "refuses a stale one. --write regenerates it, --check exits 1 when it is stale.",
    )
    mode = depgraph.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="regenerate the layer plan")
    mode.add_argument("--check", action="store_true", help="exit 1 if the plan is stale")
    depgraph.add_argument("--path", type=Path, help=argparse.SUPPRESS)


def _add_scripted_model(commands: Any) -> None:
    scripted = commands.add_parser(
        "scripted-model",
        help="run the scripted local model server (OpenAI-compatible, on 127.0.0.1)",
        description="Serve the offline scripted model (or, with --scripted, an empty script "
        "filled through POST /_scripted/replies) on 127.0.0.1 until SIGINT or SIGTERM.",
    )
    scripted.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    scripted.add_argument("--scripted", action="store_true", help="answer only queued replies")


def _add_config(commands: Any) -> None:
    config = commands.add_parser(
        "config",
        help="read and change settings",
        description="Read and change settings in <data>/config.db.",
    )
    actions = config.add_subparsers(dest="action", required=True, metavar="ACTION")
    get = actions.add_parser("get", help="print one value as JSON")
    get.add_argument("key")
    set_ = actions.add_parser(
        "set",
        help="store one value",
        description="VALUE is read as the key's type: JSON for numbers, lists and objects, "
        "true/false for booleans, text as it is for strings.",
    )
    set_.add_argument("key")
    set_.add_argument("value")
    listing = actions.add_parser("list", help="list keys, values and where each comes from")
    listing.add_argument("prefix", nargs="?", default="")
    listing.add_argument("--show-secrets", action="store_true", help="do not mask secrets")
    delete = actions.add_parser("delete", help="forget a stored value (its default applies)")
    delete.add_argument("key")
    for action in (get, set_, listing, delete):
        data_option(action)


def _add_tools(commands: Any) -> None:
    tools = commands.add_parser(
        "tools",
        help="list the kernel's tools, or call one",
        description="Boot the kernel on the data dir and list every tool a turn offers (with "
        "its owner and parameters schema), or call one as the owner and print its result: how "
        "to check a plugin or an MCP server without a model. A failed call exits 1.",
    )
    actions = tools.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="every tool, its owner and its schema")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    call = actions.add_parser("call", help="call one tool and print its result")
    call.add_argument("name", help="the tool's name")
    call.add_argument(
        "--args", default="{}", metavar="JSON", help="its arguments, a JSON object (default: {})"
    )
    for action in (listing, call):
        data_option(action)
        action.add_argument(
            "--enable",
            action="append",
            default=[],
            metavar="PLUGIN",
            help="start this shipped plugin for the run (repeatable), e.g. --enable mcp",
        )


def _add_transfer(commands: Any) -> None:
    export = commands.add_parser(
        "export",
        help="write the companion's conversations and memory as JSONL",
        description="Boot the kernel on the data dir and write its input journal, context "
        "window, cold context, graph memory (text blocks, entities, facts with their times) "
        "and the media they show, one JSON record a line (see hologram/transfer.py).",
    )
    export.add_argument("--out", metavar="FILE", help="the file to write (default: stdout)")
    data_option(export)
    import_ = commands.add_parser(
        "import",
        help="read an export into an empty data dir",
        description="Check a file written by `export` whole (a bad line is named and nothing "
        "is stored), then write it into the data dir, which must hold no conversations or "
        "memory yet. Exits 2 when it refuses.",
    )
    import_.add_argument("file", metavar="FILE", help="the JSONL file ('-' for stdin)")
    data_option(import_)


def _depgraph_path(explicit: Path | None) -> Path:
    from hologram.facade import shipped_depgraph

    return explicit or shipped_depgraph()


def _graph(as_json: bool) -> int:
    resolved = plan(kernel_modules(), GIVEN)
    steps = [step.name for step in group0()]
    if as_json:
        document: dict[str, Any] = {
            "group0": {"steps": steps, "provides": sorted(GIVEN)},
            "layers": resolved.layer_names(),
            "modules": {
                m.name: {
                    "layer": resolved.layer_of(m.name),
                    "requires": sorted(m.requires),
                    "provides": sorted(m.provides),
                }
                for m in resolved.modules
            },
            "edges": [list(edge) for edge in resolved.edges()],
        }
        print(json.dumps(document, indent=2))
    else:
        print(f"group 0  {', '.join(steps)}")
        for line in resolved.topology():
            print(line)
    return 0


def _depgraph(write: bool, path: Path) -> int:
    if write:
        artifact = write_depgraph(path, kernel_modules(), GIVEN)
        print(
            f"wrote {path} ({len(artifact['layers'])} layers, graph {artifact['graph_hash'][:12]})"
        )
        return 0
    reason = stale_reason(path, kernel_modules(), GIVEN)
    if reason is not None:
        print(f"stale: {reason}", file=sys.stderr)
        return 1
    print(f"{path} is current")
    return 0


def _declare_plugins(registry: ConfigRegistry, data_dir: Path) -> None:
    """The plugins' declared settings, as a booted kernel would know them."""
    from hologram.plugins.builtin import builtin_plugins
    from hologram.plugins.manifest import installed_manifests
    from hologram.plugins.module import shipped_plugins

    for manifest in installed_manifests(shipped_plugins(), data_dir / "plugins"):
        registry.declare_plugin(manifest.name, manifest.settings)
    for name in builtin_plugins():
        registry.declare_plugin(name, ())


async def _config(args: argparse.Namespace) -> int:
    data_dir = resolve_data_dir(args.data)
    lock = DataDirLock(data_dir)
    from hologram.update import prepare, survey
    from hologram.update.migrate import refuse_newer

    if args.action in ("set", "delete"):
        lock.acquire()  # refuses while a kernel runs: its cached settings would go stale
    try:
        # The same check a kernel's start makes: never write a newer or damaged data dir.
        if lock.held:
            await asyncio.to_thread(prepare, data_dir)
        else:
            report, _found, manifest = await asyncio.to_thread(survey, data_dir)
            refuse_newer(report, manifest)
        registry = await ConfigRegistry.open(data_dir / "config.db")
        registry.register(CORE_DEFAULTS)
        try:
            if args.action == "get":
                value = registry.get(args.key)
                if value is None and registry.source(args.key) is None:
                    print(f"{args.key} is not set", file=sys.stderr)
                    return 1
                print(json.dumps(value, ensure_ascii=False))
            elif args.action == "set":
                _declare_plugins(registry, data_dir)
                registry.check_known(args.key)
                await registry.set(args.key, registry.set_text(args.key, args.value))
                print(f"{args.key} = {json.dumps(mask(args.key, registry.get(args.key)))}")
            elif args.action == "delete":
                found = await registry.delete(args.key)
                print(f"{args.key} {'deleted' if found else 'was not stored'}")
            else:
                for entry in registry.entries(args.prefix):
                    value = entry.value if args.show_secrets else mask(entry.key, entry.value)
                    print(
                        f"{entry.key} = {json.dumps(value, ensure_ascii=False)}  [{entry.source}]"
                    )
        finally:
            await registry.close()
    finally:
        lock.release()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "serve":
            from hologram.serve import serve

            return asyncio.run(
                serve(args.data, host=args.host, port=args.port, drain_timeout=args.drain_timeout)
            )
        if args.command == "chat":
            from hologram.serve.client import chat

            return asyncio.run(chat(args.url, args.token))
        if args.command == "mcp":
            from hologram.serve.mcp_server import serve_stdio

            return asyncio.run(serve_stdio(args.data))
        if args.command == "doctor":
            from hologram.health import doctor

            return asyncio.run(doctor(args.data))
        if args.command == "graph":
            return _graph(args.json)
        if args.command == "depgraph":
            return _depgraph(args.write, _depgraph_path(args.path))
        if args.command == "config":
            return asyncio.run(_config(args))
        if args.command == "tools":
            from hologram.tools_cli import run_tools

            return asyncio.run(run_tools(args))
        if args.command in ("export", "import"):
            from hologram.transfer import run_export, run_import

            return run_export(args) if args.command == "export" else run_import(args)
        if args.command == "scripted-model":
            from hologram.llm.scripted_server import run_scripted_model

            return asyncio.run(run_scripted_model(args.port, offline=not args.scripted))
        if args.command == "eval":
            from hologram.eval.cli import run_eval

            return run_eval(args)
        if args.command == "data":
            from hologram.update.cli import run_data

            return run_data(args)
        if args.command == "changes":
            from hologram.tracker.cli import run_changes

            return run_changes(args)
    except (AssemblyError, ConfigError, UpdateError) as exc:
        print(f"hologram: {exc}", file=sys.stderr)
        return 2
    raise AssertionError(f"unhandled command {args.command}")


__all__ = ["REGENERATE", "main"]
