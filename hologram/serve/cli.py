"""The service's commands: `serve` (the HTTP API) and `mcp` (an MCP server over stdio)."""

from __future__ import annotations

import argparse

from hologram.kernel import Commands


def add_commands(commands: Commands) -> None:
    serve = commands.add(
        "serve",
        _serve,
        description="Boot the kernel on the data dir, print its layers, and keep it running "
        "until SIGINT or SIGTERM, then shut down cleanly.",
        data=True,
    )
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
    commands.add(
        "mcp",
        _mcp,
        description="Boot the kernel on the data dir and serve it as an MCP server on stdin "
        "and stdout (memory recall and commit, knowledge search and create, send_input) until "
        "the client closes stdin. A running service serves the same at /mcp (streamable HTTP).",
        data=True,
    )


def _serve(args: argparse.Namespace) -> int:
    import asyncio

    from hologram.serve.service import serve

    return asyncio.run(
        serve(args.data, host=args.host, port=args.port, drain_timeout=args.drain_timeout)
    )


def _mcp(args: argparse.Namespace) -> int:
    import asyncio

    from hologram.serve.mcp_server import serve_stdio

    return asyncio.run(serve_stdio(args.data))
