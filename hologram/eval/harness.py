"""The experiment: configurations × datasets, run unit by unit, saved as each finishes.

    experiment = Experiment(["datasets/companion_en"], [EvalConfig(), EvalConfig(...)], out)
    results = experiment.run()            # in a notebook too (or `await experiment.arun()`)
    results.table                         # recall@k per category, one row per configuration
    results.chart()                       # the same as bars: hover one for its value

Each finished unit is written to ``<out>/units/<key>.json`` at once (atomically), so a run
that is interrupted (Ctrl-C, a killed worker) and started again runs only what is missing,
and gives the same table. Results go to ``probes.csv``, ``summary.csv``, ``table.csv``,
``recall.svg`` and ``results.json`` (with the configurations, the datasets and the code
version).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

import hologram
from hologram.eval.chart import RecallChart
from hologram.eval.config import EvalConfig, Ranker
from hologram.eval.dataset import Conversation, load_dataset
from hologram.eval.executors import Executor, executor_stream
from hologram.eval.metrics import BASELINE, comparison, peers, summarise
from hologram.eval.plot import recall_charts
from hologram.eval.progress import ExperimentProgress
from hologram.eval.unit import Unit, UnitResult, unit_steps
from hologram.kernel.files import write_atomic


def code_version() -> str:
    """``git describe`` of the checkout the package runs from, else the package version."""
    root = Path(hologram.__file__).resolve().parent.parent
    try:
        described = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--tags"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        described = ""
    return f"{hologram.__version__}+{described}" if described else hologram.__version__


@dataclass(slots=True)
class Results:
    probes: pd.DataFrame
    summary: pd.DataFrame
    table: pd.DataFrame
    units: dict[str, dict[str, Any]]
    """Per unit: what the replay did (turns, prunes, archived, heartbeat ticks …)."""

    def misses(self, k: int = 10) -> pd.DataFrame:
        """The scored probes with evidence left out of the first k."""
        column = f"recall@{k}"
        missed = self.probes[self.probes["scored"] & (self.probes[column] < 1.0)]
        return missed[["config", "dataset", "probe", "category", "question", "evidence", column]]

    def chart(self, ks: Sequence[int | str] = (5, 10)) -> RecallChart:
        """Recall@k (or any summary metric named, e.g. ``"ndcg@10"``) by category and
        configuration: an interactive chart in JupyterLab, the static SVG wherever
        Vega-Lite is not drawn."""
        return RecallChart(self.summary, ks)

    @property
    def peers(self) -> pd.DataFrame:
        """The measures peers publish, and recall@10 as a ratio to the BM25 baseline."""
        return peers(self.summary)


class Experiment:
    def __init__(
        self,
        datasets: Sequence[str | os.PathLike[str]],
        configs: Sequence[EvalConfig],
        out_dir: str | os.PathLike[str],
        *,
        executor: Executor | str = Executor.LOCAL,
        workers: int = 1,
        address: str | None = None,
        progress: bool = True,
        on_unit: Callable[[UnitResult], None] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
        baseline: bool = True,
    ) -> None:
        configs = list(configs) or [EvalConfig()]
        if baseline and not any(c.ranker is Ranker.BM25 for c in configs):
            # Costs milliseconds (no kernel is booted) and makes every table comparable
            # with a ranker that is not ours.
            configs.append(EvalConfig(name=BASELINE, ranker=Ranker.BM25, text=configs[0].text))
        names = [c.name for c in configs]
        if len(set(names)) != len(names):
            raise ValueError(f"configuration names must differ (rows are named by them): {names}")
        self.datasets = [str(Path(d)) for d in datasets]
        self.configs = configs
        self.out_dir = Path(out_dir)
        self.executor = Executor(executor)
        self.workers = workers
        self.address = address
        self.progress = progress
        self.on_unit = on_unit
        """Called after each unit is saved (a notebook's own progress, or a test's interrupt)."""
        self.on_progress = on_progress
        """Called with (steps done, steps) as turns are replayed and probes asked."""

    @property
    def units_dir(self) -> Path:
        return self.out_dir / "units"

    def _planned(self) -> Iterator[tuple[Unit, Conversation]]:
        for path in self.datasets:
            dataset = load_dataset(path)
            for config in self.configs:
                for conversation in dataset.conversations:
                    yield Unit(config, path, conversation.id), conversation

    def units(self) -> list[Unit]:
        return [unit for unit, _ in self._planned()]

    def pending(self) -> list[Unit]:
        return [u for u in self.units() if not (self.units_dir / f"{u.key}.json").exists()]

    def _save_unit(self, result: UnitResult) -> None:
        self.units_dir.mkdir(parents=True, exist_ok=True)
        path = self.units_dir / f"{result.unit.key}.json"
        document = {
            "config": result.unit.config.to_dict(),
            "dataset": result.unit.dataset,
            "conversation": result.unit.conversation,
            "info": result.info,
            "rows": result.rows,
        }
        write_atomic(path, json.dumps(document, ensure_ascii=False).encode("utf-8"))

    async def arun(self) -> Results:
        """Run what is not yet saved, then collect and save the results."""
        pending = self.pending()
        steps = {unit.key: unit_steps(conversation) for unit, conversation in self._planned()}
        progress = ExperimentProgress(
            steps,
            set(steps) - {unit.key for unit in pending},
            show=self.progress and bool(pending),
            on_progress=self.on_progress,
        )
        try:
            stream = executor_stream(
                self.executor,
                pending,
                workers=self.workers,
                work_dir=None,
                address=self.address,
                progress=progress.told,
            )
            async for result in stream:
                self._save_unit(result)
                progress.finished(result)
                if self.on_unit is not None:
                    self.on_unit(result)
        finally:
            progress.close()
        return self.collect()

    def run(self) -> Results:
        """`arun` to its end. Inside a running event loop (Jupyter's), where `asyncio.run`
        is refused, the experiment runs on a loop of its own in a worker thread while this
        call waits for it, as any blocking call would."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.arun())
        with ThreadPoolExecutor(1, thread_name_prefix="experiment") as pool:
            return pool.submit(asyncio.run, self.arun()).result()

    def collect(self) -> Results:
        """The results of every saved unit of this experiment (written to the out dir)."""
        rows: list[dict[str, Any]] = []
        infos: dict[str, dict[str, Any]] = {}
        for unit in self.units():
            path = self.units_dir / f"{unit.key}.json"
            if not path.exists():
                raise RuntimeError(f"unit {unit.key} has not run; run the experiment first")
            document = json.loads(path.read_text(encoding="utf-8"))
            rows.extend(document["rows"])
            infos[unit.key] = document["info"]
        probes = pd.DataFrame(rows)
        summary = summarise(probes)
        table = comparison(summary)
        self._write(probes, summary, table, infos)
        return Results(probes, summary, table, infos)

    def _write(
        self,
        probes: pd.DataFrame,
        summary: pd.DataFrame,
        table: pd.DataFrame,
        infos: dict[str, dict[str, Any]],
    ) -> None:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        probes.to_csv(self.out_dir / "probes.csv", index=False)
        summary.to_csv(self.out_dir / "summary.csv", index=False)
        table.to_csv(self.out_dir / "table.csv")
        peers(summary).to_csv(self.out_dir / "peers.csv")
        (self.out_dir / "recall.svg").write_text(recall_charts(summary), encoding="utf-8")
        document = {
            "code_version": code_version(),
            "written_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "configs": [c.to_dict() for c in self.configs],
            "datasets": self.datasets,
            "units": infos,
            "summary": json.loads(summary.to_json(orient="records")),
        }
        (self.out_dir / "results.json").write_text(
            json.dumps(document, ensure_ascii=False, indent=1), encoding="utf-8"
        )
