"""Input: queue it, wait for its reply, interrupt, stop, and read one back from the journal.

An input is acknowledged (202 with its id) once, and only once, the journal has it on disk.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Annotated

from starlette.requests import Request
from starlette.responses import Response

from hologram.agent import RecordRow, TaskStopped, Ticket, TurnResult
from hologram.media import Upload
from hologram.sdk import EndedBy, Param
from hologram.serve.bodies import (
    FORM_FIELDS,
    JSON_KINDS,
    ApiError,
    InputBody,
    InterruptBody,
    content_kind,
    decode_media,
    form_input,
    input_body,
    media_body_limit,
    parse_json,
    read_body,
)
from hologram.serve.context import ServiceContext, context
from hologram.serve.endpoint import JSON_MEDIA, PREFIX, endpoint, reply
from hologram.serve.forms import FORM_KIND, parse_form
from hologram.serve.params import SQLITE_MAX_INT, read_params


@dataclass(frozen=True, slots=True)
class Ack:
    """An input on disk and queued: its journal id, and the level it runs at."""

    id: int
    level: Annotated[int, Param("0 queued, 1-3 an interrupt level", ge=0, le=3)]


@dataclass(frozen=True, slots=True)
class InputResult:
    """How the turn of one input ended, and its reply."""

    id: int
    reply: str
    ended_by: Annotated[
        str, Param(f"{', '.join(EndedBy)}, or short_circuit:<stage> for a stage that ended it")
    ]
    rounds: Annotated[int, Param("model calls the turn made", ge=0)]
    channel: str
    delivered: Annotated[bool, Param("whether the reply reached its output channel")]
    detail: Annotated[str | None, Param("why it stopped, when it was stopped")] = None

    @classmethod
    def of(cls, ident: int, result: TurnResult) -> InputResult:
        return cls(
            ident, result.reply, result.ended_by, result.rounds, result.channel, result.delivered
        )


@dataclass(frozen=True, slots=True)
class Stopped:
    """What a stop covered."""

    stopped: Annotated[list[int], Param("the running input and every input waiting then")]


@dataclass(frozen=True, slots=True)
class InputPath:
    id: Annotated[int, Param("the input's journal id", ge=1, le=SQLITE_MAX_INT)]


INPUT_KINDS = JSON_KINDS | {FORM_KIND}
INPUT_MEDIA = (JSON_MEDIA, FORM_KIND)


async def read_input(request: Request, kind: type[InputBody]) -> tuple[InputBody, list[Upload]]:
    """An input sent as JSON (media as base64 items) or as multipart/form-data (text
    fields and file parts), as the same body and uploads: what follows is one path."""
    ctx = context(request)
    media = ctx.kernel.state.media
    limit, limit_is = media_body_limit(ctx.body_limit, None if media is None else media.limits)
    raw = await read_body(request, limit, INPUT_KINDS, "JSON or a form", limit_is)
    channels = ctx.intake.channels()
    if content_kind(request) == FORM_KIND:
        form = parse_form(raw, request.headers.get("content-type", ""), FORM_FIELDS)
        body, uploads = (
            input_body(form_input(form.fields), channels=channels, kind=kind),
            form.uploads,
        )
        media_bytes = sum(len(u.data) for u in uploads)
    else:
        body = input_body(parse_json(raw), channels=channels, kind=kind)
        uploads = decode_media(body.media)
        media_bytes = sum(len(m.data) for m in body.media)
    # The media settings widen the limit for media only: the rest (the text above all)
    # keeps the small one.
    if len(raw) - media_bytes > ctx.body_limit:
        raise ApiError(
            413,
            f"request body without its media is {len(raw) - media_bytes} bytes, over the "
            f"limit of {ctx.body_limit}",
        )
    return body, uploads


async def _submit(request: Request, kind: type[InputBody]) -> tuple[Ticket, InputBody]:
    body, uploads = await read_input(request, kind)
    return await context(request).intake.submit(body, uploads), body


@endpoint(
    "POST",
    "/input",
    tag="inputs",
    status=202,
    result=Ack,
    body=InputBody,
    body_media=INPUT_MEDIA,
    errors=(503,),
)
async def post_input(request: Request) -> Response:
    """Queue an input; answers with its id once the journal has committed it."""
    ticket, _ = await _submit(request, InputBody)
    return reply(Ack(ticket.id, int(ticket.level)), 202)


@endpoint(
    "POST",
    "/input/sync",
    tag="inputs",
    result=InputResult,
    body=InputBody,
    body_media=INPUT_MEDIA,
    errors=(500, 503, 504),
)
async def post_input_sync(request: Request) -> Response:
    """Queue an input and wait for its reply (ended_by 'stopped' if it was stopped)."""
    ticket, body = await _submit(request, InputBody)
    return reply(await _outcome(context(request), ticket, body))


async def _outcome(ctx: ServiceContext, ticket: Ticket, body: InputBody) -> InputResult:
    try:
        async with asyncio.timeout(body.timeout):
            result: TurnResult = await asyncio.shield(ticket.outcome)
    except TimeoutError:
        raise ApiError(
            504,
            f"no reply within {body.timeout:g} s; the input is still queued or running "
            f"(GET {PREFIX}/inputs/{ticket.id}, or watch {PREFIX}/events)",
            id=ticket.id,
        ) from None
    except TaskStopped as exc:
        if not ctx.intake.accepting:
            raise ApiError(
                503,
                "the service stopped before this input finished; it is kept in the "
                "journal and runs when the service starts again",
                id=ticket.id,
            ) from None
        return InputResult(
            ticket.id, "", EndedBy.STOPPED.value, 0, body.channel, False, detail=str(exc)
        )
    except Exception as exc:
        raise ApiError(500, f"the turn failed: {type(exc).__name__}: {exc}", id=ticket.id) from exc
    return InputResult.of(ticket.id, result)


@endpoint(
    "POST",
    "/interrupt",
    tag="inputs",
    status=202,
    result=Ack,
    body=InterruptBody,
    body_media=INPUT_MEDIA,
    errors=(503,),
)
async def post_interrupt(request: Request) -> Response:
    """Inject an interrupt (level L1-L3, default L1)."""
    ticket, _ = await _submit(request, InterruptBody)
    return reply(Ack(ticket.id, int(ticket.level)), 202)


@endpoint("POST", "/stop", tag="inputs", result=Stopped)
async def post_stop(request: Request) -> Response:
    """Stop the running turn and short-circuit every input waiting now."""
    return reply(Stopped(context(request).kernel.stop_turn()))


@endpoint(
    "GET", "/inputs/{id}", tag="inputs", result=RecordRow, path_params=InputPath, errors=(404,)
)
async def get_input(request: Request) -> Response:
    """One input as the journal has it: its state and reply."""
    ident = read_params(InputPath, request.path_params, "path parameter").id
    record = await context(request).kernel.inputs.journal.get(ident)
    if record is None:
        raise ApiError(404, f"no input {ident} in the journal")
    return reply(record)
