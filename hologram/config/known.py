"""Which keys exist: those a section or a plugin's manifest declares, and the few families
whose members are named at run time (an LLM source, a credential, a third-party embedder's
options)."""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Collection, Mapping
from fnmatch import fnmatchcase

from hologram.config.keys import PLUGIN_KEY
from hologram.config.sections import EmbedderSettings, SecuritySettings, SourceSettings

SOURCE_FIELDS = (
    *(f.name for f in dataclasses.fields(SourceSettings)),
    *SourceSettings.unset_by_default,
)

FAMILIES = (
    *(f"{SourceSettings.all_prefix}*.{field}" for field in SOURCE_FIELDS),
    f"{SecuritySettings.credential_prefix}*.secret",
)
"""Patterns of keys named at run time: `core.llm.sources.<name>.model`, a credential."""


def unknown_reason(
    key: str, declared: Collection[str], plugins: Mapping[str, Collection[str]]
) -> str | None:
    """None when `key` exists; else why not, with the closest keys that do."""
    match = PLUGIN_KEY.match(key)
    if match:
        plugin = match.group(1)
        if plugin not in plugins:
            known = ", ".join(sorted(plugins)) or "none"
            return (
                f"no plugin named {plugin!r} is installed (plugins: {known}): {key} is read by none"
            )
        if key in plugins[plugin]:
            return None
        return _unknown(key, plugins[plugin], f"plugin {plugin} declares no such setting")
    if key in declared or any(fnmatchcase(key, family) for family in FAMILIES):
        return None
    if _third_party_embedder_option(key, declared):
        return None
    return _unknown(key, declared, "no such setting")


def _third_party_embedder_option(key: str, declared: Collection[str]) -> bool:
    """An option of an embedder that comes from an entry point: its keys are its own. A
    built-in embedder's options are declared, so a typo in one is still refused."""
    prefix = EmbedderSettings.options_prefix
    if not key.startswith(prefix) or key.count(".") < prefix.count(".") + 1:
        return False
    name = key[len(prefix) :].split(".", 1)[0]
    return not any(k.startswith(f"{prefix}{name}.") for k in declared)


def _unknown(key: str, known: Collection[str], why: str) -> str:
    close = difflib.get_close_matches(key, list(known), n=3, cutoff=0.75)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return f"unknown setting {key!r}: {why}{hint}"
