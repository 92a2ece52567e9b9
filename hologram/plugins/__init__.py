"""The plugin host: registry, manifests, the four loaders (built-in, subprocess JSON-RPC, Lua,
SKILL.md), capability narrowing, supervision and restart, `.hmap` packages.

Imports are lazy: a plugin process imports `hologram.plugins.runtime` (and through it only
`hologram.plugins.rpc`, the sdk and the kernel's task group) without loading the kernel side
of this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hologram.kernel import lazy_face

_LAZY = {
    "hologram.plugins.builtin": ("builtin_plugins",),
    "hologram.plugins.changes": ("ChangeRefused", "PluginAction", "PluginChanges", "Why"),
    "hologram.plugins.entry": ("Entry", "State"),
    "hologram.plugins.kernel_sdk": ("KernelParts", "KernelSDK"),
    "hologram.plugins.llm_surface": ("LLMAPI",),
    "hologram.plugins.manifest": (
        "Kind",
        "Manifest",
        "ManifestError",
        "installed_manifests",
        "parse_manifest",
        "read_manifest",
    ),
    "hologram.plugins.module": ("PluginsModule", "shipped_plugins"),
    "hologram.plugins.package": ("PackageError", "build_package", "read_package"),
    "hologram.plugins.process": ("PluginLoadError", "SubprocessPlugin"),
    "hologram.plugins.registry": ("BothCopiesError", "PluginRegistry"),
    "hologram.plugins.rpc": ("PROTOCOL_VERSION",),
    "hologram.plugins.skill": ("scan_skill",),
    "hologram.plugins.supervisor": ("Supervisor",),
}

__all__ = [
    "LLMAPI",
    "PROTOCOL_VERSION",
    "BothCopiesError",
    "ChangeRefused",
    "Entry",
    "KernelParts",
    "KernelSDK",
    "Kind",
    "Manifest",
    "ManifestError",
    "PackageError",
    "PluginAction",
    "PluginChanges",
    "PluginLoadError",
    "PluginRegistry",
    "PluginsModule",
    "State",
    "SubprocessPlugin",
    "Supervisor",
    "Why",
    "build_package",
    "builtin_plugins",
    "installed_manifests",
    "parse_manifest",
    "read_manifest",
    "read_package",
    "scan_skill",
    "shipped_plugins",
]
__getattr__ = lazy_face(__name__, _LAZY)

if TYPE_CHECKING:
    from hologram.plugins.builtin import builtin_plugins
    from hologram.plugins.changes import ChangeRefused, PluginAction, PluginChanges, Why
    from hologram.plugins.entry import Entry, State
    from hologram.plugins.kernel_sdk import KernelParts, KernelSDK
    from hologram.plugins.llm_surface import LLMAPI
    from hologram.plugins.manifest import (
        Kind,
        Manifest,
        ManifestError,
        installed_manifests,
        parse_manifest,
        read_manifest,
    )
    from hologram.plugins.module import PluginsModule, shipped_plugins
    from hologram.plugins.package import PackageError, build_package, read_package
    from hologram.plugins.process import PluginLoadError, SubprocessPlugin
    from hologram.plugins.registry import BothCopiesError, PluginRegistry
    from hologram.plugins.rpc import PROTOCOL_VERSION
    from hologram.plugins.skill import scan_skill
    from hologram.plugins.supervisor import Supervisor
