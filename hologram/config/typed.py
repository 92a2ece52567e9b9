"""Typed settings: one frozen dataclass per section of keys, read from the registry.

A section declares its keys once, as fields: the key is the section's `prefix` and the
field's name (or the `key` given to `setting`), the default is the field's, and so is the
type a value must have. The registry registers the defaults from it, `read` gives an
instance with the current values, and `Live` keeps one current as settings change:

    @dataclass(frozen=True)
    class AgentSettings:
        prefix: ClassVar[str] = "core.agent"
        max_tool_rounds: int = setting(10, "tool-loop rounds before a turn must answer")

    settings = Live(config, AgentSettings)
    settings.current.max_tool_rounds

A section whose keys repeat under a name (`core.llm.sources.<name>.*`) puts `{name}` in its
prefix and is read with `name=…`.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Callable
from dataclasses import MISSING, Field, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from hologram.config.keys import ConfigError, Setting


class Section(Protocol):
    """A settings section: a dataclass (`__dataclass_fields__` marks one) with its key prefix."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]
    prefix: ClassVar[str]


S = TypeVar("S", bound=Section)


def setting(default: Any, doc: str = "", *, key: str = "") -> Any:
    """A field of a settings section. `key` names the key when the field name cannot:
    relative to the section's prefix, or whole when it starts with "core."."""
    metadata = {"doc": doc, "key": key}
    if isinstance(default, list | dict):
        return field(default_factory=lambda: type(default)(default), metadata=metadata)
    return field(default=default, metadata=metadata)


def _default(f: Field[Any]) -> Any:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    raise TypeError(f"setting {f.name} has no default")


def key_of(section: type[Section], field_name: str, /, **parts: str) -> str:
    """The key of field `name` of `section`."""
    for name, key, _, _ in _layout(section, tuple(sorted(parts.items()))):
        if name == field_name:
            return key
    raise KeyError(f"{section.__name__} has no setting {field_name!r}")


@functools.lru_cache(maxsize=1024)
def _layout(
    section: type[Section], parts: tuple[tuple[str, str], ...]
) -> tuple[tuple[str, str, Field[Any], Any], ...]:
    """Each field's name, key, declaration and type hint. Sections are read on every model
    call, a dozen a turn; working this out once per section (and name) instead of per read
    takes about 0.3 ms off each read."""
    hints = typing.get_type_hints(section)
    prefix = section.prefix.format(**dict(parts))
    layout = []
    for f in dataclasses.fields(section):
        relative = f.metadata.get("key") or f.name
        key = relative if relative.startswith("core.") else f"{prefix}.{relative}"
        layout.append((f.name, key, f, hints[f.name]))
    return tuple(layout)


def declared(section: type[Section], **parts: str) -> tuple[Setting, ...]:
    """The keys of `section` with their defaults and docs, for the registry."""
    return tuple(
        Setting(key_of(section, f.name, **parts), _stored(_default(f)), f.metadata.get("doc", ""))
        for f in dataclasses.fields(section)
    )


def _stored(value: Any) -> Any:
    # A section holds tuples (it is frozen); the registry stores JSON, whose arrays are lists.
    return list(value) if isinstance(value, tuple) else value


class Reader(Protocol):
    def get(self, key: str, default: Any = None) -> Any: ...


def read(config: Reader, section: type[S], **parts: str) -> S:
    """The section's current values. A stored value of the wrong type is refused, naming
    its key (the registry checks types on write; this catches a hand-edited file)."""
    values: dict[str, Any] = {}
    for name, key, declared_field, hint in _layout(section, tuple(sorted(parts.items()))):
        value = config.get(key, _stored(_default(declared_field)))
        values[name] = _typed(key, value, hint)
    return section(**values)


def _typed(key: str, value: Any, hint: Any) -> Any:
    kind = typing.get_origin(hint) or hint
    if kind is tuple:
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{key} is {value!r}, not a list")
        return tuple(value)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if kind in (int, float) and isinstance(value, bool):
        raise ConfigError(f"{key} is {value!r}, not a number")
    if kind in (bool, int, float, str, list, dict) and not isinstance(value, kind):
        raise ConfigError(f"{key} is {value!r}, not {kind.__name__}")
    return value


class Watchable(Reader, Protocol):
    def watch(self, changed: Callable[[str], None]) -> Callable[[], None]: ...


class Live(Generic[S]):
    """A section kept current: read again whenever one of its keys changes."""

    def __init__(self, config: Watchable, section: type[S], **parts: str) -> None:
        self._config = config
        self._section = section
        self._parts = parts
        self._keys = {key for _, key, _, _ in _layout(section, tuple(sorted(parts.items())))}
        self.current: S = read(config, section, **parts)
        self._unwatch = config.watch(self._changed)

    def _changed(self, key: str) -> None:
        if key in self._keys:
            self.current = read(self._config, self._section, **self._parts)

    def close(self) -> None:
        self._unwatch()
