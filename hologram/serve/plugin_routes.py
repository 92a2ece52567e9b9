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
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hologram.plugins import PackageError, PluginLoadError, State, read_package
from hologram.serve.bodies import ApiError, read_body
from hologram.state import KernelState

PACKAGE_KINDS = frozenset({"application/zip", "application/octet-stream", "application/x-hmap"})


def plugin_routes(state: KernelState, prefix: str) -> list[Route]:
    changing = asyncio.Lock()

    def registry() -> Any:
        if state.plugins is None:
            raise ApiError(404, "this kernel has no plugin host")
        return state.plugins

    def row(name: str) -> dict[str, Any]:
        return next(r for r in registry().status() if r["name"] == name)

    async def list_plugins(request: Request) -> Response:
        plugins = registry()
        return JSONResponse({"plugins": plugins.status(), "refused": dict(plugins.refused)})

    async def install(request: Request) -> Response:
        plugins = registry()
        replace = request.query_params.get("replace", "false").lower()
        if replace not in ("true", "false"):
            raise ApiError(400, f"query parameter 'replace' must be true or false, got {replace!r}")
        limit = plugins.settings.max_package_bytes
        data = await read_body(request, limit, PACKAGE_KINDS, "a .hmap package (a zip archive)")
        async with changing:
            try:
                entry = await plugins.install_package(data, replace=replace == "true")
            except PackageError as exc:
                raise ApiError(400, f"package refused: {exc}") from None
            except PluginLoadError:
                # Installed, but its start failed: the folder stays, so the client is told
                # both, and can fix the setting or facility it lacks and enable it later.
                package = await asyncio.to_thread(read_package, data, max_bytes=limit)
                return JSONResponse(
                    {"installed": True, "started": False, **row(package.manifest.name)},
                    status_code=201,
                )
        return JSONResponse(
            {"installed": True, "started": entry.state is State.RUNNING, **row(entry.name)},
            status_code=201,
        )

    async def uninstall(request: Request) -> Response:
        plugins = registry()
        name = request.path_params["name"]
        async with changing:
            try:
                await plugins.uninstall(name)
            except KeyError as exc:
                raise ApiError(404, str(exc.args[0]) if exc.args else str(exc)) from None
            except PermissionError as exc:
                raise ApiError(403, str(exc)) from None
        return JSONResponse({"uninstalled": name})

    return [
        Route(f"{prefix}/plugins", list_plugins, methods=["GET"]),
        Route(f"{prefix}/plugins", install, methods=["POST"]),
        Route(f"{prefix}/plugins/{{name}}", uninstall, methods=["DELETE"]),
    ]
