"""Plugins over HTTP: list them, install a `.hmap` sent as the request body, uninstall one.

The package is the raw body (`curl --data-binary @x.hmap -H 'content-type: application/zip'`),
not a multipart form: one file is all an install takes, and a raw body needs no form parser.
Its size limit is the registry's own `core.plugins.max_package_bytes`, read at each request,
so the HTTP limit and the registry's agree and a change of the setting takes effect at once.
Every check of the archive (zip slip, bombs, manifest) is the registry's; this module only
maps its refusals to status codes. Installs and uninstalls run one at a time.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Annotated, TypedDict, cast

from starlette.requests import Request
from starlette.responses import Response

from hologram.plugins import PackageError, PluginLoadError, State, read_package
from hologram.plugins.registry import PluginRegistry
from hologram.sdk.schema import Param
from hologram.serve.bodies import ApiError, read_body
from hologram.serve.context import context
from hologram.serve.endpoint import endpoint, reply
from hologram.serve.params import read_params

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
    errors=(404,),
)
async def install_plugin(request: Request) -> Response:
    """Install a .hmap package sent as the body; it starts if its manifest says auto_start
    (size limit: the setting core.plugins.max_package_bytes)."""
    plugins = registry(request)
    replace = read_params(InstallQuery, request.query_params, "query parameter").replace
    limit = plugins.settings.max_package_bytes
    data = await read_body(request, limit, PACKAGE_KINDS, "a .hmap package (a zip archive)")
    async with context(request).plugin_changes:
        try:
            entry = await plugins.install_package(data, replace=replace)
        except PackageError as exc:
            raise ApiError(400, f"package refused: {exc}") from None
        except PluginLoadError:
            # Installed, but its start failed: the folder stays, so the client is told
            # both, and can fix the setting or facility it lacks and enable it later.
            package = await asyncio.to_thread(read_package, data, max_bytes=limit)
            row = _row(plugins, package.manifest.name)
            return reply(InstalledPlugin(**row, installed=True, started=False), 201)
    started = entry.state is State.RUNNING
    return reply(InstalledPlugin(**_row(plugins, entry.name), installed=True, started=started), 201)


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
    async with context(request).plugin_changes:
        try:
            await plugins.uninstall(name)
        except KeyError as exc:
            raise ApiError(404, str(exc.args[0]) if exc.args else str(exc)) from None
        except PermissionError as exc:
            raise ApiError(403, str(exc)) from None
    return reply(Uninstalled(name))
