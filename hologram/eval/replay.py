"""Replaying a conversation into a real kernel, on the conversation's own dates.

Every turn goes through the memory's public steps, as a turn would take them: appended to
the context window (durably), then the window pruned with the turn as the query, which
archives what falls out into the cold context. Whole turns (`Kernel.say`) are not used: the
dataset already holds both sides of the conversation, and a model's reply would only add
text that the probes do not ask about, at several times the cost.

The kernel's clock is a `ManualClock` moved to each turn's time before the turn is
appended, so everything that sleeps on the clock (heartbeat loops, ageing, archival) wakes
at the moments it would have over the weeks the conversation spans.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from hologram.eval.config import EvalConfig
from hologram.eval.dataset import Conversation, Turn
from hologram.kernel import ManualClock
from hologram.memory import AGENT_SOURCE, Memory
from hologram.sdk import ColdContextArchived, Event

CHANNEL = "replay"
"""The channel replayed inputs arrive on (never `agentcli`/`terminal`: those are not archived)."""

MIN_STEP_S = 0.001
"""Turns given the same time (or out of order) are spread this far apart, so each turn keeps
a time of its own: documents are traced back to turns by their time."""


@dataclass(slots=True)
class ReplayLog:
    turn_at: dict[float, str] = field(default_factory=dict)
    """Each stored event's time → the turn it came from."""
    turn_of_event: dict[str, str] = field(default_factory=dict)
    turn_of_doc: dict[str, str] = field(default_factory=dict)
    """Cold-context document id → turn (from `coldcontext_archived` events): a graph text
    block names the document it came from."""
    turn_of_text: dict[str, str] = field(default_factory=dict)
    """Stored text → turn, for what keeps only the text (a fact's sentence)."""
    source_of: dict[str, str] = field(default_factory=dict)
    """Turn → the source it was stored under (who said it, to the memory)."""

    def on_archived(self, event: Event) -> None:
        """Subscribe to `coldcontext_archived` with this before the replay starts."""
        if not isinstance(event.payload, ColdContextArchived):
            return
        ids, events = event.payload.ids, event.payload.events
        for doc_id, event_id in zip(ids, events, strict=False):
            if event_id in self.turn_of_event:
                self.turn_of_doc[doc_id] = self.turn_of_event[event_id]

    turns: int = 0
    prunes: int = 0
    archived: int = 0


REST_TIMEOUT_S = 30.0
"""After each wake-up the replay waits (in real time, at most this long) for the woken loop
to finish its tick and sleep again before the clock moves on: ticks then never overlap a
turn or each other in an order that depends on thread timing, and a replay gives the same
memory every time, however busy the machine."""


def turn_text(template: str, turn: Turn) -> str:
    """The text a turn is stored as: `template` with ``{speaker}``, ``{text}``, ``{date}``
    (``2024-03-12``) and ``{day}`` (``Tuesday 12 March 2024``) filled in (dates in UTC)."""
    when = datetime.fromtimestamp(turn.at, UTC)
    return template.format(
        speaker=turn.speaker,
        text=turn.text,
        date=when.strftime("%Y-%m-%d"),
        day=f"{when.strftime('%A')} {when.day} {when.strftime('%B %Y')}",
    )


def start_clock(conversation: Conversation) -> ManualClock:
    """A clock one minute before the conversation's first turn."""
    first = next(conversation.turns(), None)
    return ManualClock(start=(first.at if first else 0.0) - 60.0)


async def replay(
    memory: Memory,
    log: ReplayLog,
    clock: ManualClock,
    conversation: Conversation,
    config: EvalConfig,
    progress: Callable[[int, int], None] | None = None,
) -> ReplayLog:
    """Feed every turn of `conversation` into `memory` (a kernel's `state.memory`),
    recording in `log` where each turn went."""
    total = conversation.turn_count
    for turn in conversation.turns():
        target = max(turn.at, clock.now() + MIN_STEP_S)
        await clock.advance(target - clock.now(), rest_timeout_s=REST_TIMEOUT_S)
        text = turn_text(config.text, turn)
        if turn.role == "agent":
            event = await memory.context.append(AGENT_SOURCE, response=text, channel=CHANNEL)
        else:
            # Each person speaks as themselves, as in a group chat: the kernel's recall can
            # then tell one person's turns from another's.
            source = turn.speaker or CHANNEL
            event = await memory.context.append(source, input=text, channel=CHANNEL)
        log.source_of[turn.id] = event.source
        log.turn_at[event.timestamp] = turn.id
        log.turn_of_event[event.id] = turn.id
        log.turn_of_text.setdefault(event.text, turn.id)
        log.turn_of_text.setdefault(turn.text, turn.id)
        report = await memory.prune(text)
        if report.pruned:
            log.prunes += 1
            log.archived += len(report.archived)
        log.turns += 1
        if progress is not None:
            progress(log.turns, total)
    return log
