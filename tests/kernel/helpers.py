"""Synthetic modules and states for assembly tests."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

from hologram.kernel import field_name

Init = Callable[[Any], Awaitable[None]]


class Mod:
    """A module that, unless told otherwise, produces each facility it provides."""

    def __init__(
        self,
        name: str,
        requires: tuple[str, ...] = (),
        provides: tuple[str, ...] = (),
        init: Init | None = None,
        journal: list[str] | None = None,
    ) -> None:
        self.name, self.requires, self.provides = name, requires, provides
        self._init = init
        self.journal = journal

    async def init(self, state: Any) -> None:
        if self._init is not None:
            await self._init(state)
        else:
            for facility in self.provides:
                setattr(state, field_name(facility), f"made by {self.name}")
        if self.journal is not None:
            self.journal.append(f"init {self.name}")

    async def close(self) -> None:
        if self.journal is not None:
            self.journal.append(f"close {self.name}")


def state_for(*facilities: str) -> Any:
    """An empty state dataclass with one field per facility."""
    cls = dataclasses.make_dataclass(
        "SyntheticState",
        [(field_name(f), Any, dataclasses.field(default=None)) for f in facilities],
    )
    return cls()
