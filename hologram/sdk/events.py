"""Events on the kernel's bus."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class EventType(StrEnum):
    """Kinds of event the kernel publishes (spec 001, the event system; spec 000 adds
    `agent_llm_chain`). Plugins may publish their own types as `plugin.<name>.<kind>`."""

    RAW_INPUT = "raw_input"
    AGENT_OUTPUT = "agent_output"
    TOOL_CALL = "tool_call"
    REASONING = "reasoning"
    SYSTEM = "system"
    AGENT_LLM_CHAIN = "agent_llm_chain"
    KERNEL_READY = "kernel_ready"
    KERNEL_STOPPING = "kernel_stopping"
    CONFIG_CHANGED = "config_changed"
    SUBSCRIBER_ERROR = "subscriber_error"
    EVENTS_DROPPED = "events_dropped"
    SCHEDULER = "scheduler"
    STAGE = "stage"
    STAGE_HANDLER_ERROR = "stage_handler_error"
    STAGE_WRITE_REFUSED = "stage_write_refused"
    TURN_STARTED = "turn_started"
    TURN_FINISHED = "turn_finished"
    MEMORY_DEGRADED = "memory_degraded"
    """A memory layer runs on less than it was configured for (an embedder fell back, a
    corrupt file was skipped); the payload says which layer and why."""
    MEMORY_REEMBED = "memory_reembed"
    """Progress of recomputing vectors whose fingerprint is not the current embedder's."""
    CONTEXT_APPENDED = "context_appended"
    CONTEXT_PRUNED = "context_pruned"
    """One prune of the context window: the query and every candidate's score and fate."""
    COLD_CONTEXT_ARCHIVED = "coldcontext_archived"
    COLD_CONTEXT_CONSUMED = "coldcontext_consumed"
    GRAPH_COMMITTED = "graph_committed"
    """Triples written to the graph: the facts added, confirmed and closed."""
    GRAPH_FACT_CLOSED = "graph_fact_closed"
    """Facts closed (contradicted, edited, purged): kept for history, no longer current."""
    GRAPH_MERGED = "graph_merged"
    GRAPH_ENTITY_DELETED = "graph_entity_deleted"
    GRAPH_RECALLED = "graph_recalled"
    """A recall from the graph: the entities it touched (the graph widget highlights them)."""
    HEARTBEAT_TICK = "heartbeat_tick"
    """One tick of a memory heartbeat loop: which loop, what it did, model calls made."""
    CONSOLIDATION_TASK = "consolidation_task"
    """A merge or review task sent through the `_consolidation_` self-input channel."""
    KNOWLEDGE_ADDED = "knowledge_added"
    PROVIDER_UNAVAILABLE = "provider_unavailable"
    """An LLM source failed and is set aside: until its config changes, or for a backoff."""
    PROVIDER_SKIPPED = "provider_skipped"
    PROVIDER_FALLBACK = "provider_fallback"
    """A later source answered because the ones before it failed or were skipped."""
    PROVIDER_RECOVERED = "provider_recovered"
    PROVIDER_SWITCHED = "provider_switched"
    PROVIDER_OFFLINE = "provider_offline"
    """No LLM is configured: the offline scripted model answers."""
    PROVIDERS_EXHAUSTED = "providers_exhausted"
    PROVIDER_RETRY = "provider_retry"
    """A model call is made again: within a source after the delay the provider asked for
    (or after an overloaded answer), or by a turn with a shorter prompt after the model
    said the prompt was too long."""
    PROVIDER_IMAGES_AS_TEXT = "provider_images_as_text"
    """A source whose model reads no images was sent a text note naming each image (and
    the seemedia call that shows it) instead: which source, and the images, never bytes."""
    AGENT_OUTPUT_DELTA = "agent_output_delta"
    """A piece of a reply as the model streams it, with the input it answers (`input_id`)
    and the model round; `restart` set means the text so far is void (the model is asked
    again), `reasoning` set means the piece is the model's reasoning, not its reply."""
    PLUGIN_STARTED = "plugin_started"
    PLUGIN_STOPPED = "plugin_stopped"
    PLUGIN_REFUSED = "plugin_refused"
    """A plugin that was not loaded: bad manifest, both copies, a refused package."""
    PLUGIN_CRASHED = "plugin_crashed"
    """A subprocess plugin exited on its own; its registrations are detached."""
    PLUGIN_RESTARTING = "plugin_restarting"
    PLUGIN_RPC_ERROR = "plugin_rpc_error"
    """A bad frame or a refused call from a subprocess plugin."""
    PLUGIN_SKILL_FLAGGED = "plugin_skill_flagged"
    """A skill whose text looks dangerous (credential exfiltration, pipe-to-shell)."""
    PLUGIN_STATUS = "plugin_status"
    """A plugin reported its own state (the MCP client: its servers, each up or restarting);
    published by the kernel on the plugin's behalf, so external plugins need no `publish`."""
    TERMINAL_OUTPUT = "terminal_output"
    """agentcli's terminals (spec: EventTerminalOutput): output, and created / closed /
    timed out, with `running` saying whether the session still runs."""
    TASK_FAILED = "task_failed"
    """A background task of the kernel raised: which task, whose (the source), and why."""
    TRACKER_FAILED = "tracker_failed"
    """The tracker could not record what a tool call changed (the call itself went on)."""
    TRACKER_FALLBACK = "tracker_fallback"
    """No file watcher answered: a call's changes were found by scanning the paths it names."""
    SECURITY_REFUSED = "security_refused"
    """The firewall refused a tool call; the payload says which tool, for whom and why."""
    SECURITY_FINDING = "security_finding"
    """Content review flagged an input or a tool result: kinds, rules and positions only,
    never the matched text."""
    SECURITY_DEGRADED = "security_degraded"
    """A part of the firewall runs on less than it should (the learned injection score's
    weight file is unusable: review goes on with its rules alone); the payload says why."""


def discard(event_type: str, /, **payload: Any) -> None:
    """The emitter of an object that publishes nowhere (built outside a kernel, in a test):
    it takes what a bus's `emit` takes, so the object never asks whether it has a bus."""
    return None


@dataclass(slots=True)
class Event:
    """One thing that happened. `seq` is assigned by the bus and grows by one per event."""

    type: str
    payload: dict[str, Any] = field(default_factory=dict)
    source: str = "kernel"
    timestamp: float = field(default_factory=time.time)
    seq: int = 0
