"""The companion behind OpenAI's chat API: `POST /v1/chat/completions` and `GET /v1/models`,
so any OpenAI client or chat UI can talk to it.

The companion keeps its own memory, so only the last message is new to it: that user
message becomes one input on the `openai` channel (the earlier messages are context the
client already has, and the companion already holds). Its `image_url` parts given as
`data:` URLs are the input's media, checked by the media store as every door's are; an
image by http(s) URL is refused (the companion fetches nothing on a client's behalf). The
body may be as large as the media settings allow. The reply is the turn's reply, as a
chat completion, or with `stream: true` as OpenAI's chunks: the role, the text, the finish,
then `[DONE]`. Refusals are in OpenAI's error shape (`{"error": {"message", "type", …}}`), so
an OpenAI client raises its own typed errors.

These routes keep OpenAI's published contract, and the official `openai` client's types are
their oracle (tests/serve/test_openai_endpoint.py); they are not part of the Hologram API's
own document (/api/v1/openapi.json), whose one server is /api/v1.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from hologram.agent import TaskStopped, Ticket, TurnResult
from hologram.llm import estimate_tokens
from hologram.media import Upload
from hologram.sdk import AgentOutputDelta, Event, EventType, to_json
from hologram.serve.bodies import (
    MAX_SYNC_TIMEOUT_S,
    OPENAI_CHANNEL,
    ApiError,
    InputBody,
    media_body_limit,
    read_json,
)
from hologram.serve.context import ServiceContext, context
from hologram.serve.endpoint import endpoint, reply

OPENAI_PREFIX = "/v1"
MODEL_ID = "hologram"
"""The one model this endpoint serves: the companion itself."""
OWNER = "hologram"
ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})


# ---- what is sent back ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ModelCard:
    id: str
    created: int
    object: Literal["model"] = "model"
    owned_by: str = OWNER


@dataclass(frozen=True, slots=True)
class ModelList:
    """The models served: the companion."""

    data: list[ModelCard]
    object: Literal["list"] = "list"


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    content: str
    role: Literal["assistant"] = "assistant"


@dataclass(frozen=True, slots=True)
class Choice:
    message: AssistantMessage
    index: int = 0
    finish_reason: str = "stop"
    logprobs: None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts, estimated (no tokenizer): what the client sent, what the reply holds."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int

    @classmethod
    def of(cls, asked: str, answered: str) -> Usage:
        sent, got = estimate_tokens(asked), estimate_tokens(answered)
        return cls(sent, got, sent + got)


@dataclass(frozen=True, slots=True)
class ChatCompletion:
    """The turn's reply as a chat completion; `id` names the input's journal id."""

    id: str
    created: int
    choices: list[Choice]
    usage: Usage
    model: str = MODEL_ID
    object: Literal["chat.completion"] = "chat.completion"


@dataclass(frozen=True, slots=True)
class Delta:
    content: str | None = None
    role: Literal["assistant"] | None = None


@dataclass(frozen=True, slots=True)
class ChunkChoice:
    delta: Delta
    index: int = 0
    finish_reason: str | None = None


@dataclass(frozen=True, slots=True)
class ChatCompletionChunk:
    id: str
    created: int
    choices: list[ChunkChoice]
    model: str = MODEL_ID
    object: Literal["chat.completion.chunk"] = "chat.completion.chunk"
    usage: Usage | None = None


# ---- what is received ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ChatMessageBody:
    role: str
    content: str
    images: tuple[Upload, ...] = ()
    """The message's `image_url` parts, decoded (read for the last message only)."""


@dataclass(frozen=True, slots=True)
class ChatCompletionBody:
    """The fields of OpenAI's request this endpoint uses; the others (temperature,
    max_tokens, tools, …) are accepted and left alone: the companion's own settings decide."""

    model: str
    messages: list[ChatMessageBody]
    stream: bool = False
    include_usage: bool = False
    user: str = ""

    @property
    def said(self) -> str:
        return self.messages[-1].content

    @property
    def media(self) -> tuple[Upload, ...]:
        return self.messages[-1].images


