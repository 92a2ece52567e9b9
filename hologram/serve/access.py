"""Who may talk to the service: loopback binds are open to the machine, any other bind needs
the bearer token kept in the data dir.

The token is made once, on the first start that needs it, into `<data>/serve_token` with mode
0600, and printed that one time; later starts read it. Requests to the API (`/api/`), the
OpenAI-compatible endpoint (`/v1/`) and the MCP server (`/mcp`) without it get 401: an
OpenAI client sends it as its API key.
On a loopback bind the Host header must name the loopback too, so a web page elsewhere cannot
reach the API through a DNS name that resolves to 127.0.0.1.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import secrets
from pathlib import Path

from starlette.types import ASGIApp, Receive, Scope, Send

TOKEN_FILE = "serve_token"
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
GUARDED = ("/api/", "/v1/", "/mcp")
"""The doors that need the token beyond loopback (the page and its static files do not)."""


def is_loopback(host: str) -> bool:
    """True for a name or address that only this machine can reach."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def load_or_create_token(data_dir: Path) -> tuple[str, bool]:
    """The bearer token of this data dir, and whether it was made just now."""
    path = data_dir / TOKEN_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        token = path.read_text(encoding="ascii").strip()
        if not token:
            raise ValueError(f"{path} is empty: delete it and a new token is made") from None
        return token, False
    token = secrets.token_urlsafe(32)
    with os.fdopen(fd, "w", encoding="ascii") as file:
        file.write(token + "\n")
    return token, True


def _host_of(header: str) -> str:
    if header.startswith("["):
        return header[: header.find("]") + 1]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class AccessGuard:
    """ASGI middleware in front of the whole app (plain ASGI: it never buffers a body)."""

    def __init__(self, app: ASGIApp, *, token: str | None, loopback_bind: bool) -> None:
        self.app = app
        self.token = token
        self.loopback_bind = loopback_bind

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        if self.loopback_bind and not is_loopback(_host_of(headers.get("host", "localhost"))):
            await _refuse(
                send, 403, "this service is bound to loopback: use 127.0.0.1 or localhost"
            )
            return
        if self.token is not None and scope["path"].startswith(GUARDED):
            given = headers.get("authorization", "")
            expected = f"Bearer {self.token}"
            if not hmac.compare_digest(given.encode(), expected.encode()):
                why = "missing" if not given else "wrong"
                await _refuse(
                    send,
                    401,
                    f"bearer token {why}: this service is bound beyond loopback; send "
                    f"'Authorization: Bearer <token>' with the token from <data>/{TOKEN_FILE}",
                    extra=[(b"www-authenticate", b'Bearer realm="hologram"')],
                )
                return
        await self.app(scope, receive, send)


async def _refuse(
    send: Send, status: int, message: str, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send(
        {"type": "http.response.start", "status": status, "headers": headers + (extra or [])}
    )
    await send({"type": "http.response.body", "body": body})
