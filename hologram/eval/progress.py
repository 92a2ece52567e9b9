"""How far an experiment has got, counted in steps (each turn replayed, each probe asked), on
a tqdm bar: `tqdm.auto` draws a widget in a notebook and a line on stderr in a terminal.

Counting steps rather than units is what makes the bar move: one LoCoMo conversation is one
unit and about forty seconds of replay."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TextIO

from tqdm.auto import tqdm

from hologram.eval.unit import UnitResult


class ExperimentProgress:
    def __init__(
        self,
        steps: Mapping[str, int],
        finished: set[str],
        *,
        show: bool,
        on_progress: Callable[[int, int], None] | None = None,
        file: TextIO | None = None,
    ) -> None:
        self.steps = dict(steps)
        """Per unit key, the unit's steps."""
        self.total = sum(self.steps.values())
        self._seen = {key: self.steps[key] for key in finished}
        self._on_progress = on_progress
        self.bar = tqdm(
            total=self.total,
            initial=self.done,
            unit="step",
            desc="eval",
            disable=not show,
            dynamic_ncols=True,
            file=file,
        )

    @property
    def done(self) -> int:
        return sum(self._seen.values())

    def told(self, key: str, done: int, _steps: int = 0) -> None:
        """A unit says it has done `done` of its steps (reports may come late, or twice)."""
        previous = self._seen.get(key, 0)
        if done <= previous:
            return
        self._seen[key] = done
        self.bar.update(done - previous)
        if self._on_progress is not None:
            self._on_progress(self.done, self.total)

    def finished(self, result: UnitResult) -> None:
        unit = result.unit
        self.bar.set_postfix_str(f"{unit.config.name} · {unit.conversation}", refresh=False)
        self.told(unit.key, self.steps.get(unit.key, 0))

    def close(self) -> None:
        self.bar.close()
