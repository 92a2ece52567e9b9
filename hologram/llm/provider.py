"""The provider interface and its one implementation (spec: Provider, LuaAdaptedProvider).

    CompletionRequest -> unified JSON -> adapter.transform_request -> HTTP POST
      (base_url + adapter.endpoint, adapter.headers + the source's key)
    -> adapter.transform_response(body, {status, headers}) -> CompletionResponse

An HTTP error status is classified by the status, then by the adapter's transform_error
(which reads what the provider put in the body: a spent quota, a prompt too long, Gemini's
RetryInfo); the delay the provider asked for (Retry-After, retry-after-ms) travels on the
error. Every failure leaves as a `ProviderError` whose kind tells the manager what to do
with the source; a prompt too long leaves as `ContextTooLong`.

Cancelling the task that awaits `chat` cancels the HTTP request inside httpx, which closes
the connection instead of returning it to the pool: the server sees it go at once.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import httpx

from hologram.llm import netio
from hologram.llm.adapter import LuaAdapter
from hologram.llm.budget import context_window
from hologram.llm.errors import AdapterError, ContextTooLong, FailureKind, ProviderError
from hologram.llm.messages import CompletionRequest, CompletionResponse
from hologram.llm.streaming import (
    ChunkError,
    NDJSONFramer,
    SSEFramer,
    StreamAssembler,
    StreamChunk,
    read_chunk,
    read_error,
)

log = logging.getLogger(__name__)

LUA_HTTP_MAX_BYTES = 4 * 1024 * 1024


@runtime_checkable
class Provider(Protocol):
    """A model behind one source."""

    name: str

    @property
    def max_context_tokens(self) -> int: ...

    @property
    def accepts_images(self) -> bool:
        """Whether the model reads images; one that does not is sent text notes instead."""
        ...

    async def chat(self, request: CompletionRequest) -> CompletionResponse: ...

    def chat_stream(self, request: CompletionRequest) -> AsyncGenerator[StreamChunk, None]: ...


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
    accepts_images: bool | None = None
    """Whether the source's model reads images; None: as its adapter declares."""

    def __repr__(self) -> str:  # never show the key
        key = "****" if self.api_key else "''"
        return (
            f"SourceConfig(name={self.name!r}, adapter={self.adapter!r}, "
            f"base_url={self.base_url!r}, api_key={key}, model={self.model!r})"
        )


