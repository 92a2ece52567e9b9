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

With an `AnswerConfig` (a model configured), each unit's answerable probes are then answered
from what it recalled and judged (`hologram.eval.answer`), saved per unit under
``<out>/answers/``; J and F1 join the summary and the peers' table, and ``answers.csv``
(each answer) and ``usage.csv`` (tokens and cost per configuration) are written.
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

from hologram._version import __version__
from hologram.eval.answer import AnswerConfig, Models, answer_conversation, open_models, usage_table
from hologram.eval.chart import RecallChart
from hologram.eval.config import EvalConfig, Ranker
from hologram.eval.dataset import Conversation
from hologram.eval.executors import Executor, executor_stream
from hologram.eval.load import load_dataset
from hologram.eval.metrics import ALL, BASELINE, comparison, peers, summarise
from hologram.eval.plot import recall_charts
from hologram.eval.progress import ExperimentProgress
from hologram.eval.unit import Unit, UnitResult, unit_steps
from hologram.kernel import write_atomic


def code_version() -> str:
    """``git describe`` of the checkout the package runs from, else the package version."""
    root = Path(__file__).resolve().parents[2]
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
    return f"{__version__}+{described}" if described else __version__


@dataclass(slots=True)
class Results:
    probes: pd.DataFrame
    summary: pd.DataFrame
    table: pd.DataFrame
    units: dict[str, dict[str, Any]]
    """Per unit: what the replay did (turns, prunes, archived, heartbeat ticks …)."""
    answers: pd.DataFrame | None = None
    """Each answer and verdict, when the experiment answered (`AnswerConfig`)."""
    usage: pd.DataFrame | None = None
    """Per dataset and configuration: J, F1, tokens in and out, and cost."""

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
        answer: AnswerConfig | None = None,
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
        self.answer = answer
        """Answer and judge each probe from what was recalled (needs a model)."""

    @property
    def units_dir(self) -> Path:
        return self.out_dir / "units"

    def _planned(self) -> Iterator[tuple[Unit, Conversation]]:
        groups: dict[str, list[EvalConfig]] = {}
        for config in self.configs:
            # Configurations that differ only in recall weights share one replay.
            shared = config.replay_key if config.ranker is not Ranker.BM25 else config.key
            groups.setdefault(shared, []).append(config)
        for path in self.datasets:
            dataset = load_dataset(path)
            for first, *variants in groups.values():
                for conversation in dataset.conversations:
                    unit = Unit(first, path, conversation.id, tuple(variants))
                    yield unit, conversation

    def units(self) -> list[Unit]:
        return [unit for unit, _ in self._planned()]

    def pending(self) -> list[Unit]:
        return [u for u in self.units() if not (self.units_dir / f"{u.key}.json").exists()]

    def _answers_path(self, unit: Unit) -> Path:
        assert self.answer is not None
        return self.out_dir / "answers" / f"{unit.key}-{self.answer.key}.json"

    def pending_answers(self) -> list[Unit]:
        """Units whose probes are still to be answered (none without an answer config)."""
        if self.answer is None:
            return []
        return [u for u in self.units() if not self._answers_path(u).exists()]

    def _save_unit(self, result: UnitResult) -> None:
        self.units_dir.mkdir(parents=True, exist_ok=True)
        path = self.units_dir / f"{result.unit.key}.json"
        document = {
            "config": result.unit.config.to_dict(),
            "variants": [c.to_dict() for c in result.unit.variants],
            "dataset": result.unit.dataset,
            "conversation": result.unit.conversation,
            "info": result.info,
            "rows": result.rows,
        }
        write_atomic(path, json.dumps(document, ensure_ascii=False).encode("utf-8"))

    async def arun(self) -> Results:
        """Run what is not yet saved, then collect and save the results. With answers
        asked for, the models are checked first: a run without one refuses at once."""
        if self.pending_answers():
            assert self.answer is not None
            async with open_models(self.answer) as models:
                await self._recall()
                await self._answer_all(models)
        else:
            await self._recall()
        return self.collect()

    async def _answer_all(self, models: Models) -> None:
        assert self.answer is not None
        loaded: dict[str, tuple[str, dict[str, Conversation]]] = {}
        for unit in self.pending_answers():
            if unit.dataset not in loaded:
                dataset = load_dataset(unit.dataset)
                loaded[unit.dataset] = dataset.name, {c.id: c for c in dataset.conversations}
            dataset_name, conversations = loaded[unit.dataset]
            document = json.loads((self.units_dir / f"{unit.key}.json").read_text("utf-8"))
            rows = []
            for config in unit.configs:
                answered = await answer_conversation(
                    models,
                    self.answer,
                    conversations[unit.conversation],
                    [row for row in document["rows"] if row["config"] == config.name],
                    config.text,
                )
                names = {"config": config.name, "dataset": dataset_name}
                rows += [names | {"conversation": unit.conversation} | row for row in answered]
            path = self._answers_path(unit)
            path.parent.mkdir(parents=True, exist_ok=True)
            body = {"answer": self.answer.to_dict(), "unit": unit.key, "rows": rows}
            write_atomic(path, json.dumps(body, ensure_ascii=False).encode("utf-8"))

    async def _recall(self) -> None:
        pending = self.pending()
        steps = {
            unit.key: unit_steps(conversation, len(unit.configs))
            for unit, conversation in self._planned()
        }
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
        answers = self._collect_answers()
        usage = None
        if answers is not None:
            summary = with_answers(summary, answers)
            usage = usage_table(answers)
        table = comparison(summary)
        self._write(probes, summary, table, infos, answers, usage)
        return Results(probes, summary, table, infos, answers, usage)

    def _collect_answers(self) -> pd.DataFrame | None:
        if self.answer is None:
            return None
        rows: list[dict[str, Any]] = []
        for unit in self.units():
            path = self._answers_path(unit)
            if not path.exists():
                raise RuntimeError(f"unit {unit.key} has no answers; run the experiment first")
            rows.extend(json.loads(path.read_text(encoding="utf-8"))["rows"])
        columns = ["config", "dataset", "conversation", "probe", "category", "j", "f1", "cost"]
        return pd.DataFrame(rows) if rows else pd.DataFrame(columns=columns)

    def _write(
        self,
        probes: pd.DataFrame,
        summary: pd.DataFrame,
        table: pd.DataFrame,
        infos: dict[str, dict[str, Any]],
        answers: pd.DataFrame | None = None,
        usage: pd.DataFrame | None = None,
    ) -> None:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        if answers is not None and usage is not None:
            answers.to_csv(self.out_dir / "answers.csv", index=False)
            usage.to_csv(self.out_dir / "usage.csv")
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
            "answer": None if self.answer is None else self.answer.to_dict(),
            "usage": None
            if usage is None
            else json.loads(usage.reset_index().to_json(orient="records")),
            "units": infos,
            "summary": json.loads(summary.to_json(orient="records")),
        }
        (self.out_dir / "results.json").write_text(
            json.dumps(document, ensure_ascii=False, indent=1), encoding="utf-8"
        )


def with_answers(summary: pd.DataFrame, answers: pd.DataFrame) -> pd.DataFrame:
    """`summary` with J and F1 (means over the answered probes, 0 to 1) per configuration,
    dataset and category, and over all of them in the ``all`` row."""
    keys = ["config", "dataset"]
    by_category = answers.groupby([*keys, "category"])[["j", "f1"]].mean().reset_index()
    overall = answers.groupby(keys)[["j", "f1"]].mean().reset_index().assign(category=ALL)
    scores = pd.concat([by_category, overall], ignore_index=True)
    scores[["j", "f1"]] = scores[["j", "f1"]].astype(float)
    return summary.merge(scores, on=[*keys, "category"], how="left")
