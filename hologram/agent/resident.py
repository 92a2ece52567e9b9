"""Resident sub-agents (spec 000: "Resident sub-agents and timely feedback").

A resident is a lightweight agent that stays: the main agent creates it with a brief, sends it
tasks, and hears back as each finishes. It has a scheduler of its own (its tasks queue and
preempt by level as the main agent's inputs do), a temporary memory of its own (the messages
of its past tasks, bounded, which `compress` folds into a summary), and the kernel's output
channels, so it can tell the user something directly. It has no share in the main agent's
memory, stage pipeline or input channels.

A finished task is reported to the main agent as an L3 input (spec: "resident-agent
reports" are interactive) on the channel the task was sent from. When the main agent reclaims
or destroys a resident, it decides what becomes of the tasks left unfinished there: returned
to its own queue (`keep`, the default) or dropped, each one logged.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from hologram.agent.dispatcher import Dispatcher, TaskStopped
from hologram.agent.loop import LoopFrame, LoopParts, ToolLoop
from hologram.agent.ports import ChatModel
from hologram.kernel import TaskScope
from hologram.llm import ChatMessage, CompletionRequest, Role
from hologram.sdk import (
    Clock,
    Emit,
    Param,
    Priority,
    SystemNote,
    ToolDef,
    ToolError,
)
from hologram.stages import ToolRunner

log = logging.getLogger(__name__)

RESIDENT_AGENTS = "resident_agents"
NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
ResidentAction = Literal["list", "create", "send", "inspect", "compress", "reclaim", "destroy"]
Residual = Literal["keep", "drop"]

BRIEF = (
    "You are '{name}', a resident assistant working for a companion agent. Your standing "
    "brief:\n\n{brief}\n\nEach user message is a task from the agent. Answer with the result "
    "as plain text: the agent receives it. You may message the user directly with the "
    "output_send tools when the brief asks you to."
)
COMPRESS = (
    "Summarise your work so far in a few sentences: what you were asked, what you found or "
    "did, and anything still open. This summary replaces your notes."
)

Report = Callable[[str, str, str, Priority], Coroutine[Any, Any, Any]]
"""report(text, channel, source, level): hand a message to the main agent's scheduler."""


@dataclass(eq=False)
class ResidentTask:
    """One task of a resident (its dispatcher's `Work`)."""

    text: str
    channel: str
    resident: Resident
    report: bool = True
    frame: LoopFrame | None = None

    async def run(self, stopped: bool) -> str:
        return await self.resident.work(self)


@dataclass(eq=False)
class Resident:
    name: str
    brief: str
    loop: Dispatcher[ResidentTask, str]
    tool_loop: ToolLoop
    memory_messages: Callable[[], int]
    memory: list[ChatMessage] = field(default_factory=list)
    """Its temporary memory: the user/assistant pairs of its finished tasks."""
    done: int = 0

    def system(self) -> ChatMessage:
        return ChatMessage.system(BRIEF.format(name=self.name, brief=self.brief))

    async def work(self, job: ResidentTask) -> str:
        if job.frame is None:
            history = [self.system(), *self.memory, ChatMessage.user(job.text)]
            job.frame = LoopFrame(history)
        text = await self.tool_loop.run(job.frame)
        self.memory += [ChatMessage.user(job.text), ChatMessage.assistant(text)]
        limit = self.memory_messages()
        if len(self.memory) > limit:
            # Oldest first, whole task pairs: compress keeps more, for a model call.
            self.memory = self.memory[len(self.memory) - limit :]
            if self.memory and self.memory[0].role is Role.ASSISTANT:
                self.memory = self.memory[1:]
        self.done += 1
        return text

    def status(self) -> dict[str, Any]:
        scheduler = self.loop.scheduler
        return {
            "name": self.name,
            "busy": scheduler.current is not None,
            "queued": self.loop.pending_inputs(),
            "suspended": len(scheduler.stack),
            "done": self.done,
            "memory_messages": len(self.memory),
        }