def _excerpt(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


_STATUS_KINDS = {
    401: (FailureKind.AUTH, "the API key was refused"),
    403: (FailureKind.AUTH, "the API key was refused"),
    402: (FailureKind.QUOTA, "payment required: the account's credit is spent"),
    429: (FailureKind.RATE_LIMITED, "rate limited"),
    529: (FailureKind.OVERLOADED, "overloaded"),
}


def status_error(
    source: str, status: int, body: str, retry_after: float | None = None
) -> ProviderError:
    """The error for an HTTP error status, classified by the status alone."""
    detail = _excerpt(body) or "(empty body)"
    if status in _STATUS_KINDS:
        kind, what = _STATUS_KINDS[status]
    elif status >= 500:
        kind, what = FailureKind.SERVER, "server error"
    else:
        kind, what = FailureKind.REJECTED, "the request was refused"
    return ProviderError(source, kind, f"HTTP {status} ({what}): {detail}", status, retry_after)


def retry_after_of(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the provider asked to wait: `retry-after-ms` (OpenAI), else `Retry-After` in
    seconds or as an HTTP date. None when it did not say (or said nonsense)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)


STREAM_END_WAIT_S = 0.25
"""How long the rest of a stream (usually only the end of its chunked body) is waited for
after the chunk that ends the answer."""


async def _drain(payloads: AsyncIterator[str]) -> None:
    """Read a stream to its end after the answer's last chunk, so its connection goes back
    to the pool: a response closed early closes the connection, and the next turn would pay
    a new one (the connect is a millisecond or more of its time to first token). A server
    that keeps the stream open past the end is cut, as before, after a short wait."""
    try:
        async with asyncio.timeout(STREAM_END_WAIT_S):
            async for _ in payloads:
                pass
    except (TimeoutError, httpx.HTTPError) as exc:
        log.debug("the stream went on after its last chunk (%r); its connection is closed", exc)


def _raise(source: str, error: ChunkError, status: int | None = None) -> None:
    kind = ContextTooLong if error.kind is FailureKind.CONTEXT_LENGTH else ProviderError
    raise kind(source, error.kind, error.message, status, error.retry_after)


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
        # A model call goes where the source says, never through an environment proxy.
        self._transport = transport or netio.transport()
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(source.timeout_s, connect=min(source.timeout_s, 10.0)),
            transport=self._transport,
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
    def accepts_images(self) -> bool:
        """Whether this source's model reads images: the source's setting, else what its
        adapter declares."""
        if self.source.accepts_images is not None:
            return self.source.accepts_images
        return self.adapter.accepts_images

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
        unified = request.to_unified(self.source.model, stream=stream)
        # The window the kernel plans the prompt for: a server that sizes its context per
        # request (Ollama's num_ctx, 2048 or 4096 by default) would otherwise cut the prompt.
        unified["context_window"] = self.max_context_tokens
        try:
            body = await self.adapter.transform_request(unified, self._lua_http)
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
            raise await self._status_error(response.status_code, response.headers, text)
        return await self._read_answer(request, text, response)

    async def _read_answer(
        self, request: CompletionRequest, text: str, response: httpx.Response
    ) -> CompletionResponse:
        meta = {"status": response.status_code, "headers": dict(response.headers)}
        try:
            unified = await self.adapter.transform_response(text, self._lua_http, meta)
            if isinstance(unified, dict) and unified.get("error") is not None:
                error = read_error(unified["error"], self.adapter.name, "transform_response")
                _raise(self.name, error, response.status_code)
            result = CompletionResponse.from_unified(unified, self.adapter.name)
        except AdapterError as exc:
            raise self._bad_response(text, exc) from exc
        result.source = self.name
        result.model = result.model or request.model or self.source.model
        return result

    async def _status_error(
        self, status: int, headers: Mapping[str, str], body: str
    ) -> ProviderError:
        """The status's error, refined by what the adapter reads in the body."""
        delay = retry_after_of(headers)
        error = status_error(self.name, status, body, delay)
        meta = {"status": status, "headers": dict(headers), "retry_after": delay}
        try:
            read = await self.adapter.transform_error(body, meta, self._lua_http)
            refined = (
                None if read is None else read_error(read, self.adapter.name, "transform_error")
            )
        except AdapterError as exc:
            log.warning("%s: transform_error failed, classing by status: %s", self.name, exc)
            refined = None
        if refined is not None:
            kind = refined.kind
            delay = refined.retry_after if refined.retry_after is not None else delay
            message = f"HTTP {status} ({kind}): {refined.message}"
            error = ProviderError(self.name, kind, message, status, delay)
        if error.kind is FailureKind.CONTEXT_LENGTH:
            return ContextTooLong(self.name, error.kind, error.reason, status, error.retry_after)
        return error

    async def chat_stream(self, request: CompletionRequest) -> AsyncGenerator[StreamChunk, None]:
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
            response = await self._open_stream(url, body.encode())
            try:
                if response.status_code >= 400:
                    await response.aread()
                    raise await self._status_error(
                        response.status_code, response.headers, response.text
                    )
                if _whole_body(response):
                    # A server that ignores "stream" answers with one JSON body: one answer.
                    await response.aread()
                    whole = await self._read_answer(request, response.text, response)
                    assembler.take(whole)
                    if whole.content or whole.reasoning_content:
                        yield StreamChunk(whole.content, whole.reasoning_content)
                    payloads = _no_payloads()
                else:
                    payloads = _payloads(response, self.adapter.stream_format)
                async for payload in payloads:
                    try:
                        raw = await self.adapter.transform_stream_chunk(payload, self._lua_http)
                        chunk = read_chunk(raw, self.adapter.name)
                    except AdapterError as exc:
                        raise self._bad_response(payload, exc) from exc
                    if chunk is None:
                        continue
                    if chunk.error is not None:
                        _raise(self.name, chunk.error)
                    assembler.feed(chunk)
                    if chunk.done:
                        await _drain(payloads)
                        break
                    if not chunk.empty:
                        # Yielded as soon as its frame is read: the frames after it in
                        # the same read wait until the consumer has taken this one.
                        yield chunk
            finally:
                await response.aclose()
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

    async def _open_stream(self, url: str, body: bytes) -> httpx.Response:
        """The streamed answer's response, its body not read yet. Sent through the client's
        transport: the client's own layers (auth and redirect flows, event hooks, the
        cookie jar's parse of every answer) cost a few hundred microseconds of the time
        to first token when run cold, and a model call uses none of them. The request is
        still built by the client (its headers, timeouts and cookies), and a cookie the
        answer sets is still kept."""
        outgoing = self._client.build_request("POST", url, content=body, headers=self._headers)
        response = await self._transport.handle_async_request(outgoing)
        response.request = outgoing
        if "set-cookie" in response.headers:
            self._client.cookies.extract_cookies(response)
        return response

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


def _whole_body(response: httpx.Response) -> bool:
    kind = response.headers.get("content-type", "")
    return kind.startswith("application/json")


async def _payloads(response: httpx.Response, stream_format: str) -> AsyncIterator[str]:
    """The payloads of a streamed body, framed from its bytes as each read brings them."""
    # Both formats are UTF-8 by their specifications; a charset the server names anyway is
    # honoured, and only then parsed (httpx's parse of the header is ~50 µs run cold).
    kind = response.headers.get("content-type", "").lower()
    named = "charset" in kind and "utf-8" not in kind
    encoding = (response.encoding or "utf-8") if named else "utf-8"
    framer = SSEFramer(encoding) if stream_format == "sse" else NDJSONFramer(encoding)
    # The raw bytes when the server did not compress them (a layer fewer between the
    # socket and the adapter, for every frame).
    coded = response.headers.get("content-encoding", "identity").lower() != "identity"
    async for data in response.aiter_bytes() if coded else response.aiter_raw():
        for payload in framer.feed(data):
            yield payload
    for payload in framer.close():
        yield payload


async def _no_payloads() -> AsyncIterator[str]:
    return
    yield  # an empty async generator
