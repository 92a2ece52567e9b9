"""The kernel at a glance: its layers, scheduler, journal counts, LLM sources, memory counts
and plugins, and the service itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from starlette.requests import Request
from starlette.responses import Response

from hologram._version import __version__
from hologram.llm import NO_LLM_HINT
from hologram.sdk import Param
from hologram.serve.context import ServiceInfo, context
from hologram.serve.endpoint import endpoint, reply
from hologram.serve.plugins import PluginRow, rows
from hologram.serve.stream import StreamStats
from hologram.state import KernelState


class ServiceStatus(ServiceInfo):
    """The service: where it listens, whether it takes input, its event stream."""

    accepting_input: Annotated[bool, Param("false once shutdown has begun")]
    events: StreamStats


@dataclass(frozen=True, slots=True)
class LlmStatus:
    """The LLM sources in fallback order, and whether the offline model answers."""

    offline: Annotated[bool, Param("true when the offline scripted model answers")]
    sources: Annotated[list[dict[str, Any]], Param("the LLM sources, in fallback order")]
    usage: Annotated[
        dict[str, Any] | None,
        Param("tokens and cost since boot: total, by source, day, channel and model"),
    ] = None
    hint: Annotated[str | None, Param("how to configure a real model, while offline")] = None

    @classmethod
    def of(cls, sources: list[dict[str, Any]], usage: dict[str, Any] | None) -> LlmStatus:
        offline = bool(sources) and bool(sources[0]["offline"])
        return cls(offline, sources, usage, NO_LLM_HINT["en"] if offline else None)


@dataclass(frozen=True, slots=True)
class MemoryCounts:
    """How much each memory tier holds (null: the kernel has no such tier)."""

    context_events: int | None
    cold_documents: int | None
    text_log_files: int | None

    @classmethod
    def of(cls, state: KernelState) -> MemoryCounts:
        return cls(
            None if state.memory is None else len(state.memory.context),
            None if state.coldcontext is None else len(state.coldcontext),
            None if state.text_memory is None else len(state.text_memory.files()),
        )


@dataclass(frozen=True, slots=True)
class Status:
    """The kernel and the service at a glance."""

    version: str
    service: ServiceStatus
    kernel: Annotated[dict[str, Any], Param("phase, layers, boot timings, config problems")]
    scheduler: Annotated[dict[str, Any], Param("running, stack, queue, pending_inputs")]
    inputs: Annotated[dict[str, int], Param("journal counts by state")]
    llm: LlmStatus
    agent: Annotated[dict[str, Any] | None, Param("tools, skills, channels")]
    memory: MemoryCounts
    plugins: list[PluginRow] | None


@endpoint("GET", "/status", tag="status", result=Status)
async def get_status(request: Request) -> Response:
    """Layers, scheduler, journal counts, LLM sources, memory counts, plugins, service."""
    ctx = context(request)
    kernel, state = ctx.kernel, ctx.kernel.state
    sources = [] if state.llm is None else state.llm.status()
    service = ServiceStatus(
        **ctx.info, accepting_input=ctx.intake.accepting, events=ctx.stream.stats()
    )
    status = Status(
        version=__version__,
        service=service,
        kernel=kernel.status(),
        scheduler=kernel.inputs.status(),
        inputs=await kernel.inputs.journal.counts(),
        llm=LlmStatus.of(sources, None if state.llm is None else state.llm.usage.summary()),
        agent=None if state.agent is None else state.agent.describe(),
        memory=MemoryCounts.of(state),
        plugins=None if state.plugins is None else rows(state.plugins),
    )
    return reply(status)


@endpoint("GET", "/memory", tag="status", result=MemoryCounts)
async def get_memory(request: Request) -> Response:
    """Memory counts."""
    return reply(MemoryCounts.of(context(request).kernel.state))
