"""`plugin.json`: what an external plugin says about itself, checked where it is read.

Every field is checked once, here, with an error that names the file, the field and the fix:
an unknown facility or capability is an error at load, never a plugin that silently never
starts (spec 000: manifests name facilities; the "fail silently" trap of withheld surfaces).
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from hologram.config import Setting
from hologram.sdk import WITHHELD, Capability, Facility, jsontext, parse_facility
from hologram.security import Profile, parse_profiles

MANIFEST = "plugin.json"
PLUGIN_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
"""Also the `plugin.<name>.*` settings namespace, so the config key rules apply."""

_FIELDS = frozenset(
    {
        "name",
        "version",
        "entry",
        "description",
        "platforms",
        "capabilities",
        "requires_facilities",
        "auto_start",
        "auto_restart",
        "security_profiles",
        "settings",
    }
)
SETTING_NAME = re.compile(r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$")


class ManifestError(ValueError):
    """A manifest that cannot be loaded; the message says which file, which field, and why."""


class Kind(StrEnum):
    """How a plugin is loaded (spec 000: the four loading methods)."""

    BUILTIN = "builtin"
    SUBPROCESS = "subprocess"
    LUA = "lua"
    SKILL = "skill"


@dataclass(frozen=True, slots=True)
class Manifest:
    name: str
    version: str
    entry: str
    kind: Kind
    description: str = ""
    platforms: tuple[str, ...] = ()
    capabilities: frozenset[Capability] = frozenset()
    requires_facilities: tuple[Facility, ...] = ()
    auto_start: bool = True
    auto_restart: bool = True
    security_profiles: tuple[Profile, ...] = ()
    """The profiles (`<name>.<role>`) this plugin may select per input; see security."""
    settings: tuple[Setting, ...] = ()
    """The `plugin.<name>.*` keys it reads, with defaults and docs: the only keys of its
    namespace a person may set (the settings API, `config set`, cfgmgr)."""

    def runs_here(self) -> bool:
        return not self.platforms or sys.platform in self.platforms or _family() in self.platforms


def _family() -> str:
    return "linux" if sys.platform.startswith("linux") else sys.platform


def kind_of(entry: str) -> Kind:
    """The loader an `entry` selects: `*.py` runs as a subprocess, `*.lua` in the Lua
    sandbox, `SKILL.md` as a skill."""
    if entry.endswith(".py"):
        return Kind.SUBPROCESS
    if entry.endswith(".lua"):
        return Kind.LUA
    if entry == "SKILL.md":
        return Kind.SKILL
    raise ValueError(
        f"entry {entry!r} names no loader: use a Python script (*.py, run as a subprocess), "
        "a Lua script (*.lua) or SKILL.md"
    )


def parse_manifest(data: Any, where: str) -> Manifest:
    """Check a decoded `plugin.json`; `where` names it in errors."""

    def fail(message: str) -> ManifestError:
        return ManifestError(f"{where}: {message}")

    if not isinstance(data, dict):
        raise fail("a manifest is a JSON object")
    unknown = sorted(set(data) - _FIELDS)
    if unknown:
        raise fail(f"unknown field(s) {unknown}; fields are {sorted(_FIELDS)}")
    for required in ("name", "version", "entry"):
        if not isinstance(data.get(required), str) or not data[required]:
            raise fail(f"'{required}' is required and must be a non-empty string")
    name, entry = data["name"], data["entry"]
    if not PLUGIN_NAME.match(name):
        raise fail(
            f"plugin name {name!r} is not allowed: 1-40 lower-case letters, digits or '_', "
            "starting with a letter (it is also the plugin.<name>.* settings namespace)"
        )
    if "/" in entry or "\\" in entry or entry.startswith("."):
        raise fail(f"entry {entry!r} must be a file name inside the plugin's folder")
    try:
        kind = kind_of(entry)
    except ValueError as exc:
        raise fail(str(exc)) from None
    capabilities = frozenset(_capability(c, fail) for c in _strings(data, "capabilities", fail))
    withheld = sorted(c.value for c in capabilities & WITHHELD)
    if withheld:
        raise fail(
            f"capabilities {withheld} are withheld from external plugins; a plugin that needs "
            "them must be built in (listed in hologram.plugins.builtin)"
        )
    facilities: list[Facility] = []
    for name_ in _strings(data, "requires_facilities", fail):
        try:
            facilities.append(parse_facility(name_))
        except ValueError as exc:
            raise fail(f"requires_facilities: {exc}") from None
    flags = {}
    for flag in ("auto_start", "auto_restart"):
        value = data.get(flag, True)
        if not isinstance(value, bool):
            raise fail(f"'{flag}' must be true or false, not {value!r}")
        flags[flag] = value
    description = data.get("description", "")
    if not isinstance(description, str):
        raise fail("'description' must be a string")
    try:
        profiles = parse_profiles(name, data.get("security_profiles", {}))
    except ValueError as exc:
        raise fail(str(exc)) from None
    return Manifest(
        name=name,
        version=data["version"],
        entry=entry,
        kind=kind,
        description=description,
        platforms=tuple(_strings(data, "platforms", fail)),
        capabilities=capabilities,
        requires_facilities=tuple(facilities),
        security_profiles=tuple(profiles.values()),
        settings=_settings(name, data.get("settings", {}), fail),
        **flags,
    )


def _settings(plugin: str, declared: Any, fail: Any) -> tuple[Setting, ...]:
    """`"settings": {"root": {"default": "", "doc": "…"}}`, as registry settings."""
    if not isinstance(declared, dict):
        raise fail("'settings' must be an object: setting name → {default, doc}")
    settings = []
    for name, spec in declared.items():
        if not isinstance(name, str) or not SETTING_NAME.match(name):
            raise fail(
                f"setting name {name!r}: use letters, digits, '_' or '-', parts joined by '.'"
            )
        if not isinstance(spec, dict) or set(spec) - {"default", "doc"}:
            raise fail(f"setting {name!r} must be an object with 'default' and 'doc'")
        doc = spec.get("doc", "")
        if not isinstance(doc, str):
            raise fail(f"setting {name!r}: 'doc' must be a string")
        settings.append(Setting(f"plugin.{plugin}.{name}", spec.get("default"), doc))
    return tuple(settings)


def _strings(data: dict[str, Any], key: str, fail: Any) -> list[str]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise fail(f"'{key}' must be a list of strings")
    return value


def _capability(name: str, fail: Any) -> Capability:
    try:
        return Capability(name)
    except ValueError:
        known = ", ".join(c.value for c in Capability if c not in WITHHELD)
        raise fail(f"unknown capability {name!r}; capabilities are: {known}") from None


def installed_manifests(*roots: Path | None) -> list[Manifest]:
    """The manifests of the plugin folders under `roots` that read cleanly (a broken one is
    the registry's to report at boot; here it only declares nothing)."""
    found = []
    for root in roots:
        for folder in sorted(root.iterdir()) if root is not None and root.is_dir() else ():
            if (folder / MANIFEST).is_file():
                try:
                    found.append(read_manifest(folder))
                except ManifestError:
                    continue
    return found


def read_manifest(folder: Path) -> Manifest:
    """Read and check `folder/plugin.json`; the entry file must exist beside it."""
    path = folder / MANIFEST
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ManifestError(f"{folder}: no {MANIFEST}; every plugin folder needs one") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{path}: cannot be read ({exc})") from None
    try:
        data = jsontext.loads(text)
    except jsontext.JsonRefused as exc:
        raise ManifestError(f"{path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ManifestError(f"{path}: not valid JSON ({exc})") from None
    manifest = parse_manifest(data, str(path))
    if not (folder / manifest.entry).is_file():
        raise ManifestError(f"{path}: entry {manifest.entry!r} is not a file in {folder}")
    return manifest
