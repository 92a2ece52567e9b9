"""Every `core.*` setting, one frozen dataclass per section (spec: RegisterDefault's ~80 keys).

Each subsystem reads its section (`config.read(AgentSettings)`, or `Live` to follow changes)
instead of looking keys up by name; the registry registers all of them at boot, so every key
is known before any module runs, to the command line and the settings API as well.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from hologram.config.typed import Section, setting
from hologram.sdk import CONSOLIDATION_CHANNEL


@dataclass(frozen=True, slots=True)
class AgentSettings:
    prefix: ClassVar[str] = "core.agent"

    max_tool_rounds: int = setting(10, "tool-loop rounds before a turn must answer")
    child_max_tool_rounds: int = setting(5, "tool-loop rounds of a child agent")
    max_residents: int = setting(8, "resident sub-agents alive at once")
    resident_max_tool_rounds: int = setting(8, "tool-loop rounds of one resident task")
    resident_memory_messages: int = setting(40, "messages a resident's notes keep")
    personal_prompt: str = setting("", "persona text, when personal/personal.md is absent")
    failback_plugins: tuple[str, ...] = setting(
        ("pluginmgr", "recoverydiag"),
        "plugins that stay up and cannot be stopped by the agent, so a kernel whose models "
        "all fail can still be looked after",
    )
    knowledge_hits: int = setting(
        3, "knowledge entries most relevant to the input shown in the system prompt; 0: none"
    )


@dataclass(frozen=True, slots=True)
class HealthSettings:
    prefix: ClassVar[str] = "core.health"

    min_free_bytes: int = setting(
        64 * 1024 * 1024, "free bytes the data dir's disk needs for the health check to pass"
    )
    reach_timeout_s: float = setting(3.0, "seconds the health check waits on one LLM source")


@dataclass(frozen=True, slots=True)
class StageSettings:
    prefix: ClassVar[str] = "core.stages"

    handler_timeout_s: float = setting(
        30.0, "seconds one stage handler may take before it is cut off"
    )
    tool_timeout_s: float = setting(
        60.0, "seconds one tool call may take", key="core.agent.tool_timeout_s"
    )


@dataclass(frozen=True, slots=True)
class SchedulerSettings:
    prefix: ClassVar[str] = "core.scheduler"

    preempt_cooldown_s: float = setting(2.0, "seconds a preempted task is protected")
    offload_threshold_s: float = setting(300.0, "busy seconds before triage takes over")
    offload_enabled: bool = setting(True, "hand the backlog to a triage assistant")

    def offload_after(self) -> float | None:
        """Seconds an input may wait behind a busy agent before triage, or None when off."""
        return self.offload_threshold_s if self.offload_enabled else None


@dataclass(frozen=True, slots=True)
class EventSettings:
    prefix: ClassVar[str] = "core.events"

    subscriber_queue: int = setting(1000, "events an async subscriber may fall behind")


@dataclass(frozen=True, slots=True)
class LLMSettings:
    prefix: ClassVar[str] = "core.llm"

    active_source: str = setting("default", "the source tried first")
    source_order: tuple[str, ...] = setting(
        ("default",), "source names in the order they are tried"
    )
    max_target_tokens: int = setting(600000, "cap of the working band (context budget)")
    timeout_s: float = setting(120.0, "seconds a model call may take (per source: timeout_s)")
    backoff_s: float = setting(5.0, "first pause after a 429, 5xx, timeout or bad response")
    backoff_max_s: float = setting(300.0, "longest pause; each failure in a row doubles it")
    lua_http_timeout_s: float = setting(10.0, "timeout of an adapter's http_get/http_post")
    retries: int = setting(
        3, "retries within a source that said when to come back (Retry-After) or is overloaded"
    )
    retry_wait_max_s: float = setting(
        20.0, "the longest wait for a retry within a source; longer: the next source answers"
    )
    retry_jitter: float = setting(0.1, "up to this share of a retry's wait is added at random")
    overloaded_delay_s: float = setting(
        1.0, "first wait after an overloaded answer that named no delay; doubles per retry"
    )
    call_deadline_s: float = setting(
        90.0, "seconds one model call may spend waiting for retries, over all its sources"
    )
    cooldown_s: float = setting(
        3600.0, "how long a refused key or a spent quota sets a source aside (or a config change)"
    )
    prices: Mapping[str, Any] = setting(
        {},
        'price per million tokens by model, e.g. {"gpt-4o": {"input": 2.5, "cached": 1.25, '
        '"output": 10}}; the longest matching model prefix wins',
    )


@dataclass(frozen=True, slots=True)
class SourceSettings:
    """One LLM source, `core.llm.sources.<name>.*` (the seed source is named default).

    Read through `hologram.llm.sources`, which also reports what is wrong with a source
    instead of refusing the whole kernel."""

    prefix: ClassVar[str] = "core.llm.sources.{name}"
    all_prefix: ClassVar[str] = "core.llm.sources."

    adapter: str = setting("openai", "Lua adapter of the seed source")
    base_url: str = setting("", "empty: the offline scripted model")
    api_key: str = setting("", "API key of the seed source")
    model: str = setting("", "model name of the seed source")
    context_window: int = setting(0, "declared window; 0: look it up")
    # Keys a source may set that have no default, read by hologram.llm.sources: timeout_s
    # (seconds a call may take; without one, core.llm.timeout_s applies) and accepts_images
    # (true or false: whether the source's model reads images; without one, as its adapter
    # declares).
    unset_by_default: ClassVar[tuple[str, ...]] = ("timeout_s", "accepts_images")


@dataclass(frozen=True, slots=True)
class PluginSettings:
    prefix: ClassVar[str] = "core.plugins"

    autostart: tuple[str, ...] = setting(
        (), "shipped plugins started at boot (user plugins follow auto_start)"
    )
    restart_backoff_s: float = setting(
        0.5, "first delay before restarting a crashed subprocess plugin; doubles"
    )
    restart_backoff_max_s: float = setting(30.0, "the longest delay between two restarts")
    max_restarts: int = setting(5, "restarts in a row before a crashing plugin is left stopped")
    max_frame_bytes: int = setting(
        8 * 1024 * 1024, "the longest RPC frame a subprocess plugin may send"
    )
    start_timeout_s: float = setting(10.0, "seconds a plugin has for handshake, init and start")
    max_package_bytes: int = setting(20 * 1024 * 1024, "the largest .hmap package accepted")


@dataclass(frozen=True, slots=True)
class SecuritySettings:
    prefix: ClassVar[str] = "core.security"
    credential_prefix: ClassVar[str] = "core.security.credential."

    enabled: bool = setting(True, "the firewall: off only to measure it")
    tools_allow: tuple[str, ...] = setting(
        (), "tool name patterns allowed; empty: every tool", key="tools.allow"
    )
    tools_deny: tuple[str, ...] = setting(
        (), "tool name patterns refused; deny wins over allow", key="tools.deny"
    )
    tools_hard_private: tuple[str, ...] = setting(
        (
            *("files_write", "spawn_*", "resident_*", "cmd_run", "terminal_*"),
            *("pluginmgr_*", "skillmgr_*", "cfgmgr_*", "llm_switch", "health_check", "changes_*"),
        ),
        "tool patterns only internal principals (the owner, the kernel) may call",
        key="tools.hard_private",
    )
    tools_write: tuple[str, ...] = setting(
        ("*write*", "*save*", "*delete*", "*remove*", "*create*", "*append*", "*move*", "*edit*"),
        "tool patterns whose path arguments are checked against the write roots",
        key="tools.write",
    )
    tools_network: tuple[str, ...] = setting(
        ("*fetch*", "*http*", "*download*", "*browse*"),
        "tool patterns that need the network (refused while core.security.network is off)",
        key="tools.network",
    )
    tools_path_args: tuple[str, ...] = setting(
        (
            *("path", "paths", "file", "filename", "file_path", "dir", "directory", "folder"),
            *("root", "src", "dst", "source", "destination", "target"),
        ),
        "argument names whose values are paths for the sandbox",
        key="tools.path_args",
    )
    read_roots: tuple[str, ...] = setting((), "folders tools may read; empty: the default two")
    write_roots: tuple[str, ...] = setting((), "folders tools may write; empty: as read_roots")
    network: bool = setting(True, "network switch for tools")
    internal_channels: tuple[str, ...] = setting(
        ("notebook", "test", "http", "cli", CONSOLIDATION_CHANNEL),
        "input channels whose inputs speak for the owner (internal principal)",
    )
    review_sensitive_words: tuple[str, ...] = setting(
        (), "words masked in inputs and results", key="review.sensitive_words"
    )
    review_injection: bool = setting(True, "flag prompt-injection phrasing", key="review.injection")
    cfgmgr_allow: tuple[str, ...] = setting(
        (
            *("core.agent.", "core.llm.", "core.memory.", "core.scheduler.", "core.stages."),
            *("core.security.credential.", "plugin."),
        ),
        "key prefixes the agent's cfgmgr tools may read and change (this key never)",
        key="cfgmgr.allow",
    )


@dataclass(frozen=True, slots=True)
class EmbedderSettings:
    prefix: ClassVar[str] = "core.memory"
    options_prefix: ClassVar[str] = "core.memory.embedders."

    embedder: str = setting("default", "embedder name (built-in or entry point)")
    embedder_fallback: str = setting(
        "",
        "embedder used, loudly, when the configured one cannot load; "
        "empty: refuse to start instead",
    )
    default_dim: int = setting(
        384, "dimension of the hashed n-gram space", key="embedders.default.dim"
    )
    tfidf_dim: int = setting(
        2048, "dimension of the hashed TF-IDF space", key="embedders.tfidf.dim"
    )
    static_path: str = setting("", "word2vec/fastText text file", key="embedders.static.path")
    http_base_url: str = setting(
        "",
        "OpenAI-compatible API root, e.g. http://127.0.0.1:11434/v1",
        key="embedders.http.base_url",
    )
    http_model: str = setting("", "embedding model name", key="embedders.http.model")
    http_dim: int = setting(0, "dimension the model returns", key="embedders.http.dim")
    http_api_key: str = setting(
        "", "bearer token, if the server wants one", key="embedders.http.api_key"
    )
    http_timeout_s: float = setting(30.0, "seconds per request", key="embedders.http.timeout_s")


@dataclass(frozen=True, slots=True)
class MemorySettings:
    """The context window, the cold context and recall."""

    prefix: ClassVar[str] = "core.memory"

    top_k: int = setting(40, "events the context window keeps after a prune", key="context.top_k")
    protected_recent: int = setting(
        10, "newest events never pruned", key="context.protected_recent"
    )
    query_top: int = setting(
        3, "cold-context documents put in the prompt", key="coldcontext.query_top"
    )
    min_similarity: float = setting(
        0.12,
        "cosine below which vector recall ignores a document",
        key="coldcontext.min_similarity",
    )
    vector_weight: float = setting(
        0.1,
        "weight of the vector rank beside the word rank in recall (0: vectors only fill in "
        "after the words; a semantic embedder deserves more than the hashed default)",
        key="recall.vector_weight",
    )
    blas_threads: int = setting(
        1,
        "threads the BLAS library (numpy's matrix products) may use in this process; recall's "
        "products are small, and a BLAS pool spinning on every core costs them several times "
        "their own time on a busy machine (0: leave it as the library chose)",
    )
    text_max_bytes: int = setting(10_000_000, "size of one text-log file", key="text.max_bytes")
    text_retention_days: int = setting(
        30, "days text-log files are kept", key="text.retention_days"
    )


DEFAULT_SINGLE_VALUED = "age,birthday,is_named,job,lives_in,located_in,name,spouse,works_as"
"""The graph's own list (hologram.memory.graph.store.SINGLE_VALUED), as the setting spells it."""


