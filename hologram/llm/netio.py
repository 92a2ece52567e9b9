"""The sockets a model call runs on: httpcore's network backend written on asyncio itself.

httpx reaches the network through httpcore, whose asyncio backend is anyio's. anyio opens a
cancel scope with a deadline for every read and write (and asks sniffio which event loop
runs, each time): on this machine that was 5-8 % of the kernel's loop while it streamed a
model's answer, and a share of the time between a frame's arrival and the reply's delta.
The kernel only ever runs on asyncio, so this backend uses asyncio's transports directly:
one protocol per connection that keeps what arrived in a buffer, a read that returns at once
when there is data, and a timer only when a read has to wait.

It behaves as httpcore's own backends do: timeouts raise httpcore's ReadTimeout,
WriteTimeout and ConnectTimeout, a broken connection its ReadError, WriteError or
ConnectError, TLS is asyncio's (`loop.start_tls`), and `is_readable` tells the connection
pool that an idle keep-alive connection was closed by the server.
"""

# httpcore names the timeout parameter of every call: ASYNC109 cannot apply.
# ruff: noqa: ASYNC109
from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

__all__ = ["AsyncioBackend", "transport"]

HOLD_BYTES = 1 << 20
"""Received and not yet read, past which the connection stops reading from its socket (the
server then waits, as TCP makes it): a slow reader of a large answer holds a megabyte."""


class _Connection(asyncio.Protocol):
    """What arrives on one connection, kept until read; and the writer's flow control."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.received = bytearray()
        self.eof = False
        self.error: BaseException | None = None
        self.held = False
        self._reader: asyncio.Future[None] | None = None
        self._writable: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.received += data
        if len(self.received) > HOLD_BYTES and not self.held and self.transport is not None:
            self.held = True
            self.transport.pause_reading()
        self._wake_reader()

    def taken(self, max_bytes: int) -> bytes:
        """Up to `max_bytes` of what arrived, oldest first."""
        if len(self.received) <= max_bytes:
            piece = bytes(self.received)
            self.received.clear()
        else:
            piece = bytes(self.received[:max_bytes])
            del self.received[:max_bytes]
        if self.held and len(self.received) < HOLD_BYTES // 4 and self.transport is not None:
            self.held = False
            self.transport.resume_reading()
        return piece

    def eof_received(self) -> bool:
        self.eof = True
        self._wake_reader()
        return False  # let the transport close itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        if exc is not None:
            self.error = exc
        self._wake_reader()
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    def pause_writing(self) -> None:
        if self._writable is None or self._writable.done():
            self._writable = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    def _wake_reader(self) -> None:
        if self._reader is not None and not self._reader.done():
            self._reader.set_result(None)

    async def arrival(self) -> None:
        """Until something arrives, the other end stops sending, or the connection breaks."""
        self._reader = asyncio.get_running_loop().create_future()
        try:
            await self._reader
        finally:
            self._reader = None

    async def writable(self) -> None:
        if self._writable is not None:
            await self._writable


class AsyncioStream(httpcore.AsyncNetworkStream):
    def __init__(self, transport: asyncio.Transport, connection: _Connection) -> None:
        self._transport = transport
        self._connection = connection

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        connection = self._connection
        if not connection.received and not connection.eof:
            try:
                async with asyncio.timeout(timeout):
                    await connection.arrival()
            except TimeoutError:
                raise httpcore.ReadTimeout(f"no data within {timeout} s") from None
        if connection.received:
            return connection.taken(max_bytes)
        if connection.error is not None:
            raise httpcore.ReadError(str(connection.error)) from connection.error
        return b""  # the other end closed the connection

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        connection = self._connection
        if connection.error is not None or self._transport.is_closing():
            raise httpcore.WriteError(f"the connection is closed ({connection.error})")
        self._transport.write(buffer)
        try:
            async with asyncio.timeout(timeout):
                await connection.writable()
        except TimeoutError:
            raise httpcore.WriteTimeout(f"could not send within {timeout} s") from None
        if connection.error is not None:
            raise httpcore.WriteError(str(connection.error)) from connection.error

    async def aclose(self) -> None:
        self._transport.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                secured = await loop.start_tls(
                    self._transport,
                    self._connection,
                    ssl_context,
                    server_hostname=server_hostname,
                    ssl_handshake_timeout=timeout,
                )
        except TimeoutError:
            self._transport.close()
            raise httpcore.ConnectTimeout(f"TLS handshake took over {timeout} s") from None
        except (OSError, ssl.SSLError) as exc:
            self._transport.close()
            raise httpcore.ConnectError(str(exc)) from exc
        assert isinstance(secured, asyncio.Transport)
        return AsyncioStream(secured, self._connection)

    def get_extra_info(self, info: str) -> Any:
        if info == "ssl_object":
            return self._transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        if info == "socket":
            return self._transport.get_extra_info("socket")
        if info == "is_readable":
            # An idle keep-alive connection has nothing to say: anything that arrived, or
            # its end, means the server is done with it.
            connection = self._connection
            return bool(connection.received) or connection.eof
        return None


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        local = None if local_address is None else (local_address, 0)
        try:
            async with asyncio.timeout(timeout):
                # Happy eyeballs as anyio does it: a host whose first address (often IPv6)
                # does not answer is not waited on for the whole connect timeout.
                transport, connection = await loop.create_connection(
                    _Connection, host, port, local_addr=local, happy_eyeballs_delay=0.25
                )
        except TimeoutError:
            message = f"no connection to {host}:{port} within {timeout} s"
            raise httpcore.ConnectTimeout(message) from None
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        raw = transport.get_extra_info("socket")
        for option in socket_options or ():
            raw.setsockopt(*option)
        return AsyncioStream(transport, connection)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport, connection = await loop.create_unix_connection(_Connection, path)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"no connection to {path} within {timeout} s") from None
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        return AsyncioStream(transport, connection)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def transport(ssl_context: ssl.SSLContext | None = None) -> httpx.AsyncHTTPTransport:
    """An httpx transport for model calls on this backend: no environment proxy, and the
    system's certificates unless `ssl_context` is given."""
    made = httpx.AsyncHTTPTransport(trust_env=False)
    # httpx takes no network backend, so its pool is replaced by one with httpx's own
    # defaults (tests/llm/test_netio.py fails if httpx stops keeping it there).
    made._pool = httpcore.AsyncConnectionPool(
        ssl_context=ssl_context or httpx.create_ssl_context(trust_env=False),
        max_connections=100,
        max_keepalive_connections=20,
        keepalive_expiry=5.0,
        network_backend=AsyncioBackend(),
    )
    return made
