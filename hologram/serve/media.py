"""Media by digest: the stored bytes of an image an input, a tool or memory refers to."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated

from starlette.requests import Request
from starlette.responses import Response

from hologram.media import MediaError
from hologram.sdk import Param
from hologram.serve.bodies import ApiError
from hologram.serve.context import context
from hologram.serve.endpoint import endpoint

DIGEST = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class MediaPath:
    digest: Annotated[str, Param("the media's sha256, 64 lower-case hex digits")]


@endpoint(
    "GET",
    "/media/{digest}",
    tag="media",
    result=bytes,
    path_params=MediaPath,
    errors=(404, 500),
    result_media="application/octet-stream",
)
async def get_media(request: Request) -> Response:
    """The stored bytes, with the type sniffed when they were stored, and their digest as
    ETag (the bytes of a digest never change)."""
    digest = str(request.path_params.get("digest", ""))
    if not DIGEST.fullmatch(digest):
        raise ApiError(404, f"no stored media has digest {digest!r}: a digest is 64 hex digits")
    store = context(request).kernel.state.media
    if store is None:
        raise ApiError(404, "this kernel has no media store")
    try:
        ref = store.ref(digest)
        data = await store.aget(digest)
    except MediaError as exc:
        raise ApiError(404 if exc.status == 404 else 500, str(exc)) from None
    etag = f'"{digest}"'
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers={"ETag": etag})
    return Response(data, media_type=ref.mime, headers={"ETag": etag})
