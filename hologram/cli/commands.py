"""The commands that compose the kernel from above: the chat terminal, the module graph,
settings, tools, the health report, export and import. Each runs code of its own module
(`hologram.cli.chat`, `.graph`, `.config`, `.tools`) or of the package it uses, imported when
it runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from hologram.kernel import Commands, add_actions, data_option, json_option


def add_commands(commands: Commands) -> None:
    _add_chat(commands)
    _add_graph(commands)
    _add_config(commands)
    _add_tools(commands)
    commands.add(
        "doctor",
        _doctor,
        description="Boot the kernel on the data dir and check it: a self-test turn on a "
        "virtual kernel, each module, each LLM source's reachability, each plugin's state and "
        "the disk space. Exits 1 when a check fails, naming the cause.",
        data=True,
    )
    _add_transfer(commands)


def _add_chat(commands: Commands) -> None:
    chat = commands.add(
        "chat",
        _chat,
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


def _add_graph(commands: Commands) -> None:
    graph = commands.add(
        "graph", _graph, description="Print group 0 and the layers the module graph resolves into."
    )
    json_option(graph, "machine-readable output")
    depgraph = commands.add(
        "depgraph",
        _depgraph,
        description="The layer plan of the real module set ships inside the package; boot "
        "refuses a stale one. --write regenerates it, --check exits 1 when it is stale.",
    )
    mode = depgraph.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="regenerate the layer plan")
    mode.add_argument("--check", action="store_true", help="exit 1 if the plan is stale")
    depgraph.add_argument("--path", type=Path, help=argparse.SUPPRESS)


def _add_config(commands: Commands) -> None:
    config = commands.add(
        "config", _config, description="Read and change settings in <data>/config.db."
    )
    actions = add_actions(config, "action")
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


def _add_tools(commands: Commands) -> None:
    tools = commands.add(
        "tools",
        _tools,
        description="Boot the kernel on the data dir and list every tool a turn offers (with "
        "its owner and parameters schema), or call one as the owner and print its result: how "
        "to check a plugin or an MCP server without a model. A failed call exits 1.",
    )
    actions = add_actions(tools, "action")
    listing = actions.add_parser("list", help="every tool, its owner and its schema")
    json_option(listing, "machine-readable output")
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


def _add_transfer(commands: Commands) -> None:
    export = commands.add(
        "export",
        _export,
        description="Boot the kernel on the data dir and write its input journal, context "
        "window, cold context, graph memory (text blocks, entities, facts with their times) "
        "and the media they show, one JSON record a line (see hologram/transfer.py).",
    )
    export.add_argument("--out", metavar="FILE", help="the file to write (default: stdout)")
    data_option(export)
    import_ = commands.add(
        "import",
        _import,
        description="Check a file written by `export` whole (a bad line is named and nothing "
        "is stored), then write it into the data dir, which must hold no conversations or "
        "memory yet. Exits 2 when it refuses.",
    )
    import_.add_argument("file", metavar="FILE", help="the JSONL file ('-' for stdin)")
    data_option(import_)


# ---- the runs: each imports what it runs ------------------------------------------------------


def _chat(args: argparse.Namespace) -> int:
    import asyncio

    from hologram.cli.chat import chat

    return asyncio.run(chat(args.url, args.token))


def _graph(args: argparse.Namespace) -> int:
    from hologram.cli.graph import print_graph

    return print_graph(args.json)


def _depgraph(args: argparse.Namespace) -> int:
    from hologram.cli.graph import depgraph

    return depgraph(args.write, args.path)


def _config(args: argparse.Namespace) -> int:
    import asyncio

    from hologram.cli.config import config

    return asyncio.run(config(args))


def _tools(args: argparse.Namespace) -> int:
    import asyncio

    from hologram.cli.tools import run_tools

    return asyncio.run(run_tools(args))


def _doctor(args: argparse.Namespace) -> int:
    import asyncio

    return asyncio.run(_doctor_report(args.data))


async def _doctor_report(data: str | None) -> int:
    """The health report of the kernel on `data`, printed; 1 when a check fails or the
    kernel does not boot."""
    from hologram.facade import Kernel

    try:
        async with Kernel(data) as kernel:
            report = await kernel.health()
    except Exception as exc:
        print(f"FAIL kernel: it does not boot: {type(exc).__name__}: {exc}")
        return 1
    print(report.render())
    return 0 if report.ok else 1


def _export(args: argparse.Namespace) -> int:
    from hologram.transfer import run_export

    return run_export(args)


def _import(args: argparse.Namespace) -> int:
    from hologram.transfer import run_import

    return run_import(args)
