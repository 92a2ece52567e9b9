"""What can go wrong between the agent and a model, named so the fix is visible.

Two families: the adapter itself is wrong (`AdapterError`: a script that does not load,
breaks the contract or returns the wrong shape), or one call to one source failed
(`ProviderError`, with a `FailureKind` that decides how long the source is set aside).
"""

from __future__ import annotations

import reprlib
from enum import StrEnum
from typing import Any

_short = reprlib.Repr()
_short.maxstring = 80
_short.maxother = 80
_short.maxdict = 4
_short.maxlist = 4


class AdapterError(Exception):
    """An adapter that cannot be used as it is: it does not load, misses part of the
    contract, or fails inside a transform. The message names the adapter (and the file)."""

    def __init__(self, adapter: str, message: str) -> None:
        super().__init__(f"adapter {adapter!r}: {message}")
        self.adapter = adapter


class AdapterOutputError(AdapterError):
    """A transform returned something of the wrong shape; names adapter, function and field."""

    def __init__(self, adapter: str, function: str, field: str, expected: str, got: Any) -> None:
        super().__init__(
            adapter,
            f"{function} returned a bad value at {field!r}: expected {expected}, "
            f"got {_short.repr(got)}",
        )
        self.function = function
        self.field = field


class FailureKind(StrEnum):
    """Why a call failed, which decides what happens to the source (and to the request).

    An adapter names a kind in the error it reads from a body (`transform_error`, or an
    `error` table from a transform); the names it may use are the values below, plus
    "bad_request" for REJECTED."""

    AUTH = "auth"  # 401/403: set aside for the cool-down, or until its config changes
    RATE_LIMITED = "rate_limited"  # 429: retried after the provider's delay, when it gave one
    OVERLOADED = "overloaded"  # 529, 503 "overloaded", an overloaded event mid-stream: retried
    QUOTA = "quota"  # the account's quota or credit is spent: set aside for the cool-down
    CONTEXT_LENGTH = "context_length"  # the prompt is longer than the model takes
    SERVER = "server"  # 5xx
    REJECTED = "rejected"  # another 4xx (a bad request): the source refused this request
    TIMEOUT = "timeout"
    CONNECTION = "connection"  # refused, reset, DNS
    BAD_RESPONSE = "bad_response"  # body not JSON, or the adapter could not read it
    ADAPTER = "adapter"  # the adapter failed to load or to build the request
    CONFIG = "config"  # the source's settings are incomplete: until they change

    @property
    def until_config_changes(self) -> bool:
        return self in (FailureKind.AUTH, FailureKind.CONFIG)

    @property
    def cools_down(self) -> bool:
        """Set aside for the cool-down setting: a refused key or a spent quota does not
        mend itself in seconds."""
        return self in (FailureKind.AUTH, FailureKind.QUOTA)

    @classmethod
    def named(cls, name: object) -> FailureKind | None:
        """The kind an adapter named, or None for a name that is not one."""
        if name == "bad_request":
            return cls.REJECTED
        try:
            return cls(str(name))
        except ValueError:
            return None


class ProviderError(Exception):
    """One call to one source failed."""

    def __init__(
        self,
        source: str,
        kind: FailureKind,
        message: str,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"source {source!r}: {message}")
        self.source = source
        self.kind = kind
        self.reason = message
        self.status = status
        #: Seconds the provider asked us to wait before trying again (Retry-After,
        #: retry-after-ms, Gemini's RetryInfo), when it said.
        self.retry_after = retry_after


class ContextTooLong(ProviderError):
    """The prompt does not fit the model: the request is at fault, not the source, so the
    caller shortens the prompt and asks again rather than trying elsewhere."""


class AllProvidersFailed(Exception):
    """No source answered. `failures` holds every source's error, in the order tried."""

    def __init__(self, failures: list[tuple[str, str]]) -> None:
        lines = "; ".join(f"{name}: {why}" for name, why in failures) or "no sources configured"
        super().__init__(f"no LLM source answered ({len(failures)} tried or skipped): {lines}")
        self.failures = failures
