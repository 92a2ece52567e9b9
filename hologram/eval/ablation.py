"""The ablation of recall's steps as configurations: each step of issue 23 (dates resolved
and matched, "when" questions lifting turns that state a time, the second round seeded by
the first round's best turns) switched on in turn, then the whole recall with one step off.

    configs = step_sweep(EvalConfig(name="kernel"))
    Experiment(datasets, configs, out, executor="dask").run().table

`benchmarks/locomo_retrieval.py` prints the same rows over the index alone; these run
through whole kernels, so any executor can spread them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from hologram.eval.config import EvalConfig

STEPS = ("dates", "when", "expansion")
"""The `EpisodicWeights` fields that switch each step on (0: off)."""

ALL_STEPS = "all steps"
NO_STEPS = "no steps"


def step_sweep(base: EvalConfig | None = None, steps: Sequence[str] = STEPS) -> list[EvalConfig]:
    """`base` with none of `steps`, with each added in turn (the last row has all of them,
    `base`'s own weights), then with each one off; a row that repeats an earlier set of
    steps is left out. Rows are named by what they switch."""
    base = base or EvalConfig(name="kernel")
    steps = list(steps)
    rows: list[EvalConfig] = []
    seen: set[frozenset[str]] = set()

    def add(name: str, on: set[str]) -> None:
        if frozenset(on) in seen:
            return
        seen.add(frozenset(on))
        off = {step: 0.0 for step in steps if step not in on}
        weights = {k: v for k, v in base.weights.items() if k not in off} | off
        rows.append(replace(base, name=name, weights=weights))

    add(NO_STEPS, set())
    for count in range(1, len(steps) + 1):
        on = steps[:count]
        add(ALL_STEPS if count == len(steps) else "+ " + " + ".join(on), set(on))
    for step in steps:
        add(f"all but {step}", set(steps) - {step})
    return rows
