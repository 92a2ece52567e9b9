"""Tool policy: who may call which tool with which arguments (spec: tool allow/deny +
sandbox, per-principal grants, plugin-named profiles).

One decision per call, in this order, the first refusal winning: the deny list (deny always
wins over allow), the allow list, hard-private tools for principals that are not internal,
the network switch, then every path argument through the sandbox. The reason is a sentence
the model can act on: it comes back to it as the tool's error.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from hologram.config import SecuritySettings
from hologram.security.paths import PathRefused, PathSandbox

PROFILE_NAME = re.compile(r"^[a-z][a-z0-9_]*\.[a-z0-9_.-]{1,40}$")
_PROFILE_FIELDS = frozenset({"internal", "allow", "deny", "grant", "network", "description"})
_URL = re.compile(r"^\s*[A-Za-z][A-Za-z0-9+.-]*://")


@dataclass(frozen=True, slots=True)
class Profile:
    """A plugin-named profile (`qq.owner`, `qq.guest`): what an input selecting it may do.

    `internal` makes its inputs count as the owner's; `allow`/`deny` narrow the kernel's
    lists further (a profile can only take away, except that `internal` grants every
    hard-private tool and `grant` the hard-private tools it names, such as `cmd_run`, to a
    principal that stays non-internal otherwise); `network` False switches network tools off
    for it."""

    name: str
    internal: bool = False
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    grant: tuple[str, ...] = ()
    network: bool | None = None
    description: str = ""


def parse_profiles(plugin: str, data: Any) -> dict[str, Profile]:
    """Check a manifest's `security_profiles`; raises ValueError naming the field and fix."""
    if not isinstance(data, dict):
        raise ValueError("'security_profiles' must be an object of profile name → settings")
    profiles: dict[str, Profile] = {}
    for name, spec in data.items():
        if not isinstance(name, str) or not PROFILE_NAME.match(name):
            raise ValueError(
                f"security profile {name!r}: a name is '<plugin>.<role>' in lower case, "
                f"e.g. '{plugin}.guest'"
            )
        if name.split(".", 1)[0] != plugin:
            raise ValueError(
                f"security profile {name!r} must be named after its plugin: '{plugin}.<role>'"
            )
        if not isinstance(spec, dict):
            raise ValueError(f"security profile {name!r} must be an object")
        unknown = sorted(set(spec) - _PROFILE_FIELDS)
        if unknown:
            raise ValueError(
                f"security profile {name!r}: unknown field(s) {unknown}; "
                f"fields are {sorted(_PROFILE_FIELDS)}"
            )
        lists = {}
        for key in ("allow", "deny", "grant"):
            value = spec.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"security profile {name!r}: '{key}' must be a list of strings")
            lists[key] = tuple(value)
        for key in ("internal", "network"):
            if key in spec and not isinstance(spec[key], bool):
                raise ValueError(f"security profile {name!r}: '{key}' must be true or false")
        description = spec.get("description", "")
        if not isinstance(description, str):
            raise ValueError(f"security profile {name!r}: 'description' must be a string")
        profiles[name] = Profile(
            name,
            internal=spec.get("internal", False),
            network=spec.get("network"),
            description=description,
            **lists,
        )
    return profiles


@dataclass(frozen=True, slots=True)
class Principal:
    """Who an input speaks for. Internal: the owner at the console, the kernel itself."""

    name: str
    internal: bool
    profile: Profile | None = None


INTERNAL = Principal("internal", True)
UNKNOWN = Principal("unknown", False)
"""Calls whose input is not known (none passed through the stages) get the least rights."""


@dataclass(frozen=True, slots=True)
class PolicySettings:
    """`core.security.*`, as one typed value."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    hard_private: tuple[str, ...] = ()
    write_tools: tuple[str, ...] = ()
    network_tools: tuple[str, ...] = ()
    path_args: frozenset[str] = frozenset()
    read_roots: tuple[Path, ...] = ()
    write_roots: tuple[Path, ...] = ()
    network: bool = True
    internal_channels: frozenset[str] = field(default_factory=frozenset)


_NAMES_KEPT = 4096


@dataclass(frozen=True, slots=True)
class _Listed:
    """What the kernel's lists say of one tool name."""

    denied: str | None
    allowed: bool
    hard_private: bool
    network: bool
    write: bool


def _first(name: str, patterns: Iterable[str]) -> str | None:
    for pattern in patterns:
        if fnmatchcase(name, pattern):
            return pattern
    return None


class ToolPolicy:
    def __init__(self, settings: PolicySettings) -> None:
        self.settings = settings
        self.sandbox = PathSandbox(settings.read_roots, settings.write_roots)
        # What the kernel's pattern lists say of a tool name, per name: the lists are fixed
        # for this object's life (settings build a new policy), and matching them all again
        # was a fifth of a tool call's firewall cost.
        self._by_name: dict[str, _Listed] = {}

    def decide(self, tool: str, arguments: Mapping[str, Any], principal: Principal) -> str | None:
        """None when the call may run; else why not, for the model to read."""
        listed = self._listed(tool)
        profile = principal.profile
        where = SecuritySettings.prefix
        if listed.denied is not None:
            return f"tool {tool} is denied by the deny list of {where} (pattern {listed.denied!r})"
        if profile is not None:
            pattern = _first(tool, profile.deny)
            if pattern is not None:
                return (
                    f"tool {tool} is denied by the deny list of profile {profile.name!r} "
                    f"(pattern {pattern!r})"
                )
        if not listed.allowed:
            return f"tool {tool} is not in the allow list of {where}"
        if profile is not None and profile.allow and _first(tool, profile.allow) is None:
            return f"tool {tool} is not in the allow list of profile {profile.name!r}"
        granted = profile is not None and _first(tool, profile.grant) is not None
        if not principal.internal and not granted and listed.hard_private:
            return (
                f"tool {tool} is private to the owner; {principal.name!r} may not use it. "
                "Answer without it"
            )
        if not self.network_for(principal):
            if listed.network:
                return f"tool {tool} needs the network, which is switched off for this input"
            url = _find_url(arguments)
            if url is not None:
                return (
                    f"argument {url!r} of {tool} is a network address, and the network is "
                    "switched off for this input"
                )
        return self._paths(tool, arguments, listed.write)

    def _listed(self, tool: str) -> _Listed:
        listed = self._by_name.get(tool)
        if listed is None:
            s = self.settings
            listed = _Listed(
                _first(tool, s.deny),
                not s.allow or _first(tool, s.allow) is not None,
                _first(tool, s.hard_private) is not None,
                _first(tool, s.network_tools) is not None,
                _first(tool, s.write_tools) is not None,
            )
            if len(self._by_name) >= _NAMES_KEPT:
                self._by_name.clear()  # names come from registered tools; this is a backstop
            self._by_name[tool] = listed
        return listed

    def network_for(self, principal: Principal) -> bool:
        """The network switch as it stands for `principal`'s inputs."""
        profile = principal.profile
        return self.settings.network and (profile is None or profile.network is not False)

    def _paths(self, tool: str, arguments: Mapping[str, Any], write: bool) -> str | None:
        paths = self.settings.path_args
        modes: dict[str, int | None] = {}
        for key, value in arguments.items():
            if key not in paths:
                continue
            for item in value if isinstance(value, list) else [value]:
                try:
                    self.sandbox.check_text(item, write=write, modes=modes)
                except PathRefused as exc:
                    return f"{tool} was not run: argument {key!r}: {exc}"
        return None


def _find_url(arguments: Mapping[str, Any]) -> str | None:
    for key, value in arguments.items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and _URL.match(item):
                return key
    return None
