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


def _first(name: str, patterns: Iterable[str]) -> str | None:
    for pattern in patterns:
        if fnmatchcase(name, pattern):
            return pattern
    return None


class ToolPolicy:
    def __init__(self, settings: PolicySettings) -> None:
        self.settings = settings
        self.sandbox = PathSandbox(settings.read_roots, settings.write_roots)

    def decide(self, tool: str, arguments: Mapping[str, Any], principal: Principal) -> str | None:
        """None when the call may run; else why not, for the model to read."""
        s = self.settings
        profile = principal.profile
        lists = [(SecuritySettings.prefix, s.allow, s.deny)]
        if profile is not None:
            lists.append((f"profile {profile.name!r}", profile.allow, profile.deny))
        for where, _, deny in lists:
            pattern = _first(tool, deny)
            if pattern is not None:
                return f"tool {tool} is denied by the deny list of {where} (pattern {pattern!r})"
        for where, allow, _ in lists:
            if allow and _first(tool, allow) is None:
                return f"tool {tool} is not in the allow list of {where}"
        granted = profile is not None and _first(tool, profile.grant) is not None
        if not principal.internal and not granted and _first(tool, s.hard_private) is not None:
            return (
                f"tool {tool} is private to the owner; {principal.name!r} may not use it. "
                "Answer without it"
            )
        if not self.network_for(principal):
            if _first(tool, s.network_tools) is not None:
                return f"tool {tool} needs the network, which is switched off for this input"
            url = _find_url(arguments)
            if url is not None:
                return (
                    f"argument {url!r} of {tool} is a network address, and the network is "
                    "switched off for this input"
                )
        return self._paths(tool, arguments)

    def network_for(self, principal: Principal) -> bool:
        """The network switch as it stands for `principal`'s inputs."""
        profile = principal.profile
        return self.settings.network and (profile is None or profile.network is not False)

    def _paths(self, tool: str, arguments: Mapping[str, Any]) -> str | None:
        paths = self.settings.path_args
        write = _first(tool, self.settings.write_tools) is not None
        for key, value in arguments.items():
            if key not in paths:
                continue
            for item in value if isinstance(value, list) else [value]:
                try:
                    self.sandbox.check(item, write=write)
                except PathRefused as exc:
                    return f"{tool} was not run: argument {key!r}: {exc}"
        return None


def _find_url(arguments: Mapping[str, Any]) -> str | None:
    for key, value in arguments.items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and _URL.match(item):
                return key
    return None
