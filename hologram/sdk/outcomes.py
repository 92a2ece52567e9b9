"""Named outcomes: how a turn ended, what a trace step measured, where a plugin came from,
what content review found.

Each is a `StrEnum` whose values are the strings the events, the journal and the API have
always carried, so a member compares equal to its wire value and serialises as it.
"""

from __future__ import annotations

from enum import StrEnum

CONSOLIDATION_CHANNEL = "_consolidation_"
"""The self-input channel (spec: selfInputCh routed under `_consolidation_`): internal tasks
such as memory merges and relation reviews, whose reply only writes memory and is delivered
nowhere."""


class EndedBy(StrEnum):
    """How a turn ended. A short-circuit also names its stage (`TurnResult.stage`); on the
    wire the two read as one string, `short_circuit:<stage>`."""

    ANSWER = "answer"
    """The model answered without calling another tool."""
    ALL_DENIED = "all_denied"
    """Every tool call of a round was denied by a before_toolcall handler."""
    MAX_TOOL_ROUNDS = "max_tool_rounds"
    """The round cap was reached; the model was asked for an answer without tools."""
    SHORT_CIRCUIT = "short_circuit"
    """A stage handler set the response."""
    STOPPED = "stopped"
    """A stop covered the input, before it ran or while it ran."""
    ERROR = "error"
    """The turn raised (every LLM source failed, a bug)."""
    TRIAGE = "triage"
    """The triage assistant answered the input while the main agent was busy."""


class TraceKind(StrEnum):
    """What a step of a turn's trace measured."""

    STAGE = "stage"
    STEP = "step"
    MODEL = "model"
    TOOL = "tool"


class PluginOrigin(StrEnum):
    """Where a plugin comes from, which decides what may be done to it."""

    BUILTIN = "builtin"
    """Compiled into the kernel (hologram/plugins/builtin): never uninstalled."""
    SHIPPED = "shipped"
    """Shipped with the project (the package's plugins/ folder): never uninstalled."""
    USER = "user"
    """Installed into the data directory: the only kind that can be replaced or removed."""
    PATH = "path"
    """Loaded from a folder elsewhere on disk (`PluginRegistry.load_dir`: development and
    tests): never uninstalled, since the folder is not the kernel's."""


class FindingKind(StrEnum):
    """What content review flagged in a text (the `kind` of a security finding)."""

    INJECTION = "injection"
    """A passage that reads as an instruction to the assistant."""
    SENSITIVE_WORD = "sensitive_word"
    """A word from `core.security.review.sensitive_words`, masked in what is stored."""


class ReviewRule(StrEnum):
    """Which rule a finding names: for an injection, what its sentence opens with."""

    IGNORE_INSTRUCTIONS = "ignore_instructions"
    NEW_INSTRUCTIONS = "new_instructions"
    ROLE_OVERRIDE = "role_override"
    PROMPT_EXFILTRATION = "prompt_exfiltration"
    FAKE_SYSTEM_TAG = "fake_system_tag"
    AUTHORITY_IMPERSONATION = "authority_impersonation"
    SECRET_EXFILTRATION = "secret_exfiltration"
    POLICY_REWRITE = "policy_rewrite"
    HIDDEN_INSTRUCTION = "hidden_instruction"
    ADDRESSED_INSTRUCTION = "addressed_instruction"
    """Only context signals (who is addressed, secrecy, a destination) added up."""
    WORD_LIST = "word_list"
    """A sensitive word."""


def ended_by_wire(ended_by: EndedBy, stage: str | None) -> str:
    """The one-string form of an outcome: `short_circuit:<stage>` for a short-circuit."""
    if ended_by is EndedBy.SHORT_CIRCUIT and stage:
        return f"{ended_by.value}:{stage}"
    return ended_by.value
