"""The asyncio network backend model calls run on (hologram/llm/netio.py): requests and
keep-alive as httpx's own backend does them, a server's closing of an idle connection seen
before it is reused, timeouts and broken connections as httpx's errors, TLS, and a large
answer read whole while the connection stops reading ahead of a slow reader."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from hologram.llm.netio import AsyncioBackend, transport

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def serving(
    handler: Handler, ssl_context: ssl.SSLContext | None = None
) -> AsyncIterator[tuple[int, list[int]]]:
    """A server on 127.0.0.1 running `handler` per connection; yields its port and a list
    that counts the connections it accepted."""
    accepted: list[int] = []

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        try:
            await handler(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0, ssl=ssl_context)
    async with server:
        yield server.sockets[0].getsockname()[1], accepted


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return await reader.readexactly(length) if length else b""


def answer(body: bytes, close: bool = False) -> bytes:
    connection = b"close" if close else b"keep-alive"
    return (
        b"HTTP/1.1 200 OK\r\nContent-Length: " + str(len(body)).encode()
        + b"\r\nConnection: " + connection + b"\r\n\r\n" + body
    )  # fmt: skip


def echo(close_after: bool) -> Handler:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            body = await read_request(reader)
            # A server that closes without saying so: the client must notice before reuse.
            writer.write(answer(b"echo:" + body))
            await writer.drain()
            if close_after:
                return

    return handle


def test_httpx_keeps_the_pool_that_runs_on_the_asyncio_backend() -> None:
    # netio replaces httpx's pool to give it a network backend: this fails if httpx moves it.
    made = transport()
    assert isinstance(made._pool._network_backend, AsyncioBackend)


async def test_requests_share_one_kept_alive_connection() -> None:
    async with (
        serving(echo(close_after=False)) as (port, accepted),
        httpx.AsyncClient(transport=transport()) as client,
    ):
        for n in range(3):
            response = await client.post(f"http://127.0.0.1:{port}/x", content=f"{n}".encode())
            assert response.text == f"echo:{n}"
        stream = response.extensions["network_stream"]
        assert stream.get_extra_info("server_addr")[1] == port
    assert len(accepted) == 1


async def test_an_idle_connection_the_server_closed_is_not_reused() -> None:
    async with (
        serving(echo(close_after=True)) as (port, accepted),
        httpx.AsyncClient(transport=transport()) as client,
    ):
        for n in range(3):
            response = await client.post(f"http://127.0.0.1:{port}/x", content=f"{n}".encode())
            assert response.text == f"echo:{n}"
            await asyncio.sleep(0.05)  # the server's close arrives
    assert len(accepted) == 3


async def test_an_answer_that_does_not_come_times_out() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await asyncio.sleep(5)

    async with (
        serving(silent) as (port, _),
        httpx.AsyncClient(transport=transport(), timeout=0.2) as client,
    ):
        with pytest.raises(httpx.ReadTimeout):
            await client.get(f"http://127.0.0.1:{port}/")


async def test_a_refused_connection_and_a_cut_answer_are_httpx_errors() -> None:
    async def cut(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part")
        await writer.drain()

    async with httpx.AsyncClient(transport=transport(), timeout=2) as client:
        async with serving(cut) as (port, _):
            with pytest.raises(httpx.RemoteProtocolError):
                await client.get(f"http://127.0.0.1:{port}/")
        with pytest.raises(httpx.ConnectError):
            await client.get(f"http://127.0.0.1:{port}/")  # nothing listens there now


async def test_a_large_answer_is_read_whole_by_a_slow_reader() -> None:
    body = bytes(range(256)) * (12 * 1024)  # 3 MB, three times what a connection holds

    async def large(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(answer(body))
        await writer.drain()
        await asyncio.sleep(1)

    async with (
        serving(large) as (port, _),
        httpx.AsyncClient(transport=transport()) as client,
        client.stream("GET", f"http://127.0.0.1:{port}/") as response,
    ):
        got = bytearray()
        async for piece in response.aiter_raw():
            got += piece
            await asyncio.sleep(0.001)
    assert bytes(got) == body


def certificate(directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


async def test_https_runs_over_asyncios_tls_and_checks_the_certificate(tmp_path: Path) -> None:
    cert_path, key_path = certificate(tmp_path)
    server_side = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_side.load_cert_chain(cert_path, key_path)
    trusting = ssl.create_default_context(cafile=str(cert_path))
    async with serving(echo(close_after=False), server_side) as (port, _):
        async with httpx.AsyncClient(transport=transport(trusting)) as client:
            response = await client.post(f"https://localhost:{port}/x", content=b"secret")
            assert response.text == "echo:secret"
            stream = response.extensions["network_stream"]
            assert stream.get_extra_info("ssl_object") is not None
        # Without the certificate trusted, the handshake is refused.
        async with httpx.AsyncClient(transport=transport()) as client:
            with pytest.raises(httpx.ConnectError):
                await client.get(f"https://localhost:{port}/")
