"""The pure scheduler with its ids given as the input journal gives them: 1, 2, 3, …"""

from __future__ import annotations

import itertools
from typing import Any

from hologram.agent.scheduler import Decision, Scheduler, Task
from hologram.sdk import Priority


class Numbered(Scheduler[str]):
    """The scheduler numbers nothing; here a counter stands in for the journal."""

    def __init__(self, cooldown: float = 2.0) -> None:
        super().__init__(cooldown)
        self._journal = itertools.count(1)

    def submit_next(
        self, payload: str, level: Priority = Priority.QUEUED, **options: Any
    ) -> tuple[Task[str], list[Decision]]:
        return self.submit(next(self._journal), payload, level, **options)
