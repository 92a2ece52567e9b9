"""`scripted-model`: the scripted local model server, OpenAI-compatible, on 127.0.0.1."""

from __future__ import annotations

import argparse

from hologram.kernel import Commands


def add_commands(commands: Commands) -> None:
    scripted = commands.add(
        "scripted-model",
        _scripted_model,
        description="Serve the offline scripted model (or, with --scripted, an empty script "
        "filled through POST /_scripted/replies) on 127.0.0.1 until SIGINT or SIGTERM.",
    )
    scripted.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    scripted.add_argument("--scripted", action="store_true", help="answer only queued replies")


def _scripted_model(args: argparse.Namespace) -> int:
    import asyncio

    from hologram.llm.scripted_server import run_scripted_model

    return asyncio.run(run_scripted_model(args.port, offline=not args.scripted))
