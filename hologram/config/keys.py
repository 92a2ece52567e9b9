"""What a configuration key may look like, and what a value of each key may be."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

CORE_KEY = re.compile(r"^core(\.[A-Za-z0-9_-]+)+$")
PLUGIN_KEY = re.compile(r"^plugin\.([a-z][a-z0-9_]*)(\.[A-Za-z0-9_-]+)+$")
SECRET_SUFFIXES = ("api_key", "token", "secret", "password")


class ConfigError(Exception):
    """A key or value the registry refuses, or a store it cannot read."""


@dataclass(frozen=True, slots=True)
class Setting:
    """A key with its default and what it means (shown by `config list` and the settings API)."""

    key: str
    default: Any
    doc: str = ""


def namespace(key: str) -> str | None:
    """The plugin a key belongs to, or None for a core key; refuses any other key."""
    if not isinstance(key, str):
        raise ConfigError(f"configuration keys are strings, not {type(key).__name__}")
    if CORE_KEY.match(key):
        return None
    match = PLUGIN_KEY.match(key)
    if match:
        return match.group(1)
    raise ConfigError(
        f"invalid configuration key {key!r}: keys are 'core.<name>[.<name>…]' or "
        "'plugin.<plugin>.<name>[.<name>…]', plugin names in lower case "
        "(letters, digits, '_'), other parts letters, digits, '_' or '-'"
    )


def is_core_key(key: str) -> bool:
    """A key of the kernel's own (`core.*`), as opposed to a plugin's."""
    return key.startswith("core.")


def is_secret(key: str) -> bool:
    return key.rsplit(".", 1)[-1].endswith(SECRET_SUFFIXES)


def mask(key: str, value: Any) -> Any:
    if is_secret(key) and value:
        return "****"
    return value


def section_of(key: str) -> str:
    """The namespace a key is shown under: `core.<section>` or `plugin.<plugin>`."""
    parts = key.split(".")
    if parts[0] == "core" and len(parts) <= 2:
        return "core"
    return ".".join(parts[:2])


def kind_of(default: Any) -> str:
    """The type a key's values have, named as its default's (`any` without a default)."""
    return "any" if default is None else _type_name(default)


def _type_name(value: Any) -> str:
    return {bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "dict"}.get(
        type(value), type(value).__name__
    )


def check_value(key: str, value: Any, default: Any) -> Any:
    """The value to store for `key`: checked against the type of its default, when it has one,
    and always JSON-representable."""
    try:
        json.dumps(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{key}: the value cannot be stored as JSON ({exc})") from None
    if default is None:
        return value
    if isinstance(default, bool) or isinstance(value, bool):
        ok = isinstance(value, bool) and isinstance(default, bool)
    elif isinstance(default, float):
        ok = isinstance(value, int | float)
        value = float(value) if ok else value
    else:
        ok = type(value) is type(default)
    if not ok:
        raise ConfigError(f"{key} expects {_type_name(default)}, got {_type_name(value)} {value!r}")
    return value


def coerce_text(key: str, text: str, default: Any) -> Any:
    """A value typed as text (environment variable, command line) turned into the key's type."""
    if default is None or isinstance(default, str):
        return text
    if isinstance(default, bool):
        lowered = text.strip().lower()
        if lowered in {"1", "true", "yes", "on"}:
            return True
        if lowered in {"0", "false", "no", "off"}:
            return False
        raise ConfigError(f"{key} expects bool (true/false), got {text!r}")
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError:
        raise ConfigError(f"{key} expects {_type_name(default)}, got {text!r}") from None
    return check_value(key, parsed, default)
