"""GET /health: the kernel's health report (`Kernel.health`). Without `ready` it is the
liveness answer (the running kernel's checks, quick); with `ready=true` the self-test turn on
a virtual kernel runs too (readiness). A failing report answers 503, so a supervisor that
reads only the status code still sees it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from starlette.requests import Request
from starlette.responses import Response

from hologram.sdk import Param
from hologram.serve.context import context
from hologram.serve.endpoint import endpoint, reply
from hologram.serve.params import read_params


@dataclass(frozen=True, slots=True)
class HealthCheck:
    name: Annotated[str, Param("what was checked: selftest, kernel, llm:<source>, ...")]
    ok: bool
    detail: Annotated[str, Param("the finding, naming the cause when it failed")]


@dataclass(frozen=True, slots=True)
class Health:
    """Every check and whether all passed."""

    ok: bool
    checks: list[HealthCheck]


@dataclass(frozen=True, slots=True)
class HealthQuery:
    ready: Annotated[bool, Param("also run the self-test turn on a virtual kernel")] = False


@endpoint("GET", "/health", tag="status", result=Health, query=HealthQuery, errors=(503,))
async def get_health(request: Request) -> Response:
    """The health report: each LLM source's reachability, each plugin's state, the disk;
    with ready=true also a self-test turn. 503 when a check fails."""
    query = read_params(HealthQuery, request.query_params, "query parameter")
    report = await context(request).kernel.health(with_selftest=query.ready)
    checks = [HealthCheck(c.name, c.ok, c.detail) for c in report.checks]
    return reply(Health(report.ok, checks), 200 if report.ok else 503)
