"""How a package declares its commands for `python -m hologram`.

The command line (`hologram.cli`) lists every command by name, one-line help and the module
that owns it, and imports that module only when the command is named. So a command module is
light (argparse and this module), and each command's `run` imports what it runs:

    def add_commands(commands: Commands) -> None:
        serve = commands.add("serve", _serve, description="Boot the kernel …", data=True)
        serve.add_argument("--port", type=int, default=8787, help="port")

    def _serve(args: argparse.Namespace) -> int:
        from hologram.serve.service import serve  # the kernel loads once the command runs
        ...

The one-line help lives in the command line's table, where `--help` reads it without
importing anyone; `Commands.add` takes it from there.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

Run = Callable[[argparse.Namespace], int]
"""What a command does with its parsed arguments; its return is the exit code."""

Subparsers = argparse._SubParsersAction  # the type argparse gives no public name

DATA_HELP = "data directory (default: $HOLOGRAM_DATA, else ~/.hologram)"


def data_option(parser: argparse.ArgumentParser) -> None:
    """`--data DIR`: the data dir a command works on (`resolve_data_dir`'s rule)."""
    parser.add_argument("--data", metavar="DIR", help=DATA_HELP)


def json_option(parser: argparse.ArgumentParser, help: str = "print JSON") -> None:
    """`--json`: print the answer as JSON rather than as lines for a reader."""
    parser.add_argument("--json", action="store_true", help=help)


def add_actions(parser: argparse.ArgumentParser, dest: str) -> Subparsers[argparse.ArgumentParser]:
    """A command's ACTION word (`config get`, `data backup` …): one is required."""
    return parser.add_subparsers(dest=dest, required=True, metavar="ACTION")


class Commands:
    """The command line's subcommands, as a package adds its own to them.

    Only the command being run is built into the command line; a package's other commands
    are declared into parsers nobody reads, so a package declares all of its commands in one
    function without knowing which of them runs."""

    def __init__(
        self, subparsers: Subparsers[argparse.ArgumentParser], name: str, help: str
    ) -> None:
        self._subparsers = subparsers
        self._name = name
        self._help = help

    def add(
        self, name: str, run: Run, *, description: str, data: bool = False
    ) -> argparse.ArgumentParser:
        """The parser of command `name`, which `run` runs; with `data`, its `--data DIR`."""
        if name == self._name:
            parser = self._subparsers.add_parser(name, help=self._help, description=description)
        else:
            parser = argparse.ArgumentParser(add_help=False)
        parser.set_defaults(run=run)
        if data:
            data_option(parser)
        return parser