class OpenAIRefusal(ApiError):
    """A refusal in OpenAI's error shape."""

    def __init__(self, status: int, message: str, kind: str, param: str | None = None) -> None:
        super().__init__(status, message)
        self.kind = kind
        self.param = param

    @classmethod
    def of(cls, exc: ApiError) -> OpenAIRefusal:
        kind = "invalid_request_error" if exc.status < 500 else "server_error"
        return cls(exc.status, exc.message, kind)

    def response(self) -> Response:
        error = {"message": self.message, "type": self.kind, "param": self.param, "code": None}
        return JSONResponse({"error": error}, status_code=self.status)


def _text(content: Any, at: int) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p for p in content if isinstance(p, dict)]
        if len(parts) == len(content):
            return "".join(str(p.get("text", "")) for p in parts if p.get("type") == "text")
    if content is None:
        return ""
    raise OpenAIRefusal(
        400,
        f"messages[{at}].content must be text or a list of content parts",
        "invalid_request_error",
        f"messages[{at}].content",
    )


def _images(content: Any, at: int) -> tuple[Upload, ...]:
    """The `image_url` parts of a message's content, each a data: URL decoded; an image
    given by http(s) URL is refused (this door fetches nothing from the network)."""
    if not isinstance(content, list):
        return ()
    return tuple(
        _image(part, f"messages[{at}].content[{index}].image_url")
        for index, part in enumerate(content)
        if isinstance(part, dict) and part.get("type") == "image_url"
    )


def _image(part: dict[str, Any], where: str) -> Upload:
    def refuse(message: str) -> OpenAIRefusal:
        return OpenAIRefusal(400, f"{where}: {message}", "invalid_request_error", where)

    image = part.get("image_url")
    url = image.get("url") if isinstance(image, dict) else None
    if not isinstance(url, str) or not url:
        raise refuse("needs {'url': 'data:<type>;base64,<data>'}")
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme in ("http", "https"):
        raise refuse(
            "an image by http(s) URL is not fetched (the companion makes no network "
            "request for a client); send the image itself as a data: URL "
            "(data:image/png;base64,...)"
        )
    if scheme != "data":
        raise refuse("an image is sent as a data: URL (data:image/png;base64,...)")
    header, comma, payload = url[5:].partition(",")
    if not comma or not header.lower().endswith(";base64"):
        raise refuse("a data: URL of an image must be base64 (data:<type>;base64,<data>)")
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise refuse(f"the data: URL's data is not base64 ({exc})") from None
    return Upload(data, header[: -len(";base64")].split(";", 1)[0], "")


def _message(raw: Any, at: int, *, last: bool) -> ChatMessageBody:
    if not isinstance(raw, dict) or raw.get("role") not in ROLES:
        raise OpenAIRefusal(
            400,
            f"messages[{at}] must be an object with a role of {sorted(ROLES)}",
            "invalid_request_error",
            f"messages[{at}]",
        )
    content = raw.get("content")
    # Only the last message is new to the companion: the images of earlier ones are
    # context the client holds, so they are neither decoded nor stored again.
    images = _images(content, at) if last else ()
    return ChatMessageBody(raw["role"], _text(content, at), images)


