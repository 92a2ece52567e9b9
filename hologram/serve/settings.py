"""Settings: list them (secrets masked) by namespace, and store one, refused with the
registry's reason (an unknown key names the closest that exist: `check_known`, the check
every door a person sets settings through makes, cfgmgr and the command line too)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Annotated, Any

from starlette.requests import Request
from starlette.responses import Response

from hologram.config import (
    ConfigError,
    ConfigRegistry,
    is_secret,
    kind_of,
    mask,
    section_of,
)
from hologram.sdk import Param
from hologram.serve.bodies import ApiError, SettingText, SettingValue, read_json, setting_body
from hologram.serve.context import context
from hologram.serve.endpoint import endpoint, reply
from hologram.serve.params import read_params


@dataclass(frozen=True, slots=True)
class SettingEntry:
    """One setting: its value in force and its default (secrets as ****), where the value
    comes from, and what it means."""

    key: str
    value: Any
    default: Any
    source: Annotated[str, Param("default, stored or env")]
    doc: str
    secret: Annotated[bool, Param("a secret: its value is never sent, only set")]
    type: Annotated[str, Param("the type its values have: bool, int, float, str, list, dict, any")]
    namespace: Annotated[str, Param("its group on the page: core.<section> or plugin.<plugin>")]
    has_value: Annotated[bool, Param("whether it holds a value (for a secret: whether it is set)")]

    @classmethod
    def of(cls, config: ConfigRegistry, key: str) -> SettingEntry:
        entry = next(e for e in config.entries(key) if e.key == key)
        return cls(
            key=entry.key,
            value=mask(entry.key, entry.value),
            default=mask(entry.key, entry.default),
            source=entry.source,
            doc=entry.doc,
            secret=is_secret(entry.key),
            type=kind_of(entry.default),
            namespace=section_of(entry.key),
            has_value=entry.value not in (None, "", [], {}),
        )


@dataclass(frozen=True, slots=True)
class StoredSetting(SettingEntry):
    """The setting as now stored."""

    warning: Annotated[str | None, Param("set when the environment overrides it")] = None


@dataclass(frozen=True, slots=True)
class Namespace:
    """A group of keys: `core.<section>` or `plugin.<plugin>`."""

    name: str
    keys: Annotated[int, Param("how many keys it holds")]


@dataclass(frozen=True, slots=True)
class SettingsList:
    """The settings under a prefix, every namespace, and the plugin namespaces."""

    prefix: str
    settings: list[SettingEntry]
    plugins: Annotated[list[str], Param("the plugin namespaces that have settings")]
    namespaces: Annotated[list[Namespace], Param("every namespace, whatever the prefix")]


@dataclass(frozen=True, slots=True)
class SettingsQuery:
    prefix: Annotated[str, Param("only keys starting with this")] = ""


@endpoint("GET", "/settings", tag="settings", result=SettingsList, query=SettingsQuery)
async def get_settings(request: Request) -> Response:
    """Settings with their source and doc (secrets masked), and plugin namespaces."""
    prefix = read_params(SettingsQuery, request.query_params, "query parameter").prefix
    config = context(request).kernel.config
    entries = [SettingEntry.of(config, e.key) for e in config.entries(prefix)]
    plugins = sorted({e.key.split(".")[1] for e in config.entries("plugin.")})
    counts = Counter(section_of(e.key) for e in config.entries())
    namespaces = [Namespace(name, counts[name]) for name in sorted(counts)]
    return reply(SettingsList(prefix, entries, plugins, namespaces))


@endpoint("PUT", "/settings", tag="settings", result=StoredSetting, body=SettingValue | SettingText)
async def put_settings(request: Request) -> Response:
    """Store one setting; invalid keys and values are refused with the reason."""
    ctx = context(request)
    body = setting_body(await read_json(request, ctx.body_limit))
    config = ctx.kernel.config
    try:
        value = (
            _parsed(config, body.key, body.text) if isinstance(body, SettingText) else body.value
        )
        config.check_known(body.key)
        if is_secret(body.key) and value == mask(body.key, "x"):
            raise ApiError(400, f"{body.key} is a secret: send its real value, not the mask")
        await config.set(body.key, value)
    except ConfigError as exc:
        raise ApiError(400, str(exc)) from None
    shown = SettingEntry.of(config, body.key)
    warning = None
    if shown.source == "env":
        warning = "stored, but an environment variable overrides it for this run"
    return reply(StoredSetting(**_fields(shown), warning=warning))


def _parsed(config: ConfigRegistry, key: str, text: str) -> Any:
    try:
        return config.set_text(key, text)
    except (ValueError, RecursionError):
        # The registry reads the text of a typed key as JSON, and Python's reader refuses
        # integers past 4,300 digits (ValueError) and nesting past its recursion limit.
        raise ApiError(
            400, f"'text' is not a value {key} can hold: a number too long or nesting too deep"
        ) from None


def _fields(entry: SettingEntry) -> dict[str, Any]:
    return {name: getattr(entry, name) for name in SettingEntry.__dataclass_fields__}
