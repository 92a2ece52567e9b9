"""The typed Python client of the service (`python -m hologram serve`), sync and async.

    with Client("http://127.0.0.1:8787") as hologram:
        result = hologram.say("hello")            # an InputResult: reply, ended_by, …
        for event in hologram.events(types=["agent_output"]):
            ...

    async with AsyncClient(url) as hologram:
        ack = await hologram.send("hello")        # an Ack: the journal id
        async for event in hologram.events():
            ...

Every method is one endpoint of the API: its path, its parameters and the type of its
answer are read from the endpoint's own declaration (`hologram.serve.endpoint`), and the
answer is built into the very dataclass the endpoint returns, so the client cannot drift
from the service. A refusal raises `HologramError` with the service's message. A request
whose keep-alive connection the server had just closed (`httpx.RemoteProtocolError`) is
sent once more: uvicorn closes only idle connections, so the first attempt was never read.
The event stream is an iterator that resumes from the last id it saw when the connection
breaks or the service reports an overflow, and ends when the service says it is closing.

The two clients are two faces of one implementation: each method is written once, in
`hologram.serve.calls`, as the request it makes and how its answer is read; `Client` sends
it and returns the answer, `AsyncClient` returns an awaitable of it. Only the I/O is twice.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
import typing
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Iterator
from typing import Any, ClassVar, Generic, ParamSpec, TypeVar, overload

import httpx

from hologram.serve import Call, EventStream, HologramError, Operations, StreamEvent

DEFAULT_URL = "http://127.0.0.1:8787"
RESUME_PAUSE_S = 0.5
STREAM_BROKEN = (httpx.RemoteProtocolError, httpx.ReadError)
"""The connection broke mid-stream: the stream resumes from the last id seen."""

P = ParamSpec("P")
T = TypeVar("T")
Transport = TypeVar("Transport", httpx.BaseTransport, httpx.AsyncBaseTransport)


class _Method(Generic[P, T]):
    """A method of both clients, made of the `Call` it sends: `Client` runs the call and
    returns its answer, `AsyncClient` returns the coroutine that awaits it."""

    def __init__(self, request: Callable[P, Call[T]]) -> None:
        self.request = request
        self.__doc__ = request.__doc__
        # What introspection (help(), Jupyter's `?`) shows: the answer's type, not the Call.
        answer = typing.get_args(typing.get_type_hints(request)["return"])[0]
        self.signature = inspect.signature(request).replace(return_annotation=answer)

    @overload
    def __get__(self, client: None, owner: type[Any]) -> _Method[P, T]: ...
    @overload
    def __get__(self, client: Client, owner: type[Any]) -> Callable[P, T]: ...
    @overload
    def __get__(
        self, client: AsyncClient, owner: type[Any]
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...
    def __get__(self, client: _Face[Any] | None, owner: type[Any]) -> Any:
        if client is None:
            return self
        request, send = self.request, client.call

        async def awaited(*args: P.args, **kwargs: P.kwargs) -> Any:
            return await send(request(*args, **kwargs))

        def returned(*args: P.args, **kwargs: P.kwargs) -> Any:
            return send(request(*args, **kwargs))

        method: Any = awaited if isinstance(client, AsyncClient) else returned
        functools.update_wrapper(method, request)
        method.__signature__ = self.signature  # what inspect reads
        return method


class _Face(Generic[Transport]):
    """What the two clients share: how each is made, and every method but the I/O."""

    _http_class: ClassVar[Callable[..., Any]]
    """`httpx.Client` or `httpx.AsyncClient`: the face's I/O."""

    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        token: str | None = None,
        timeout: float = 30.0,
        transport: Transport | None = None,
    ) -> None:
        headers = {"authorization": f"Bearer {token}"} if token else {}
        self.url = url.rstrip("/")
        self.http = self._http_class(
            base_url=self.url, headers=headers, timeout=timeout, transport=transport
        )

    def call(self, call: Call[Any]) -> Any:
        raise NotImplementedError  # each face sends a call its own way

    # ---- inputs
    send = _Method(Operations.send)
    say = _Method(Operations.say)
    interrupt = _Method(Operations.interrupt)
    stop = _Method(Operations.stop)
    input = _Method(Operations.input)
    media = _Method(Operations.media)

    # ---- reads
    status = _Method(Operations.status)
    memory = _Method(Operations.memory)
    settings = _Method(Operations.settings)
    set_setting = _Method(Operations.set_setting)
    recall = _Method(Operations.recall)
    knowledge_search = _Method(Operations.knowledge_search)
    knowledge_entry = _Method(Operations.knowledge_entry)


class Client(_Face[httpx.BaseTransport]):
    """The service's API over a blocking `httpx.Client` (see the module docstring)."""

    _http_class = httpx.Client
    http: httpx.Client

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self.http.close()

    def call(self, call: Call[T]) -> T:
        try:
            response = self.http.request(**call.arguments())
        except httpx.RemoteProtocolError:
            response = self.http.request(**call.arguments())
        return call.result(response)

    def events(
        self,
        types: Iterable[str] = (),
        *,
        last_event_id: int | None = None,
        opened: Callable[[], None] | None = None,
    ) -> Iterator[StreamEvent]:
        """Every event (or those of `types`) from after `last_event_id`, as they happen;
        resumes after a broken connection or an overflow, ends when the service closes.
        `opened` is called each time the stream is connected (from then on nothing is
        missed)."""
        stream = EventStream(types, last_event_id, opened)
        while True:
            try:
                with self.http.stream(**stream.request()) as response:
                    if response.status_code >= 400:
                        response.read()
                    stream.connected(response)
                    for data in response.iter_bytes():
                        yield from stream.feed(data)
                        if stream.cut:
                            break
            except STREAM_BROKEN:
                pass
            if stream.ended:
                return
            time.sleep(RESUME_PAUSE_S)


class AsyncClient(_Face[httpx.AsyncBaseTransport]):
    """The service's API over an `httpx.AsyncClient` (see the module docstring)."""

    _http_class = httpx.AsyncClient
    http: httpx.AsyncClient

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.http.aclose()

    async def call(self, call: Call[T]) -> T:
        try:
            response = await self.http.request(**call.arguments())
        except httpx.RemoteProtocolError:
            response = await self.http.request(**call.arguments())
        return call.result(response)

    async def events(
        self,
        types: Iterable[str] = (),
        *,
        last_event_id: int | None = None,
        opened: Callable[[], None] | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """As `Client.events`."""
        stream = EventStream(types, last_event_id, opened)
        while True:
            try:
                async with self.http.stream(**stream.request()) as response:
                    if response.status_code >= 400:
                        await response.aread()
                    stream.connected(response)
                    async for data in response.aiter_bytes():
                        for event in stream.feed(data):
                            yield event
                        if stream.cut:
                            break
            except STREAM_BROKEN:
                pass
            if stream.ended:
                return
            await asyncio.sleep(RESUME_PAUSE_S)


__all__ = [
    "DEFAULT_URL",
    "AsyncClient",
    "Call",
    "Client",
    "HologramError",
    "StreamEvent",
]
