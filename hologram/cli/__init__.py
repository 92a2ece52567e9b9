"""`python -m hologram …`: the command line.

It lists every command: its name, its one-line help and the module that owns it. A package
declares its own commands beside its code (`add_commands`, see `hologram.kernel.commands`);
this package declares those that compose the kernel from above (`hologram.cli.commands`).
An owner is imported only when one of its commands is named, so `--help`, and any command's
`--help`, start without loading the kernel.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NamedTuple

from hologram._version import __version__
from hologram.kernel import Commands, Run

ROOT = "hologram.cli.commands"


class Command(NamedTuple):
    name: str
    help: str
    owner: str
    """The module whose `add_commands` declares the command's arguments and its run."""


COMMANDS = (
    Command("serve", "boot the kernel and run it until SIGINT or SIGTERM", "hologram.serve.cli"),
    Command("chat", "talk to a running service from the terminal", ROOT),
    Command("mcp", "serve the companion as an MCP server over stdio", "hologram.serve.cli"),
    Command("graph", "print the kernel's module layers", ROOT),
    Command("depgraph", "write or check the shipped layer plan", ROOT),
    Command(
        "scripted-model",
        "run the scripted local model server (OpenAI-compatible, on 127.0.0.1)",
        "hologram.llm.cli",
    ),
    Command("config", "read and change settings", ROOT),
    Command("tools", "list the kernel's tools, or call one", ROOT),
    Command("doctor", "check the kernel's health and print the report", ROOT),
    Command(
        "eval",
        "replay datasets through fresh kernels and score memory recall",
        "hologram.eval.cli",
    ),
    Command("export", "write the companion's conversations and memory as JSONL", ROOT),
    Command("import", "read an export into an empty data dir", ROOT),
    Command("data", "the data dir: versions, backup, restore, migrate", "hologram.update.cli"),
    Command("changes", "the file changes tool calls made, and their undo", "hologram.tracker.cli"),
)


def parser(named: str | None = None) -> argparse.ArgumentParser:
    """The command line, with the arguments of command `named` (the others by name and help
    only: enough to list them and to refuse a name that is none of them)."""
    top = argparse.ArgumentParser(
        prog="python -m hologram",
        description="Hologram: a research workbench for long-running companion agents.",
    )
    top.add_argument("--version", action="version", version=f"hologram {__version__}")
    subparsers = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        if command.name == named:
            owner = importlib.import_module(command.owner)
            owner.add_commands(Commands(subparsers, command.name, command.help))
        else:
            subparsers.add_parser(command.name, help=command.help)
    return top


def named_command(argv: Sequence[str]) -> str | None:
    """The command named on the line: its first word that is not an option (the top level's
    options, --help and --version, take no value)."""
    return next((word for word in argv if not word.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else list(argv)
    args = parser(named_command(given)).parse_args(given)
    run: Run = args.run
    try:
        return run(args)
    except Exception as exc:
        if not isinstance(exc, _refusals()):
            raise
        print(f"hologram: {exc}", file=sys.stderr)
        return 2


def _refusals() -> tuple[type[Exception], ...]:
    """The errors a command refuses with (exit 2, one line): imported once a command has
    failed, not at start."""
    from hologram.config import ConfigError
    from hologram.kernel import AssemblyError
    from hologram.update import UpdateError

    return (AssemblyError, ConfigError, UpdateError)


__all__ = ["COMMANDS", "Command", "main", "parser"]