@dataclass(frozen=True, slots=True)
class GraphSettings:
    """The graph, its indexer, distillation and the four heartbeat loops."""

    prefix: ClassVar[str] = "core.memory"

    single_valued: str = setting(
        DEFAULT_SINGLE_VALUED,
        "relation types holding one value at a time (a new one closes the old)",
        key="graph.single_valued",
    )
    indexer_depth: int = setting(2, "hops of the graph walk for the prompt", key="indexer.depth")
    indexer_min_similarity: float = setting(
        0.5, "entity-vector cosine for a seed", key="indexer.min_similarity"
    )
    distill_retention_days: int = setting(
        7, "days distilled raw records are kept", key="distill.retention_days"
    )
    archive_age_h: float = setting(
        72.0, "hours untouched before archival", key="coldcontext.archive_age_h"
    )
    archive_max_access: int = setting(
        2, "accesses that still allow archival", key="coldcontext.archive_max_access"
    )
    distill_interval_min: int = setting(
        30, "context prune into cold context", key="heartbeat.distill_interval_min"
    )
    archive_interval_min: int = setting(
        60, "cold context into the graph", key="heartbeat.archive_interval_min"
    )
    merge_interval_min: int = setting(
        120, "entity merge candidates", key="heartbeat.merge_interval_min"
    )
    review_interval_min: int = setting(120, "relation review", key="heartbeat.review_interval_min")
    rules_interval_min: int = setting(
        10, "rule distillation of user input", key="heartbeat.rules_interval_min"
    )
    max_tasks_per_tick: int = setting(
        3, "model tasks per merge/review tick", key="heartbeat.max_tasks_per_tick"
    )
    heartbeat_source: str = setting(
        "",
        "LLM source for consolidation turns (a cheaper one); empty: the agent's own",
        key="heartbeat.source",
    )
    jaccard_threshold: float = setting(
        0.75, "bigram Jaccard for merge candidates", key="merge.jaccard_threshold"
    )

    def interval_min(self, loop: str) -> float:
        return float(getattr(self, f"{loop}_interval_min"))


@dataclass(frozen=True, slots=True)
class UpdateSettings:
    prefix: ClassVar[str] = "core.update"

    keep_backups: int = setting(
        5, "backups kept in <data>/backups (older ones are removed at start); at least 1"
    )


@dataclass(frozen=True, slots=True)
class MediaSettings:
    prefix: ClassVar[str] = "core.media"

    max_bytes: int = setting(
        20 * 1024 * 1024, "bytes one media item may have (an image, a file); more is refused"
    )
    max_items: int = setting(8, "media items one input or one tool result may carry")


CORE_SECTIONS: tuple[type[Section], ...] = (
    AgentSettings,
    HealthSettings,
    StageSettings,
    SchedulerSettings,
    EventSettings,
    LLMSettings,
    PluginSettings,
    SecuritySettings,
    EmbedderSettings,
    MemorySettings,
    GraphSettings,
    UpdateSettings,
    MediaSettings,
)
"""Every section with fixed keys; `SourceSettings` is registered for the seed source."""
