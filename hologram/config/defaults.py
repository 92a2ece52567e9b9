"""The core settings and their defaults, as the spec names them. Modules add their own."""

from __future__ import annotations

from hologram.config.keys import Setting
from hologram.sdk import CONSOLIDATION_CHANNEL

SECURITY_DEFAULTS: tuple[Setting, ...] = (
    Setting("core.security.enabled", True, "the firewall: off only to measure it"),
    Setting("core.security.tools.allow", [], "tool name patterns allowed; empty: every tool"),
    Setting("core.security.tools.deny", [], "tool name patterns refused; deny wins over allow"),
    Setting(
        "core.security.tools.hard_private",
        ["files_write", "spawn_*", "resident_*"],
        "tool patterns only internal principals (the owner, the kernel) may call",
    ),
    Setting(
        "core.security.tools.write",
        ["*write*", "*save*", "*delete*", "*remove*", "*create*", "*append*", "*move*", "*edit*"],
        "tool patterns whose path arguments are checked against the write roots",
    ),
    Setting(
        "core.security.tools.network",
        ["*fetch*", "*http*", "*download*", "*browse*"],
        "tool patterns that need the network (refused while core.security.network is off)",
    ),
    Setting(
        "core.security.tools.path_args",
        [
            *("path", "paths", "file", "filename", "file_path", "dir", "directory", "folder"),
            *("root", "src", "dst", "source", "destination", "target"),
        ],
        "argument names whose values are paths for the sandbox",
    ),
    Setting("core.security.read_roots", [], "folders tools may read; empty: the default two"),
    Setting("core.security.write_roots", [], "folders tools may write; empty: as read_roots"),
    Setting("core.security.network", True, "network switch for tools"),
    Setting(
        "core.security.internal_channels",
        ["notebook", "test", "http", "cli", CONSOLIDATION_CHANNEL],
        "input channels whose inputs speak for the owner (internal principal)",
    ),
    Setting("core.security.review.sensitive_words", [], "words masked in inputs and results"),
    Setting("core.security.review.injection", True, "flag prompt-injection phrasing"),
)

CORE_DEFAULTS: tuple[Setting, ...] = (
    Setting("core.agent.max_tool_rounds", 10, "tool-loop rounds before a turn must answer"),
    Setting("core.agent.child_max_tool_rounds", 5, "tool-loop rounds of a child agent"),
    Setting("core.agent.max_residents", 8, "resident sub-agents alive at once"),
    Setting("core.agent.resident_max_tool_rounds", 8, "tool-loop rounds of one resident task"),
    Setting("core.agent.resident_memory_messages", 40, "messages a resident's notes keep"),
    Setting("core.agent.personal_prompt", "", "persona text, when personal/personal.md is absent"),
    Setting("core.agent.tool_timeout_s", 60.0, "seconds one tool call may take"),
    Setting("core.scheduler.preempt_cooldown_s", 2.0, "seconds a preempted task is protected"),
    Setting("core.scheduler.offload_threshold_s", 300.0, "busy seconds before triage takes over"),
    Setting("core.scheduler.offload_enabled", True, "hand the backlog to a triage assistant"),
    Setting("core.memory.embedder", "default", "embedder name (built-in or entry point)"),
    Setting("core.memory.context.top_k", 40, "events the context window keeps after a prune"),
    Setting("core.memory.context.protected_recent", 10, "newest events never pruned"),
    Setting("core.memory.coldcontext.query_top", 3, "cold-context documents put in the prompt"),
    Setting(
        "core.memory.recall.vector_weight",
        0.1,
        "weight of the vector rank beside the word rank in recall (0: vectors only fill in "
        "after the words; a semantic embedder deserves more than the hashed default)",
    ),
    Setting("core.memory.coldcontext.archive_age_h", 72.0, "hours untouched before archival"),
    Setting("core.memory.coldcontext.archive_max_access", 2, "accesses that still allow archival"),
    Setting("core.memory.heartbeat.distill_interval_min", 30, "context prune into cold context"),
    Setting("core.memory.heartbeat.archive_interval_min", 60, "cold context into the graph"),
    Setting("core.memory.heartbeat.merge_interval_min", 120, "entity merge candidates"),
    Setting("core.memory.heartbeat.review_interval_min", 120, "relation review"),
    Setting("core.memory.merge.jaccard_threshold", 0.75, "bigram Jaccard for merge candidates"),
    Setting("core.llm.active_source", "default", "the source tried first"),
    Setting("core.llm.max_target_tokens", 600000, "cap of the working band (context budget)"),
    Setting("core.llm.sources.default.adapter", "openai", "Lua adapter of the seed source"),
    Setting("core.llm.sources.default.base_url", "", "empty: the offline scripted model"),
    Setting("core.llm.sources.default.api_key", "", "API key of the seed source"),
    Setting("core.llm.sources.default.model", "", "model name of the seed source"),
    Setting("core.llm.sources.default.context_window", 0, "declared window; 0: look it up"),
    Setting("core.events.subscriber_queue", 1000, "events an async subscriber may fall behind"),
    *SECURITY_DEFAULTS,
)

ENV_OVERRIDES: dict[str, str] = {
    "HOLOGRAM_LLM_API_KEY": "core.llm.sources.default.api_key",
    "HOLOGRAM_LLM_BASE_URL": "core.llm.sources.default.base_url",
    "HOLOGRAM_LLM_MODEL": "core.llm.sources.default.model",
    "HOLOGRAM_LLM_ADAPTER": "core.llm.sources.default.adapter",
}
"""Environment variables that override a key for one run without writing it to disk, so a
key can come from the environment and never touch the config database."""
