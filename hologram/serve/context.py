"""What every endpoint of one service reads: its kernel, event stream and intake, kept on the
app's state (`request.app.state.context`), so nothing lives at module level."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

from starlette.requests import Request

from hologram.facade import Kernel
from hologram.sdk import Param
from hologram.serve.intake import Intake
from hologram.serve.stream import EventStream


class ServiceInfo(TypedDict):
    """Where and how the service listens (shown in /status)."""

    url: str
    host: str
    port: int
    auth: str
    boot_heap_frozen: Annotated[
        int, Param("objects from boot kept out of the garbage collector's full passes", ge=0)
    ]


@dataclass(frozen=True, slots=True)
class ServiceContext:
    kernel: Kernel
    stream: EventStream
    intake: Intake
    body_limit: int
    info: ServiceInfo
    openapi: dict[str, Any] = field(default_factory=dict)
    """The OpenAPI document, made once from the endpoints' declarations."""


def context(request: Request) -> ServiceContext:
    found: ServiceContext = request.app.state.context
    return found
