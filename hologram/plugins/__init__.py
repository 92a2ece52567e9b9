"""The plugin host: registry, manifests, the four loaders (built-in, subprocess JSON-RPC, Lua,
SKILL.md), capability narrowing, supervision and restart, `.hmap` packages.

Imports are lazy: a plugin process imports `hologram.plugins.runtime` (and through it only
`hologram.plugins.rpc`) without loading the kernel side of this package.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "BothCopiesError": "hologram.plugins.registry",
    "ChangeRefused": "hologram.plugins.changes",
    "PluginAction": "hologram.plugins.changes",
    "PluginChanges": "hologram.plugins.changes",
    "Why": "hologram.plugins.changes",
    "Entry": "hologram.plugins.entry",
    "PluginRegistry": "hologram.plugins.registry",
    "State": "hologram.plugins.entry",
    "Supervisor": "hologram.plugins.supervisor",
    "PluginsModule": "hologram.plugins.module",
    "shipped_plugins": "hologram.plugins.module",
    "KernelSDK": "hologram.plugins.kernel_sdk",
    "KernelParts": "hologram.plugins.kernel_sdk",
    "Kind": "hologram.plugins.manifest",
    "Manifest": "hologram.plugins.manifest",
    "ManifestError": "hologram.plugins.manifest",
    "parse_manifest": "hologram.plugins.manifest",
    "read_manifest": "hologram.plugins.manifest",
    "PackageError": "hologram.plugins.package",
    "build_package": "hologram.plugins.package",
    "read_package": "hologram.plugins.package",
    "PluginLoadError": "hologram.plugins.process",
    "SubprocessPlugin": "hologram.plugins.process",
    "scan_skill": "hologram.plugins.skill",
    "PROTOCOL_VERSION": "hologram.plugins.rpc",
    "builtin_plugins": "hologram.plugins.builtin",
    "LLMAPI": "hologram.plugins.llm_surface",
    "installed_manifests": "hologram.plugins.manifest",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hologram.plugins' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
