"""The research workbench: replay conversations through real kernels and score memory.

    from hologram.eval import EvalConfig, Experiment
    results = Experiment(["datasets/companion_en"], [EvalConfig()], "runs/a").run()
    results.table

``python -m hologram eval DATASET --config a.toml`` does the same from the command line.

Names load with the submodule that defines them, on first use: the `eval` command's
`--help` loads neither pandas nor the kernel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hologram.kernel import lazy_face

_LAZY = {
    "hologram.eval.ablation": ("STEPS", "step_sweep"),
    "hologram.eval.answer": ("AnswerConfig", "token_f1"),
    "hologram.eval.config": ("EvalConfig", "Ranker", "Tier"),
    "hologram.eval.dataset": (
        "ADVERSARIAL",
        "Conversation",
        "Dataset",
        "Probe",
        "Session",
        "Turn",
        "write_project",
    ),
    "hologram.eval.executors": ("Executor",),
    "hologram.eval.harness": ("Experiment", "Results", "code_version"),
    "hologram.eval.load": ("load_dataset",),
    "hologram.eval.locomo": ("load_locomo",),
    "hologram.eval.metrics": ("KS", "comparison", "probe_scores", "summarise"),
    "hologram.eval.tiers": ("EvalError",),
    "hologram.eval.unit": ("Unit", "UnitResult", "run_unit"),
}

__all__ = [
    "ADVERSARIAL",
    "KS",
    "STEPS",
    "AnswerConfig",
    "Conversation",
    "Dataset",
    "EvalConfig",
    "EvalError",
    "Executor",
    "Experiment",
    "Probe",
    "Ranker",
    "Results",
    "Session",
    "Tier",
    "Turn",
    "Unit",
    "UnitResult",
    "code_version",
    "comparison",
    "load_dataset",
    "load_locomo",
    "probe_scores",
    "run_unit",
    "step_sweep",
    "summarise",
    "token_f1",
    "write_project",
]
__getattr__ = lazy_face(__name__, _LAZY)

if TYPE_CHECKING:
    from hologram.eval.ablation import STEPS, step_sweep
    from hologram.eval.answer import AnswerConfig, token_f1
    from hologram.eval.config import EvalConfig, Ranker, Tier
    from hologram.eval.dataset import (
        ADVERSARIAL,
        Conversation,
        Dataset,
        Probe,
        Session,
        Turn,
        write_project,
    )
    from hologram.eval.executors import Executor
    from hologram.eval.harness import Experiment, Results, code_version
    from hologram.eval.load import load_dataset
    from hologram.eval.locomo import load_locomo
    from hologram.eval.metrics import KS, comparison, probe_scores, summarise
    from hologram.eval.tiers import EvalError
    from hologram.eval.unit import Unit, UnitResult, run_unit
