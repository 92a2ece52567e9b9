"""What one stage handler holds: the shared `StageContext`, seen through its stage's rights.

A handler writes the fields its stage may change straight into the shared context (so the
other handlers of the same stage see the change). A field it may not change is refused two
ways: assigning it raises `StageWriteError` at the offending line; reading a mutable one (a
list, a dict, a tool call) hands out a private copy, and a copy that comes back changed is
reported once the handler returns. Either way the shared context never changes, and the
refusal is logged and published: a plugin author sees why their edit had no effect.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from enum import Enum
from typing import Any

from hologram.sdk import Stage, StageContext

FIELDS = frozenset(f.name for f in dataclasses.fields(StageContext))

_IMMUTABLE = (str, int, float, bool, Enum, type(None))


class StageWriteError(PermissionError):
    """A stage handler tried to change a field its stage does not let it change."""


class StageView:
    """The rights-checked face of a `StageContext` for one handler in one stage."""

    __slots__ = ("_ctx", "_handler", "_lent", "_lock", "_stage", "_writable", "refused")

    def __init__(
        self,
        ctx: StageContext,
        stage: Stage,
        writable: frozenset[str],
        handler: str,
        lock: asyncio.Lock,
    ) -> None:
        object.__setattr__(self, "_ctx", ctx)
        object.__setattr__(self, "_stage", stage)
        object.__setattr__(self, "_writable", writable)
        object.__setattr__(self, "_handler", handler)
        object.__setattr__(self, "_lock", lock)
        object.__setattr__(self, "_lent", [])
        object.__setattr__(self, "refused", [])

    @property
    def lock(self) -> asyncio.Lock:
        """Shared by every handler of this stage run. Hold it around a read-modify-write that
        awaits in between, so a concurrent handler's change is not lost."""
        return self._lock

    @property
    def writable(self) -> frozenset[str]:
        return self._writable

    def __getattr__(self, name: str) -> Any:
        # Only reached for names that are not slots: the context's fields.
        value = getattr(self._ctx, name)
        if name in self._writable or isinstance(value, _IMMUTABLE):
            return value
        lent = copy.deepcopy(value)
        self._lent.append((name, lent))
        return lent

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in FIELDS:
            raise AttributeError(f"StageContext has no field {name!r}; fields: {sorted(FIELDS)}")
        if name not in self._writable:
            self.refused.append(name)
            raise StageWriteError(self.explain(name))
        setattr(self._ctx, name, value)

    def explain(self, name: str) -> str:
        allowed = ", ".join(sorted(self._writable)) or "nothing (this stage is read-only)"
        return (
            f"stage handler {self._handler!r} may not change {name!r} in stage "
            f"{self._stage.value}; it may change: {allowed}"
        )

    def changed_copies(self) -> list[str]:
        """Fields whose lent copy this handler changed: writes that were not applied."""
        changed = []
        for name, lent in self._lent:
            if lent != getattr(self._ctx, name) and name not in changed:
                changed.append(name)
        return changed

    def __repr__(self) -> str:
        return f"<StageView {self._stage.value} for {self._handler}: {self._ctx!r}>"
