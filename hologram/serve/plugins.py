"""Plugins over HTTP: list them, install a `.hmap` sent as the request body, enable,
disable, reload and uninstall one. Every change is the registry's `changes`, the code the
agent's pluginmgr tools run too, so both doors refuse the same things with the same words.

The package is the raw body (`curl --data-binary @x.hmap -H 'content-type: application/zip'`),
not a multipart form: one file is all an install takes, and a raw body needs no form parser.
Its size limit is the registry's own `core.plugins.max_package_bytes`, read at each request,
so the HTTP limit and the registry's agree and a change of the setting takes effect at once.
Every check of the archive (zip slip, bombs, manifest) is the registry's; this module only
maps its refusals to status codes. Changes run one at a time, whichever door they come by.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, TypedDict, cast

from starlette.requests import Request
from starlette.responses import Response

from hologram.plugins import ChangeRefused, PluginAction, PluginRegistry, Why
from hologram.sdk import Param
from hologram.serve.bodies import ApiError, read_body
from hologram.serve.context import context
from hologram.serve.endpoint import endpoint, reply
from hologram.serve.params import read_params

STATUS = {Why.UNKNOWN: 404, Why.PROTECTED: 403, Why.PACKAGE: 400, Why.START: 409}
"""How each refusal of `hologram.plugins.changes` answers over HTTP."""
PACKAGE_KINDS = frozenset({"application/zip", "application/octet-stream", "application/x-hmap"})


class PluginRow(TypedDict):
    """One plugin as the registry reports it (`PluginRegistry.status`)."""

    name: str
    kind: str
    origin: str
    state: str
    version: str
    tools: list[str]
    pid: int | None
    restarts: int
    error: str | None
    flags: list[str]


class InstalledPlugin(PluginRow):
    """A plugin just installed, and whether it started."""

    installed: bool
    started: Annotated[bool, Param("whether it runs now (its manifest says auto_start)")]


@dataclass(frozen=True, slots=True)
class PluginList:
    """Every plugin, and the folders and packages refused."""

    plugins: list[PluginRow]
    refused: Annotated[dict[str, str], Param("folder or package -> why it was not taken")]


@dataclass(frozen=True, slots=True)
class Uninstalled:
    """The plugin uninstalled."""

    uninstalled: str


@dataclass(frozen=True, slots=True)
class InstallQuery:
    replace: Annotated[bool, Param("replace an installed plugin of the same name")] = False


@dataclass(frozen=True, slots=True)
class PluginPath:
    name: Annotated[str, Param("the plugin's name")]


def registry(request: Request) -> PluginRegistry:
    plugins = context(request).kernel.state.plugins
    if plugins is None:
        raise ApiError(404, "this kernel has no plugin host")
    return plugins


def rows(plugins: PluginRegistry) -> list[PluginRow]:
    return cast(list[PluginRow], plugins.status())


def _row(plugins: PluginRegistry, name: str) -> PluginRow:
    return next(r for r in rows(plugins) if r["name"] == name)


@endpoint("GET", "/plugins", tag="plugins", result=PluginList, errors=(404,))
async def list_plugins(request: Request) -> Response:
    """Every plugin with its state, tools and health, and the packages refused."""
    plugins = registry(request)
    return reply(PluginList(rows(plugins), dict(plugins.refused)))


@endpoint(
    "POST",
    "/plugins",
    tag="plugins",
    status=201,
    result=InstalledPlugin,
    body=bytes,
    body_media=("application/zip", "application/octet-stream", "application/x-hmap"),
    query=InstallQuery,
    errors=(404, 409),
)
async def install_plugin(request: Request) -> Response:
    """Install a .hmap package sent as the body; it starts if its manifest says auto_start
    (size limit: the setting core.plugins.max_package_bytes)."""
    plugins = registry(request)
    replace = read_params(InstallQuery, request.query_params, "query parameter").replace
    limit = plugins.settings.max_package_bytes
    data = await read_body(request, limit, PACKAGE_KINDS, "a .hmap package (a zip archive)")
    try:
        done = await plugins.changes.install(data, replace=replace)
    except ChangeRefused as exc:
        raise ApiError(STATUS[exc.why], exc.message) from None
    # Installed but not started is still a 201: the folder stays, and the client can fix
    # the setting or facility it lacks and enable it later.
    row = _row(plugins, done.entry.name)
    return reply(InstalledPlugin(**row, installed=True, started=done.started), 201)


@endpoint(
    "DELETE",
    "/plugins/{name}",
    tag="plugins",
    result=Uninstalled,
    path_params=PluginPath,
    errors=(403, 404),
)
async def uninstall_plugin(request: Request) -> Response:
    """Stop an installed plugin and delete its folder (its settings stay)."""
    plugins = registry(request)
    name = read_params(PluginPath, request.path_params, "path parameter").name
    await _apply(plugins, PluginAction.UNINSTALL, name)
    return reply(Uninstalled(name))


async def _apply(plugins: PluginRegistry, action: PluginAction, name: str) -> None:
    try:
        await plugins.changes.apply(action, name)
    except ChangeRefused as exc:
        raise ApiError(STATUS[exc.why], exc.message) from None


async def _changed(request: Request, action: PluginAction) -> Response:
    plugins = registry(request)
    name = read_params(PluginPath, request.path_params, "path parameter").name
    await _apply(plugins, action, name)
    return reply(_row(plugins, name))


CHANGE: dict[str, Any] = {
    "tag": "plugins",
    "result": PluginRow,
    "path_params": PluginPath,
    "errors": (403, 404, 409),
}


@endpoint("POST", "/plugins/{name}/enable", **CHANGE)
async def enable_plugin(request: Request) -> Response:
    """Start a stopped or failed plugin; 409 with its error when it does not start."""
    return await _changed(request, PluginAction.ENABLE)


@endpoint("POST", "/plugins/{name}/disable", **CHANGE)
async def disable_plugin(request: Request) -> Response:
    """Stop a plugin; its tools go away until it is enabled again. A plugin of the
    failback chain (core.agent.failback_plugins) is refused with a 403."""
    return await _changed(request, PluginAction.DISABLE)


@endpoint("POST", "/plugins/{name}/reload", **CHANGE)
async def reload_plugin(request: Request) -> Response:
    """Stop a plugin, read its folder again (manifest and code), start it."""
    return await _changed(request, PluginAction.RELOAD)