def completion_body(raw: Any) -> ChatCompletionBody:
    """`raw` as a request, or an OpenAI-shaped 400/404 saying why not."""
    if not isinstance(raw, dict):
        raise OpenAIRefusal(400, "the body must be a JSON object", "invalid_request_error")
    model = raw.get("model")
    if not isinstance(model, str) or not model:
        raise OpenAIRefusal(400, "'model' is required", "invalid_request_error", "model")
    if model != MODEL_ID:
        raise OpenAIRefusal(
            404,
            f"the model {model!r} is not served here; the companion is {MODEL_ID!r} "
            f"(GET {OPENAI_PREFIX}/models)",
            "invalid_request_error",
            "model",
        )
    given = raw.get("messages")
    if not isinstance(given, list) or not given:
        raise OpenAIRefusal(
            400, "'messages' must be a non-empty list", "invalid_request_error", "messages"
        )
    messages = [_message(m, i, last=i == len(given) - 1) for i, m in enumerate(given)]
    if messages[-1].role != "user" or not messages[-1].content.strip():
        raise OpenAIRefusal(
            400,
            "the last message must be the user's, with text: it is what the companion is told "
            "(it remembers the rest itself)",
            "invalid_request_error",
            "messages",
        )
    if raw.get("n", 1) != 1:
        raise OpenAIRefusal(
            400, "the companion gives one reply ('n' must be 1)", "invalid_request_error", "n"
        )
    stream, options = raw.get("stream", False), raw.get("stream_options") or {}
    if not isinstance(stream, bool) or not isinstance(options, dict):
        raise OpenAIRefusal(
            400, "'stream' must be true or false", "invalid_request_error", "stream"
        )
    user = raw.get("user")
    if not isinstance(user, str):
        user = ""
    return ChatCompletionBody(model, messages, stream, options.get("include_usage") is True, user)


# ---- the endpoints -------------------------------------------------------------------------


@endpoint("GET", "/models", tag="openai", result=ModelList, prefix=OPENAI_PREFIX)
async def list_models(request: Request) -> Response:
    """The models served: one, the companion."""
    now = int(context(request).kernel.state.clock.now())
    return reply(ModelList([ModelCard(MODEL_ID, now)]))


@endpoint(
    "POST",
    "/chat/completions",
    tag="openai",
    result=ChatCompletion,
    body=ChatCompletionBody,
    prefix=OPENAI_PREFIX,
    errors=(404, 409, 503, 504),
)
async def create_chat_completion(request: Request) -> Response:
    """The last user message as an input on the `openai` channel; the reply as a chat
    completion (or, with stream: true, as chunks)."""
    ctx = context(request)
    try:
        media = ctx.kernel.state.media
        limit, limit_is = media_body_limit(ctx.body_limit, None if media is None else media.limits)
        body = completion_body(await read_json(request, limit, limit_is))
        source = f"openai:{body.user}" if body.user else "openai"
        given = InputBody(body.said, OPENAI_CHANNEL, "queued", source, MAX_SYNC_TIMEOUT_S)
        tap = DeltaTap(ctx) if body.stream else None
        try:
            ticket = await ctx.intake.submit(given, body.media)
        except BaseException:
            if tap is not None:
                tap.close()
            raise
    except OpenAIRefusal as refusal:
        return refusal.response()
    except ApiError as exc:
        return OpenAIRefusal.of(exc).response()
    created = int(ctx.kernel.state.clock.now())
    if tap is not None:
        chunks = _chunks(ctx, ticket, body, tap, created)
        return StreamingResponse(
            chunks, media_type="text/event-stream", headers={"cache-control": "no-cache"}
        )
    try:
        result = await _reply(ctx, ticket)
    except OpenAIRefusal as refusal:
        return refusal.response()
    choice = Choice(AssistantMessage(result.reply))
    completion = ChatCompletion(
        _completion_id(ticket), created, [choice], Usage.of(body.said, result.reply)
    )
    return reply(completion)


def _completion_id(ticket: Ticket) -> str:
    return f"chatcmpl-{ticket.id}"


