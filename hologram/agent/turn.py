"""One turn (spec 000: "Message Processing Flow", processTextInput + process).

`Turn.run` is the spec's flow diagram, top to bottom; every step is a method below it.
Setting `ctx.response` in any stage short-circuits: the response becomes the reply, is
delivered, and only `after_output` still runs.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from hologram.agent.loop import ToolRound, tool_called
from hologram.agent.media import MediaParts
from hologram.agent.parts import TurnParts
from hologram.agent.prompt import PromptBudget, PromptInputs, build_system_prompt
from hologram.agent.reply_stream import ReplyStream
from hologram.llm import (
    AllProvidersFailed,
    ChatMessage,
    CompletionRequest,
    CompletionResponse,
    ContextTooLong,
    Role,
    TokenUsage,
)
from hologram.sdk import (
    CONSOLIDATION_CHANNEL,
    AgentLLMChain,
    AgentOutput,
    EndedBy,
    MediaRef,
    Payload,
    ProviderRetry,
    RawInput,
    Reasoning,
    Stage,
    StageContext,
    SystemNote,
    ToolCall,
    ToolDef,
    ToolResult,
    TraceKind,
    TurnFinished,
    TurnStarted,
    ended_by_wire,
)

log = logging.getLogger(__name__)

STOPPED_NOTE = "(stopped)"
SQUEEZE = 0.5
"""How much of its budgets the prompt keeps when the model said it was too long."""

CAP_NOTE = (
    "You have used every tool round this turn allows. Tools are no longer available: "
    "answer now with what you have."
)


@dataclass(frozen=True, slots=True)
class TurnInput:
    text: str
    channel: str = "notebook"
    user_id: str = ""
    group_id: str = ""
    input_id: int | None = None
    """The journal id of the input, when it came through the scheduler."""
    attempt: int = 1
    """Which run of the input this is: more than 1 when a crash cut an earlier run off."""
    media: tuple[MediaRef, ...] = ()
    """Media that came with the input, already in the media store: the model sees it in
    this turn (spec: InjectInputMedia)."""


current_input: ContextVar[TurnInput | None] = ContextVar("current_input", default=None)
"""The input of the turn the code runs in (its tools included), for kernel tools that act on
its behalf later, such as a resident reporting back on the input's channel."""


@dataclass(frozen=True, slots=True)
class TraceStep:
    """One step of a turn and how long the kernel spent in it."""

    name: str
    kind: TraceKind
    ms: float
    detail: str = ""


@dataclass(slots=True)
class TurnResult:
    reply: str
    channel: str
    rounds: int
    outcome: EndedBy
    delivered: bool
    tool_results: list[ToolResult] = field(default_factory=list)
    trace: list[TraceStep] = field(default_factory=list)
    stage: Stage | None = None
    """The stage that short-circuited the turn, when `outcome` is a short-circuit."""
    usage: TokenUsage = field(default_factory=TokenUsage)
    """Tokens of every model call of the turn, as the providers counted them."""
    cost: float | None = None

    @property
    def ended_by(self) -> str:
        """The outcome as events, the journal and the API carry it."""
        return ended_by_wire(self.outcome, self.stage)

    def ms(self, kind: TraceKind | None = None) -> float:
        return sum(s.ms for s in self.trace if kind is None or s.kind == kind)


@dataclass(slots=True, eq=False)
class TurnProgress:
    """How far a turn has come: which steps and rounds are done, so a preempted turn resumes
    after them (what those steps produced stays on the turn itself)."""

    began: bool = False
    #: Steps done, by name; a stage's value says whether it short-circuited.
    done: dict[str, bool] = field(default_factory=dict)
    #: Model rounds whose answer came back (the round being asked is not one yet).
    rounds_done: int = 0
    #: A round whose tool calls were started and not all collected: a resumed turn waits
    #: for the same calls instead of running them again.
    open_round: ToolRound | None = None
    #: The end of the turn once it has begun: it runs to completion, shielded.
    tail: asyncio.Future[TurnResult] | None = None
    #: The reply streaming in this round, kept so a cut-off stream is known as one.
    reply: ReplyStream | None = None
    #: What share of its budgets the prompt keeps (less after "the prompt is too long").
    squeeze: float = 1.0
    #: The tool loop's messages: each round's assistant message and its tool results.
    loop_messages: list[ChatMessage] = field(default_factory=list)


