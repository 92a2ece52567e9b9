"""The provider interface and its one implementation (spec: Provider, LuaAdaptedProvider).

    CompletionRequest -> unified JSON -> adapter.transform_request -> HTTP POST
      (base_url + adapter.endpoint, adapter.headers + the source's key)
    -> adapter.transform_response -> CompletionResponse

Every failure leaves as a `ProviderError` whose kind tells the manager what to do with the
source. Cancelling the task that awaits `chat` cancels the HTTP request inside httpx, which
closes the connection instead of returning it to the pool: the server sees it go at once.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import httpx

from hologram.llm.adapter import LuaAdapter
from hologram.llm.budget import context_window
from hologram.llm.errors import AdapterError, FailureKind, ProviderError
from hologram.llm.messages import CompletionRequest, CompletionResponse
from hologram.llm.streaming import (
    StreamAssembler,
    StreamChunk,
    ndjson_lines,
    read_chunk,
    sse_data,
)

log = logging.getLogger(__name__)

LUA_HTTP_MAX_BYTES = 4 * 1024 * 1024


@runtime_checkable
class Provider(Protocol):
    """A model behind one source."""

    name: str

    @property
    def max_context_tokens(self) -> int: ...

    async def chat(self, request: CompletionRequest) -> CompletionResponse: ...

    def chat_stream(self, request: CompletionRequest) -> AsyncIterator[StreamChunk]: ...


@dataclass(frozen=True, slots=True)
class SourceConfig:
    """One source as configured under `core.llm.sources.<name>.*`."""

    name: str
    adapter: str
    base_url: str
    api_key: str = ""
    model: str = ""
    context_window: int = 0
    timeout_s: float = 120.0

    def __repr__(self) -> str:  # never show the key
        key = "****" if self.api_key else "''"
        return (
            f"SourceConfig(name={self.name!r}, adapter={self.adapter!r}, "
            f"base_url={self.base_url!r}, api_key={key}, model={self.model!r})"
        )


def _excerpt(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def status_error(source: str, status: int, body: str) -> ProviderError:
    """The error for an HTTP error status, classified for the manager."""
    detail = _excerpt(body) or "(empty body)"
    if status in (401, 403):
        kind, what = FailureKind.AUTH, "the API key was refused"
    elif status == 429:
        kind, what = FailureKind.RATE_LIMITED, "rate limited"
    elif status >= 500:
        kind, what = FailureKind.SERVER, "server error"
    else:
        kind, what = FailureKind.REJECTED, "the request was refused"
    return ProviderError(source, kind, f"HTTP {status} ({what}): {detail}", status)


class LuaAdaptedProvider:
    """One source: a Lua adapter and an HTTP client to its base URL."""

    def __init__(
        self,
        source: SourceConfig,
        adapter: LuaAdapter,
        *,
        lua_http_timeout: float = 10.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.source = source
        self.name = source.name
        self.adapter = adapter
        self.timeout = source.timeout_s
        self.lua_http_timeout = lua_http_timeout
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(source.timeout_s, connect=min(source.timeout_s, 10.0)),
            transport=transport,
            # A model call goes where the source says, never through an environment proxy.
            trust_env=False,
        )
        headers = {"content-type": "application/json", **adapter.headers}
        if source.api_key:
            headers[adapter.auth_header] = adapter.auth_prefix + source.api_key
        self._headers = headers
        self._window_found: tuple[int, str] | None = None

    @property
    def max_context_tokens(self) -> int:
        return self._window()[0]

    @property
    def context_window_origin(self) -> str:
        """Where `max_context_tokens` came from: "declared", "known" or "fallback" (a
        conservative guess; whoever asks decides whether and how often to warn)."""
        return self._window()[1]

    def _window(self) -> tuple[int, str]:
        if self._window_found is None:
            self._window_found = context_window(
                self.source.model, self.source.context_window, warn=False
            )
        return self._window_found

    def __repr__(self) -> str:
        return f"<LuaAdaptedProvider {self.name} {self.adapter.name} {self.source.base_url}>"

    async def aclose(self) -> None:
        await self._client.aclose()

    # ---- one call ----------------------------------------------------------------------------

    async def _body(self, request: CompletionRequest, stream: bool) -> tuple[str, str]:
        model = request.model or self.source.model
        try:
            body = await self.adapter.transform_request(
                request.to_unified(self.source.model, stream=stream), self._lua_http
            )
        except AdapterError as exc:
            raise ProviderError(self.name, FailureKind.ADAPTER, str(exc)) from exc
        return self.adapter.url(self.source.base_url, model, stream), body

    async def chat(self, request: CompletionRequest) -> CompletionResponse:
        url, body = await self._body(request, stream=False)
        try:
            async with asyncio.timeout(self.timeout):
                response = await self._client.post(
                    url, content=body.encode(), headers=self._headers
                )
        except (TimeoutError, httpx.TimeoutException):
            raise ProviderError(
                self.name, FailureKind.TIMEOUT, f"no answer from {url} within {self.timeout:g} s"
            ) from None
        except httpx.HTTPError as exc:
            raise ProviderError(
                self.name, FailureKind.CONNECTION, f"cannot reach {url}: {exc!r}"
            ) from exc
        text = response.text
        if response.status_code >= 400:
            raise status_error(self.name, response.status_code, text)
        try:
            unified = await self.adapter.transform_response(text, self._lua_http)
            result = CompletionResponse.from_unified(unified, self.adapter.name)
        except AdapterError as exc:
            raise self._bad_response(text, exc) from exc
        result.source = self.name
        result.model = result.model or request.model or self.source.model
        return result

    async def chat_stream(self, request: CompletionRequest) -> AsyncIterator[StreamChunk]:
        """Chunks as they arrive; the last one has `done` set and the assembled `response`."""
        if not self.adapter.streams:
            raise ProviderError(
                self.name,
                FailureKind.ADAPTER,
                f"adapter {self.adapter.name!r} has no transform_stream_chunk, so it cannot stream",
            )
        url, body = await self._body(request, stream=True)
        assembler = StreamAssembler(self.adapter.name)
        try:
            async with self._client.stream(
                "POST", url, content=body.encode(), headers=self._headers
            ) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise status_error(self.name, response.status_code, response.text)
                lines = response.aiter_lines()
                payloads = (
                    sse_data(lines)
                    if self.adapter.stream_format == "sse"
                    else (ndjson_lines(lines))
                )
                async for payload in payloads:
                    try:
                        raw = await self.adapter.transform_stream_chunk(payload, self._lua_http)
                        chunk = read_chunk(raw, self.adapter.name)
                    except AdapterError as exc:
                        raise self._bad_response(payload, exc) from exc
                    if chunk is None:
                        continue
                    assembler.feed(chunk)
                    if chunk.done:
                        break
                    if not chunk.empty:
                        yield chunk
        except httpx.TimeoutException:
            raise ProviderError(
                self.name,
                FailureKind.TIMEOUT,
                f"the stream from {url} stalled for {self.timeout:g} s",
            ) from None
        except httpx.HTTPError as exc:
            raise ProviderError(
                self.name, FailureKind.CONNECTION, f"stream from {url} broke: {exc!r}"
            ) from exc
        try:
            final = assembler.response(self.name)
        except AdapterError as exc:
            raise ProviderError(self.name, FailureKind.BAD_RESPONSE, str(exc)) from exc
        final.model = final.model or request.model or self.source.model
        yield StreamChunk(
            done=True,
            finish_reason=final.finish_reason,
            token_usage=final.token_usage,
            model=final.model,
            response=final,
        )

    def _bad_response(self, body: str, exc: AdapterError) -> ProviderError:
        try:
            json.loads(body)
        except json.JSONDecodeError as decode_error:
            message = (
                f"the HTTP body is not JSON ({decode_error.msg}; it starts "
                f"{_excerpt(body, 80)!r}); {exc}"
            )
        else:
            message = str(exc)
        return ProviderError(self.name, FailureKind.BAD_RESPONSE, message)

    # ---- http_get / http_post for the adapter ------------------------------------------------

    async def _lua_http(self, method: str, url: str, body: str | None) -> tuple[Any, Any]:
        """Serves the adapter's http_get/http_post: (body, status) or (nil, error text)."""
        try:
            async with asyncio.timeout(self.lua_http_timeout):
                response = await self._client.request(
                    method, url, content=None if body is None else body.encode()
                )
        except (TimeoutError, httpx.TimeoutException):
            return None, f"timed out after {self.lua_http_timeout:g} s"
        except httpx.HTTPError as exc:
            return None, f"{type(exc).__name__}: {exc}"
        if len(response.content) > LUA_HTTP_MAX_BYTES:
            return None, f"response larger than {LUA_HTTP_MAX_BYTES} bytes"
        return response.text, response.status_code
