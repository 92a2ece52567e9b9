"""Recall's steps as configuration: weights reach the kernel's own recall index and the
episodic ranker, and the sweep names one row per set of steps."""

from __future__ import annotations

from pathlib import Path

import pytest

from hologram.eval import STEPS, EvalConfig, Experiment, Ranker, Unit, run_unit, step_sweep
from hologram.eval.ablation import ALL_STEPS, NO_STEPS

FLAT = {"previous_turn": 0.0, "session": 0.0, "neighbour": 0.0}
"""Every turn scored by its own words alone: rankings the defaults do not give."""


def test_weights_are_checked() -> None:
    assert EvalConfig(weights={"dates": 0.0}).recall_weights().dates == 0.0
    assert EvalConfig().recall_weights().dates > 0
    with pytest.raises(ValueError, match="unknown recall weights"):
        EvalConfig(weights={"datez": 0.0})
    with pytest.raises(ValueError, match="expected a value like"):
        EvalConfig(weights={"expansion_elsewhere": 0.5})
    with pytest.raises(ValueError, match="not bm25"):
        EvalConfig(ranker=Ranker.BM25, weights={"dates": 0.0})
    with pytest.raises(ValueError, match="unknown configuration keys"):
        EvalConfig.from_dict({"weight": {}})
    assert EvalConfig.from_dict({"weights": {"when": 0.0}}).weights == {"when": 0.0}
    # Default weights keep the key runs were saved under before weights could be set.
    assert EvalConfig(weights={}).key == EvalConfig().key != EvalConfig(weights={"when": 0}).key


@pytest.mark.parametrize("ranker", [Ranker.KERNEL, Ranker.EPISODIC])
async def test_weights_change_what_the_kernel_recalls_from_one_shared_replay(
    tiny_dataset: Path, tmp_path: Path, ranker: Ranker
) -> None:
    configs = [
        EvalConfig(name="d", ranker=ranker),
        EvalConfig(name="f", ranker=ranker, weights=FLAT),
    ]
    experiment = Experiment(
        [tiny_dataset], configs, tmp_path / "out", progress=False, baseline=False
    )
    assert len(experiment.units()) == 1, "configurations differing in weights share a replay"
    results = await experiment.arun()
    ranked = results.probes.groupby("config")["retrieved"].apply(list)
    assert ranked["f"] != ranked["d"]
    # The shared replay asks what a unit of the configuration alone would ask.
    alone = await run_unit(Unit(configs[1], str(tiny_dataset), "tiny"))
    assert [r["retrieved"] for r in alone.rows] == ranked["f"]


def test_the_sweep_adds_each_step_then_takes_each_away() -> None:
    base = EvalConfig(name="kernel", weights={"dates": 0.5, "diversity": 0.1})
    rows = {c.name: c for c in step_sweep(base)}
    assert list(rows) == [
        NO_STEPS,
        "+ dates",
        "+ dates + when",
        ALL_STEPS,
        "all but dates",
        "all but when",
    ]  # fmt: skip  ("all but expansion" is "+ dates + when")
    assert rows[NO_STEPS].weights == {"diversity": 0.1} | dict.fromkeys(STEPS, 0.0)
    assert rows[ALL_STEPS].weights == base.weights, "every step on: the base's own weights"
    assert rows["+ dates"].recall_weights().dates == 0.5
    assert rows["+ dates"].recall_weights().when == 0.0
    assert rows["all but when"].weights == base.weights | {"when": 0.0}
    assert len({c.key for c in rows.values()}) == len(rows)
