"""`config get|set|list|delete`: the settings in <data>/config.db, read and changed beside
the same data-dir checks a kernel's start makes."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from hologram.config import CORE_DEFAULTS, ConfigRegistry, mask
from hologram.kernel import DataDirLock, resolve_data_dir
from hologram.update import prepare, refuse_newer, survey


def _declare_plugins(registry: ConfigRegistry, data_dir: Path) -> None:
    """The plugins' declared settings, as a booted kernel would know them."""
    from hologram.plugins import builtin_plugins, installed_manifests, shipped_plugins

    for manifest in installed_manifests(shipped_plugins(), data_dir / "plugins"):
        registry.declare_plugin(manifest.name, manifest.settings)
    for name in builtin_plugins():
        registry.declare_plugin(name, ())


async def config(args: argparse.Namespace) -> int:
    data_dir = resolve_data_dir(args.data)
    lock = DataDirLock(data_dir)
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
            return await _act(registry, data_dir, args)
        finally:
            await registry.close()
    finally:
        lock.release()


async def _act(registry: ConfigRegistry, data_dir: Path, args: argparse.Namespace) -> int:
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
            print(f"{entry.key} = {json.dumps(value, ensure_ascii=False)}  [{entry.source}]")
    return 0