class Residents:
    """The residents of one main agent, and the `resident_agents` tool over them."""

    def __init__(
        self,
        *,
        model: ChatModel,
        runner: ToolRunner,
        tools: Callable[[], dict[str, ToolDef]],
        clock: Clock,
        emit: Emit,
        report: Report,
        max_rounds: Callable[[], int],
        max_residents: Callable[[], int],
        memory_messages: Callable[[], int],
        tasks: TaskScope,
        cooldown: float = 2.0,
    ) -> None:
        self._model = model
        self._tasks = tasks
        self._runner = runner
        self._tools = tools
        self._clock = clock
        self._emit = emit
        self._report = report
        self._max_rounds = max_rounds
        self._max_residents = max_residents
        self._memory_messages = memory_messages
        self._cooldown = cooldown
        self._residents: dict[str, Resident] = {}
        self._task_ids = itertools.count(1)
        self._reports: set[asyncio.Task[Any]] = set()

    def names(self) -> list[str]:
        return sorted(self._residents)

    def status(self) -> list[dict[str, Any]]:
        return [self._residents[name].status() for name in self.names()]

    def get(self, name: str) -> Resident:
        resident = self._residents.get(name)
        if resident is None:
            known = ", ".join(self.names()) or "none"
            raise ToolError(f"no resident named {name!r} (residents: {known})")
        return resident

    # ---- the control plane ---------------------------------------------------------------------

    def create(self, name: str, brief: str) -> Resident:
        if not NAME.match(name):
            raise ToolError(
                f"resident name {name!r} is not allowed: use 1-32 lowercase letters, digits, "
                "'_' or '-', starting with a letter"
            )
        if name in self._residents:
            raise ToolError(f"a resident named {name!r} exists already")
        if len(self._residents) >= self._max_residents():
            raise ToolError(
                f"there are {len(self._residents)} residents already, the most allowed "
                "(core.agent.max_residents); reclaim or destroy one first"
            )
        if not brief.strip():
            raise ToolError("a resident needs a brief: what it is there for")
        label = f"resident:{name}"
        parts = LoopParts(self._model, self._runner, self._emit, self._tasks)
        tool_loop = ToolLoop(label, parts, self.resident_tools, self._max_rounds)
        loop: Dispatcher[ResidentTask, str] = Dispatcher(
            self._clock, cooldown=self._cooldown, tasks=self._tasks
        )
        resident = Resident(name, brief.strip(), loop, tool_loop, self._memory_messages)
        self._residents[name] = resident
        loop.start()
        self._emit(SystemNote(kind="resident_created", detail={"name": name}), source=label)
        log.info("resident %s created", name)
        return resident

    def send(
        self,
        name: str,
        text: str,
        channel: str,
        level: Priority = Priority.QUEUED,
        report: bool = True,
    ) -> int:
        """Queue a task with the resident; returns its task id at once."""
        resident = self.get(name)
        if level is Priority.L4:
            raise ToolError("L4 is the kernel's own level; a resident task may ask for L1-L3")
        task_id = next(self._task_ids)
        job = ResidentTask(text, channel, resident, report)
        ticket = resident.loop.inject(task_id, job, level, source="parent")
        ticket.outcome.add_done_callback(lambda outcome: self._settled(name, task_id, job, outcome))
        return task_id

    def inspect(self, name: str) -> dict[str, Any]:
        resident = self.get(name)
        scheduler = resident.loop.scheduler
        return {
            **resident.status(),
            "brief": resident.brief,
            "running": None if scheduler.current is None else scheduler.current.id,
            "waiting": [t.id for t in scheduler.waiting()],
            "memory": [{"role": m.role.value, "text": m.content} for m in resident.memory],
        }

    async def compress(self, name: str) -> str:
        """Fold the resident's memory into one summary written by the model."""
        resident = self.get(name)
        if not resident.memory:
            return ""
        messages = [resident.system(), *resident.memory, ChatMessage.user(COMPRESS)]
        summary = (await self._model.chat(CompletionRequest(messages, []))).content.strip()
        before = len(resident.memory)
        resident.memory = [ChatMessage.assistant(f"(summary of earlier work) {summary}")]
        self._emit(
            SystemNote(kind="resident_compressed", detail={"messages_before": before}),
            source=f"resident:{name}",
        )
        return summary

    async def remove(self, name: str, residual: str, *, keep_memory: bool) -> dict[str, Any]:
        """End a resident (reclaim or destroy). Its unfinished tasks go back to the main
        agent's queue (`keep`) or are dropped, each logged (`drop`)."""
        if residual not in ("keep", "drop"):
            raise ToolError(f"residual must be 'keep' or 'drop', not {residual!r}")
        resident = self.get(name)
        unfinished: list[ResidentTask] = resident.loop.unfinished()
        del self._residents[name]
        await resident.loop.close()
        source = f"resident:{name}"
        for task in unfinished:
            if residual == "keep":
                await self._report(task.text, task.channel, source, Priority.QUEUED)
            else:
                log.warning("resident %s: dropped an unfinished task: %.80s", name, task.text)
                self._emit(SystemNote(kind="resident_task_dropped"), source=source)
        self._emit(
            SystemNote(
                kind="resident_removed",
                detail={"residual": residual, "unfinished": len(unfinished)},
            ),
            source=source,
        )
        outcome: dict[str, Any] = {
            "name": name,
            "residual": residual,
            "unfinished": len(unfinished),
        }
        if keep_memory:
            outcome["memory"] = [m.content for m in resident.memory]
        return outcome

    async def close(self) -> None:
        """Kernel shutdown: unfinished resident tasks are not handed back (there is no
        queue left to take them); they are logged."""
        for name in self.names():
            resident = self._residents.pop(name)
            left = resident.loop.unfinished()
            if left:
                log.warning("resident %s closed with %d unfinished task(s)", name, len(left))
            await resident.loop.close()
        await asyncio.gather(*self._reports, return_exceptions=True)

    # ---- one task --------------------------------------------------------------------------

    def resident_tools(self) -> dict[str, ToolDef]:
        """The kernel's tools, less those that create agents (no resident breeds more)."""
        return {
            name: tool
            for name, tool in self._tools().items()
            if name not in (RESIDENT_AGENTS, "spawn_child")
        }

    def _settled(self, name: str, task_id: int, job: ResidentTask, outcome: Any) -> None:
        if outcome.cancelled() or isinstance(outcome.exception(), TaskStopped):
            return  # reclaimed, destroyed or shut down: `remove` decides about it
        source = f"resident:{name}"
        error = outcome.exception()
        if error is not None:
            log.warning("resident %s: task %d failed: %s", name, task_id, error)
            text = f"[resident {name}] task {task_id} failed: {error}"
        else:
            text = f"[resident {name}] task {task_id} done:\n{outcome.result()}"
        self._emit(
            SystemNote(
                kind="resident_task_done", detail={"task": task_id, "failed": error is not None}
            ),
            source=source,
        )
        if job.report:
            # Kept until done: close waits for the reports in flight before the main
            # agent's queue goes away. A report that fails is the group's to announce.
            reporting = self._tasks.spawn(
                self._report(text, job.channel, source, Priority.L3), name=f"{source}-report"
            )
            self._reports.add(reporting)
            reporting.add_done_callback(self._reports.discard)

    # ---- the tool ------------------------------------------------------------------------------

    def tool(self, current_channel: Callable[[], str]) -> ToolDef:
        """`resident_agents`; a task's report goes to `current_channel()` as of its sending."""

        async def resident_agents(
            action: ResidentAction,
            name: str | None = None,
            brief: str | None = None,
            text: str | None = None,
            level: Annotated[int, Param(ge=0, le=3)] = 0,
            report: bool = True,
            residual: Residual = "keep",
        ) -> Any:
            """Manage resident assistants that work beside you and report back. list: who
            is there. create (name, brief): start one with a standing brief. send (name,
            text, level 0-3, report): queue a task with it; its result comes back to you as
            a message when done. inspect (name): its queue and notes. compress (name): fold
            its notes into a summary. reclaim (name, residual): end it and get its notes
            back; destroy (name, residual): end it. residual 'keep' (default) returns its
            unfinished tasks to you, 'drop' discards them."""
            if action == "list":
                return self.status()
            name = _required(name, "name", action)
            if action == "create":
                self.create(name, _required(brief, "brief", action))
                return f"resident {name} created"
            if action == "send":
                task = _required(text, "text", action)
                task_id = self.send(name, task, current_channel(), Priority(level), report=report)
                return f"task {task_id} queued with resident {name}"
            if action == "inspect":
                return self.inspect(name)
            if action == "compress":
                return await self.compress(name) or f"resident {name} has nothing to compress"
            return await self.remove(name, residual, keep_memory=action == "reclaim")

        return ToolDef.from_function(resident_agents, name=RESIDENT_AGENTS, owner="kernel")


def _required(value: str | None, key: str, action: str) -> str:
    if value is None or not value.strip():
        raise ToolError(f"resident_agents {action} needs '{key}'")
    return value