class Turn:
    """One input's way through the pipeline, against the `TurnParts` the agent built.

    How far it has come is one `TurnProgress`. A turn may be cancelled (preempted) at any
    await and `run` called again: steps already done are not repeated, tool calls already
    started are awaited rather than run again, the model call that was cut off is made again,
    and once the tool loop is over the rest of the turn (the reply going out) runs shielded,
    to the end.
    """

    def __init__(self, parts: TurnParts, given: TurnInput) -> None:
        self.parts = parts
        self.given = given
        self.ctx = StageContext(
            raw_message=given.text,
            channel=given.channel,
            user_id=given.user_id,
            group_id=given.group_id,
        )
        self.knowledge: list[str] = []
        """The knowledge entries most relevant to the input, for the system prompt."""
        self.trace: list[TraceStep] = []
        self.rounds = 0
        self.ended_by = EndedBy.ANSWER
        self.short_circuit_stage: Stage | None = None
        self.delivered = False
        self.stopped = False
        """Set for an input that a stop covered before it ran: it ends at pre_action."""
        self.intercept: Callable[[], list[str]] = list
        """Texts of interrupts waiting while this turn runs, each given once (spec: the
        intercept channel, drained without blocking before every model call)."""
        self.progress = TurnProgress()
        self.usage = TokenUsage()
        self.cost: float | None = None
        self.media = MediaParts(parts.media)

    # ---- the flow --------------------------------------------------------------------------

    async def run(self) -> TurnResult:
        """Run the turn (or go on with it after a preemption). A turn that fails still
        publishes `turn_finished`, ended by "error", so every started turn is closed."""
        try:
            return await self._run()
        except Exception as exc:
            self.ended_by = EndedBy.ERROR
            self.publish_finished(error=f"{type(exc).__name__}: {exc}")
            raise

    async def _run(self) -> TurnResult:
        current_input.set(self.given)
        if self.progress.tail is not None:
            return await asyncio.shield(self.progress.tail)
        if not self.progress.began:
            self.progress.began = True
            self.publish(
                RawInput(
                    text=self.ctx.raw_message, channel=self.ctx.channel, user_id=self.ctx.user_id
                )
            )
            self.publish(TurnStarted(channel=self.ctx.channel))
        if await self.once_stage(Stage.ON_INPUT):
            return await self.end_with(self.short_circuit)
        await self.once("context.append", self.append_input)
        await self.once("context.prune", self.prune_context)
        await self.once("memory.recall", self.recall_memory)
        await self.once("knowledge.recall", self.recall_knowledge)
        if self.stopped:
            return await self.end_with(self.stopped_at_pre_action)
        if await self.once_stage(Stage.PRE_ACTION):
            return await self.end_with(self.short_circuit)
        if await self.tool_loop():
            return await self.end_with(self.short_circuit)
        return await self.end_with(self.deliver)

    async def deliver(self) -> TurnResult:
        await self.step("context.append_reply", self.append_reply)
        if await self.stage(Stage.BEFORE_OUTPUT):
            return await self.short_circuit()
        await self.step("output_send", self.emit_response)
        await self.stage(Stage.AFTER_OUTPUT)
        return self.finish()

    async def tool_loop(self) -> bool:
        """post_action → [before_toolcall → execute → after_toolcall]* until the model stops
        calling tools, every call is denied, or the round cap. True on a short-circuit."""
        while True:
            if self.progress.open_round is None:
                if self.progress.rounds_done >= self.parts.settings().max_tool_rounds:
                    if await self.answer_at_cap():
                        return True
                    break
                self.rounds = self.progress.rounds_done + 1
                tools = self.build_tool_defs()
                try:
                    response = await self.call_model(tools)
                except AllProvidersFailed as exc:
                    if not await self.answer_without_model(exc):
                        raise
                    break
                self.progress.rounds_done = self.rounds
                if await self.stage(Stage.POST_ACTION):
                    return True
                calls = list(self.ctx.tool_calls)
                if not calls:
                    self.ended_by = EndedBy.ANSWER
                    break
                self.progress.open_round = self.open_round(calls, tools, response)
            results = await self.close_round(self.progress.open_round)
            self.progress.open_round = None
            if self.ctx.response is not None:
                return True
            if all(r.denied for r in results):
                self.ended_by = EndedBy.ALL_DENIED
                break
        self.ctx.final_text = self.ctx.llm_text
        return False

    async def once(self, name: str, action: Callable[[], Awaitable[None]]) -> None:
        """A step that a resumed turn does not repeat."""
        if name not in self.progress.done:
            await self.step(name, action)
            self.progress.done[name] = False

    async def once_stage(self, stage: Stage) -> bool:
        if stage.value not in self.progress.done:
            self.progress.done[stage.value] = await self.stage(stage)
        return self.progress.done[stage.value]

    @property
    def ending(self) -> asyncio.Future[TurnResult] | None:
        """The end of the turn once it has begun (it runs to completion, shielded)."""
        return self.progress.tail

    async def end_with(self, ending: Callable[[], Coroutine[Any, Any, TurnResult]]) -> TurnResult:
        """Run the end of the turn to completion even if this task is cancelled meanwhile:
        a reply half sent must not be sent again by a resumed turn."""
        progress = self.progress
        if progress.tail is None:
            progress.tail = self.parts.tasks.spawn(ending(), name="turn-ending", awaited=True)
        return await asyncio.shield(progress.tail)

    # ---- stages and timing -----------------------------------------------------------------

    async def stage(self, stage: Stage, ctx: StageContext | None = None) -> bool:
        """Run `stage`; True when a handler set the response (short-circuit)."""
        run = await self.parts.stagehost.run_stage(stage, ctx or self.ctx)
        detail = "" if ctx is None or ctx.tool_call is None else ctx.tool_call.name
        self.trace.append(TraceStep(stage.value, TraceKind.STAGE, run.seconds * 1000, detail))
        if run.short_circuit and ctx is not None and ctx is not self.ctx:
            self.ctx.response = ctx.response
        return run.short_circuit

    async def step(self, name: str, action: Callable[[], Awaitable[None]]) -> None:
        with self.timed(name, TraceKind.STEP):
            await action()

    @contextmanager
    def timed(self, name: str, kind: TraceKind, detail: str = "") -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.trace.append(TraceStep(name, kind, (time.perf_counter() - started) * 1000, detail))

    # ---- memory steps (no-ops until a memory module is mounted) -----------------------------

    async def append_input(self) -> None:
        if self.parts.memory is not None:
            given = self.given
            await self.parts.memory.append_input(
                self.ctx, input_id=given.input_id, attempt=given.attempt, media=given.media
            )

    async def prune_context(self) -> None:
        if self.parts.memory is not None:
            await self.parts.memory.prune(self.ctx.raw_message)

    async def recall_memory(self) -> None:
        if self.parts.memory is not None:
            budget = self.parts.prompt_budget().memory_tokens
            self.ctx.memory = await self.parts.memory.recall(self.ctx.raw_message, budget)

    async def recall_knowledge(self) -> None:
        top = self.parts.settings().knowledge_hits
        if self.parts.knowledge is not None and top > 0:
            self.knowledge = await self.parts.knowledge.passages(self.ctx.raw_message, top)

    async def append_reply(self) -> None:
        if self.parts.memory is not None:
            await self.parts.memory.append_tool_results(self.ctx.tool_results)
            await self.parts.memory.append_reply(self.ctx)

    # ---- one round -------------------------------------------------------------------------

    def build_tool_defs(self) -> dict[str, ToolDef]:
        with self.timed("build_tool_defs", TraceKind.STEP):
            return self.parts.build_tool_defs(media_pending=self.media_pending())

    def window_media(self) -> list[MediaRef]:
        """Media of earlier turns still in the context window (this input's own media is
        in its message)."""
        if self.parts.memory is None:
            return []
        own = {m.digest for m in self.given.media}
        return [m for m in self.parts.memory.window_media() if m.digest not in own]

    def media_pending(self) -> bool:
        """Whether media is in view this round, so the media tools are offered (spec:
        buildToolDefs): the input's, a tool result's, the window's, or a recalled memory's."""
        return bool(
            self.given.media
            or any(r.media for r in self.ctx.tool_results)
            or any(m.media for m in self.ctx.memory)
            or self.window_media()
        )

    def build_messages(self, tools: dict[str, ToolDef]) -> list[ChatMessage]:
        for text in self.intercept():
            self.progress.loop_messages.append(ChatMessage.system(f"[interrupt] {text}"))
        with self.timed("build_system_prompt", TraceKind.STEP):
            parts = self.parts
            prompt = build_system_prompt(
                PromptInputs(
                    persona=parts.persona.text(),
                    reply_channel=self.ctx.channel if self.ctx.channel in parts.channels else "",
                    channels=parts.channels.channels(),
                    offered_tools=frozenset(tools),
                    skills=parts.skills.skills(),
                    memory=self.ctx.memory,
                    knowledge=self.knowledge,
                    timeline=parts.memory.timeline() if parts.memory is not None else (),
                    budget=self.budget(),
                )
            )
        earlier = self.media.window_message(self.window_media())
        return [
            ChatMessage.system(prompt),
            *(_injected(m) for m in self.ctx.context_messages),
            *([earlier] if earlier is not None else []),
            self.media.user_message(self.ctx.raw_message, self.given.media),
            *self.progress.loop_messages,
        ]

    def budget(self) -> PromptBudget:
        budget = self.parts.prompt_budget()
        squeeze = self.progress.squeeze
        if squeeze == 1.0:
            return budget
        return PromptBudget(
            int(budget.memory_tokens * squeeze), int(budget.context_tokens * squeeze)
        )

    def make_request(self, tools: dict[str, ToolDef], extra_system: str) -> CompletionRequest:
        messages = self.build_messages(tools)
        if extra_system:
            messages.append(ChatMessage.system(extra_system))
        tool_list = list(tools.values())
        return CompletionRequest(messages=messages, tools=tool_list, channel=self.ctx.channel)

    async def call_model(
        self, tools: dict[str, ToolDef], extra_system: str = ""
    ) -> CompletionResponse:
        with self.timed("model", TraceKind.MODEL, f"round {self.rounds}"):
            try:
                response = await self.stream_reply(self.make_request(tools, extra_system))
            except ContextTooLong as exc:
                if self.progress.squeeze < 1.0:
                    raise  # pruned once already: the prompt cannot be made to fit
                self.squeeze(exc)
                response = await self.stream_reply(self.make_request(tools, extra_system))
        self.count(response)
        self.ctx.llm_text = response.content
        self.ctx.tool_calls = list(response.tool_calls)
        self.publish(
            AgentLLMChain(
                round=self.rounds,
                text=response.content,
                tool_calls=[_call_json(c) for c in response.tool_calls],
                reasoning=response.reasoning_content,
                finish_reason=response.finish_reason,
                model=response.model,
                provider=response.source,
                usage=response.token_usage.to_json(),
            )
        )
        if response.reasoning_content:
            self.publish(Reasoning(round=self.rounds, text=response.reasoning_content))
        return response

    async def stream_reply(self, request: CompletionRequest) -> CompletionResponse:
        """The model's answer, its text published piece by piece as it streams."""
        quiet = self.ctx.channel == CONSOLIDATION_CHANNEL
        cut_off = self.progress.reply
        reply = ReplyStream(self.publish, self.given.input_id, self.rounds, quiet)
        self.progress.reply = reply
        if (
            cut_off is not None
            and cut_off.round == self.rounds
            and cut_off.shown
            and not cut_off.complete
        ):
            # This round's answer was cut off (a preemption, a prompt too long) after some of
            # it went out: the model is asked again, and what was shown is void.
            reply.restart()
        return await reply.read(self.parts.model.chat_stream(request))

    def squeeze(self, error: ContextTooLong) -> None:
        """The model said the prompt is too long: prune harder (the memory and context
        budgets shrink) and ask once more."""
        self.progress.squeeze = SQUEEZE
        log.warning("the prompt is too long for %s; retrying with half the budgets", error.source)
        self.publish(
            ProviderRetry(
                llm_source=error.source,
                kind=str(error.kind),
                reason=error.reason,
                attempt=1,
                squeeze=SQUEEZE,
            )
        )

    def count(self, response: CompletionResponse) -> None:
        self.usage = self.usage + response.token_usage
        if response.cost is not None:
            self.cost = (self.cost or 0.0) + response.cost

    def open_round(
        self, calls: list[ToolCall], tools: dict[str, ToolDef], response: CompletionResponse
    ) -> ToolRound:
        """Start every call of the round at once, each through its own two stages. The calls
        run as tasks of their own, so a preemption of the turn never cuts a tool off midway."""
        # provider_data goes back with the message: a thinking signature, Gemini's thought
        # signatures of these calls (the next request is refused without them).
        self.progress.loop_messages.append(
            ChatMessage.assistant(
                self.ctx.llm_text, calls, response.reasoning_content, response.provider_data
            )
        )
        tool_round = ToolRound(calls)
        tool_round.start(
            functools.partial(self.run_tool_call, tools=tools), self.parts.tasks, "tool-call"
        )
        return tool_round

    async def close_round(self, tool_round: ToolRound) -> list[ToolResult]:
        results = await tool_round.results()
        self.progress.loop_messages += [self.media.tool_message(r) for r in results]
        return results

    async def run_tool_call(self, call: ToolCall, tools: dict[str, ToolDef]) -> ToolResult:
        # Each call gets its own context (its own tool_call, deny, tool_result) sharing the
        # turn's lists, so concurrent calls of one round do not overwrite each other.
        ctx = dataclasses.replace(self.ctx, tool_call=call, deny=False, tool_result=None)
        if await self.stage(Stage.BEFORE_TOOLCALL, ctx):
            return ToolResult(
                call.id,
                call.name,
                "the turn ended before this call ran",
                is_error=True,
                denied=True,
            )
        call = ctx.tool_call or call
        started = time.perf_counter()
        if ctx.deny:
            result = ToolResult(
                call.id, call.name, f"tool call {call.name} was denied", is_error=True, denied=True
            )
        else:
            result = await self.parts.runner.execute(call, tools)
        ms = (time.perf_counter() - started) * 1000
        self.trace.append(TraceStep("execute", TraceKind.TOOL, ms, call.name))
        ctx.tool_result = result
        await self.stage(Stage.AFTER_TOOLCALL, ctx)
        result = ctx.tool_result or result
        self.ctx.tool_results.append(result)
        self.publish(
            tool_called(call, result, round_=self.rounds, denied=result.denied, ms=round(ms, 3))
        )
        return result

    async def answer_without_model(self, failed: AllProvidersFailed) -> bool:
        """Every model source failed: the failback responder (recoverydiag) answers with its
        diagnosis, so the user still gets a reply. False when there is none."""
        responder = self.parts.without_model
        if responder is None:
            return False
        self.ctx.llm_text = await responder(self.ctx.raw_message, failed)
        self.ctx.tool_calls = []
        self.ended_by = EndedBy.ANSWER
        log.warning("no model source answered; the failback responder replied: %s", failed)
        self.publish(SystemNote(kind="answered_without_model", detail={"reason": str(failed)}))
        return True

    async def answer_at_cap(self) -> bool:
        """The round cap is reached with calls still coming: one last call without tools, so
        the turn ends with an answer. True on a short-circuit."""
        self.ended_by = EndedBy.MAX_TOOL_ROUNDS
        log.info(
            "turn reached max_tool_rounds (%d); asking for an answer", self.progress.rounds_done
        )
        self.publish(
            SystemNote(kind="max_tool_rounds", detail={"rounds": self.progress.rounds_done})
        )
        # The answer is a model call, and a round, of its own: its text streams apart from
        # what the last tool round said, as every round's does.
        self.rounds = self.progress.rounds_done + 1
        await self.call_model({}, extra_system=CAP_NOTE)
        self.ctx.tool_calls = []
        return await self.stage(Stage.POST_ACTION)

    # ---- the end of a turn -----------------------------------------------------------------

    async def emit_response(self) -> None:
        ctx = self.ctx
        if ctx.skip_output or not ctx.final_text or ctx.channel == CONSOLIDATION_CHANNEL:
            return
        self.delivered = await self.parts.deliver(ctx.channel, ctx.final_text)

    async def short_circuit(self) -> TurnResult:
        stage = self.ctx.phase
        self.ended_by = EndedBy.SHORT_CIRCUIT
        self.short_circuit_stage = stage
        self.ctx.final_text = self.ctx.response or ""
        self.publish(SystemNote(kind="short_circuit", detail={"stage": stage.value}))
        await self.step("output_send", self.emit_response)
        await self.stage(Stage.AFTER_OUTPUT)
        return self.finish()

    async def stopped_at_pre_action(self) -> TurnResult:
        """A stop covered this input while it waited: it is recorded, never answered."""
        await self.record_stop()
        await self.stage(Stage.AFTER_OUTPUT)
        return self.finish()

    async def record_stop(self) -> None:
        """Leave no orphan: the input and whatever reply there was are kept in memory,
        marked as stopped, and nothing is sent."""
        self.ended_by = EndedBy.STOPPED
        streamed = self.progress.reply.text if self.progress.reply is not None else ""
        partial = (streamed or self.ctx.llm_text).strip()
        self.ctx.final_text = f"{STOPPED_NOTE} {partial}".strip()
        self.publish(SystemNote(kind="stopped", detail={"channel": self.ctx.channel}))
        if self.parts.memory is not None:
            await self.parts.memory.append_reply(self.ctx)
        self.ctx.final_text = ""

    def finish(self) -> TurnResult:
        result = TurnResult(
            reply=self.ctx.final_text,
            channel=self.ctx.channel,
            rounds=self.rounds,
            outcome=self.ended_by,
            delivered=self.delivered,
            tool_results=list(self.ctx.tool_results),
            trace=self.trace,
            stage=self.short_circuit_stage,
            usage=self.usage,
            cost=self.cost,
        )
        self.publish(
            AgentOutput(
                text=result.reply,
                channel=result.channel,
                delivered=result.delivered,
                rounds=result.rounds,
                ended_by=result.ended_by,
            )
        )
        self.publish_finished()
        return result

    def publish_finished(self, **detail: Any) -> None:
        model_ms = sum(s.ms for s in self.trace if s.kind is TraceKind.MODEL)
        tool_ms = sum(s.ms for s in self.trace if s.kind is TraceKind.TOOL)
        total = sum(s.ms for s in self.trace)
        self.publish(
            TurnFinished(
                channel=self.ctx.channel,
                ended_by=ended_by_wire(self.ended_by, self.short_circuit_stage),
                rounds=self.rounds,
                kernel_ms=round(total - model_ms - tool_ms, 3),
                model_ms=round(model_ms, 3),
                tool_ms=round(tool_ms, 3),
                usage=self.usage.to_json(),
                cost=None if self.cost is None else round(self.cost, 6),
                detail=detail,
            )
        )

    def publish(self, payload: Payload) -> None:
        """Every event of a turn names its own input: a preempted turn's shielded reply may
        go out after the next input has started, so "the input running now" is not it."""
        if self.given.input_id is not None and payload.input_id is None:
            payload = dataclasses.replace(payload, input_id=self.given.input_id)
        self.parts.events.emit(payload, source="agent")


def _call_json(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "arguments": call.arguments}


_INJECTABLE = frozenset({Role.SYSTEM, Role.USER, Role.ASSISTANT})


def _injected(message: dict[str, Any]) -> ChatMessage:
    """A message a pre_action or post_action handler put into `context_messages`. A role
    other than system, user or assistant cannot stand alone in a conversation (a tool
    message answers a call), so it goes in as system text, with a warning."""
    role = str(message.get("role", "system"))
    if role not in _INJECTABLE:
        log.warning("injected message with role %r sent as a system message", role)
        role = Role.SYSTEM
    return ChatMessage(Role(role), str(message.get("content", "")))