async def _reply(ctx: ServiceContext, ticket: Ticket) -> TurnResult:
    try:
        async with asyncio.timeout(MAX_SYNC_TIMEOUT_S):
            result: TurnResult = await asyncio.shield(ticket.outcome)
            return result
    except TimeoutError:
        raise OpenAIRefusal(
            504, f"no reply within {MAX_SYNC_TIMEOUT_S:g} s (input {ticket.id})", "timeout"
        ) from None
    except TaskStopped as exc:
        status = 409 if ctx.intake.accepting else 503
        raise OpenAIRefusal(status, f"the turn was stopped: {exc}", "stopped") from None
    except Exception as exc:
        raise OpenAIRefusal(
            500, f"the turn failed: {type(exc).__name__}: {exc}", "server_error"
        ) from exc


class DeltaTap:
    """The `agent_output_delta` events of every input, kept from before the input is
    submitted (its first delta may come before `submit` returns), until the stream reads
    its own."""

    def __init__(self, ctx: ServiceContext) -> None:
        self.queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._stop = ctx.kernel.events.subscribe(
            EventType.AGENT_OUTPUT_DELTA, self.queue.put_nowait
        )

    def follow(self, ticket: Ticket) -> None:
        ticket.outcome.add_done_callback(lambda _outcome: self.queue.put_nowait(None))

    def close(self) -> None:
        self._stop()


async def reply_deltas(ctx: ServiceContext, ticket: Ticket, tap: DeltaTap) -> AsyncIterator[str]:
    """The reply's text as the model makes it. A client cannot take back what it was sent,
    so each answer of the turn (a round's, or one that begins again after a preemption)
    goes out after a blank line from the one before. At the end, what the last answer
    streamed is squared with the reply: a turn that streamed nothing (a short-circuit,
    triage) sends its reply whole; one whose last answer streamed less sends the rest; one
    whose reply is not that answer sends it after a blank line."""
    answer: list[str] = []  # the pieces of the answer streaming now
    round_: object = None
    apart = False  # a blank line is owed before the next piece
    tap.follow(ticket)
    try:
        async with asyncio.timeout(MAX_SYNC_TIMEOUT_S):
            while (event := await tap.queue.get()) is not None:
                delta = event.payload
                if not isinstance(delta, AgentOutputDelta):
                    continue
                if delta.input_id != ticket.id or delta.reasoning:
                    continue
                if delta.restart or delta.round != round_:
                    round_ = delta.round
                    if answer:
                        answer, apart = [], True
                piece = delta.text
                if piece:
                    if apart:
                        apart = False
                        yield "\n\n"
                    answer.append(piece)
                    yield piece
    except TimeoutError:
        pass  # _reply says so, the way a stream can
    finally:
        tap.close()
    said, reply = "".join(answer), (await _reply(ctx, ticket)).reply
    if reply.startswith(said):
        if reply[len(said) :]:
            yield ("\n\n" if apart else "") + reply[len(said) :]
    elif reply:
        yield "\n\n" + reply


async def _chunks(
    ctx: ServiceContext, ticket: Ticket, body: ChatCompletionBody, tap: DeltaTap, created: int
) -> AsyncIterator[str]:
    ident = _completion_id(ticket)

    def chunk(delta: Delta, finish: str | None = None, usage: Usage | None = None) -> str:
        choices = [] if usage is not None else [ChunkChoice(delta, finish_reason=finish)]
        data = to_json(ChatCompletionChunk(ident, created, choices, usage=usage))
        return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

    yield chunk(Delta(content="", role="assistant"))
    said: list[str] = []
    try:
        async for delta in reply_deltas(ctx, ticket, tap):
            said.append(delta)
            yield chunk(Delta(content=delta))
    except OpenAIRefusal as refusal:
        # The status line has gone out: OpenAI streams report a failure as an error chunk.
        error = {"message": refusal.message, "type": refusal.kind, "code": refusal.status}
        yield f"data: {json.dumps({'error': error}, ensure_ascii=False)}\n\n"
        return
    yield chunk(Delta(), finish="stop")
    if body.include_usage:
        yield chunk(Delta(), usage=Usage.of(body.said, "".join(said)))
    yield "data: [DONE]\n\n"
