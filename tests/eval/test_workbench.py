"""The workbench as a notebook user meets it: `run()` inside a running loop, a progress count
that moves with every turn and probe (across worker processes too), the recall chart written
beside the tables, and an interactive chart whose every bar says its value."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import altair as alt
import pytest

from hologram.eval import EvalConfig, Experiment, Ranker, load_dataset
from hologram.eval.chart import VEGA_LITE_MIME
from hologram.eval.progress import ExperimentProgress
from hologram.eval.unit import unit_steps


def _steps(dataset: Path) -> int:
    return sum(unit_steps(c) for c in load_dataset(dataset).conversations)


async def test_run_works_inside_a_running_event_loop_as_in_jupyter(
    tiny_dataset: Path, tmp_path: Path
) -> None:
    # This test is a coroutine: a loop is running, as in a notebook cell.
    results = Experiment(
        [tiny_dataset], [EvalConfig()], tmp_path / "out", progress=False, baseline=False
    ).run()
    assert len(results.table) == 1
    assert results.probes["scored"].any()


@pytest.mark.parametrize("workers", [1, 2])
async def test_progress_moves_with_every_turn_and_probe(
    tiny_dataset: Path, tmp_path: Path, workers: int
) -> None:
    told: list[tuple[int, int]] = []
    configs = [EvalConfig(name="kernel"), EvalConfig(name="episodic", ranker=Ranker.EPISODIC)]
    experiment = Experiment(
        [tiny_dataset],
        configs,
        tmp_path / "out",
        workers=workers,
        progress=False,
        baseline=False,
        on_progress=lambda done, total: told.append((done, total)),
    )
    await experiment.arun()
    total = 2 * _steps(tiny_dataset)
    assert {t for _, t in told} == {total}
    done = [d for d, _ in told]
    assert done == sorted(done) and done[-1] == total
    # Far more often than once per unit (two units here): every turn and probe is a step.
    assert len(done) > total // 2


async def test_a_resumed_run_starts_its_count_at_what_was_saved(
    tiny_dataset: Path, tmp_path: Path
) -> None:
    configs = [EvalConfig(name="kernel"), EvalConfig(name="episodic", ranker=Ranker.EPISODIC)]
    out = tmp_path / "out"
    await Experiment([tiny_dataset], configs[:1], out, progress=False, baseline=False).arun()
    told: list[int] = []
    resumed = Experiment(
        [tiny_dataset],
        configs,
        out,
        progress=False,
        baseline=False,
        on_progress=lambda d, _t: told.append(d),
    )
    await resumed.arun()
    assert min(told) > _steps(tiny_dataset) and told[-1] == 2 * _steps(tiny_dataset)


def test_the_bar_counts_steps_and_ignores_late_or_repeated_reports() -> None:
    stream = io.StringIO()
    progress = ExperimentProgress({"a": 10, "b": 5}, {"b"}, show=True, file=stream)
    assert progress.done == 5
    progress.told("a", 4)
    progress.told("a", 3)  # a late report from a worker
    progress.told("a", 4)
    assert progress.done == 9 and progress.bar.n == 9
    progress.told("a", 10)
    assert progress.bar.n == progress.total == 15
    progress.close()
    assert "15/15" in stream.getvalue()


async def test_results_write_the_recall_chart_beside_the_tables(
    tiny_dataset: Path, tmp_path: Path
) -> None:
    configs = [EvalConfig(name="kernel"), EvalConfig(name="episodic", ranker=Ranker.EPISODIC)]
    await Experiment([tiny_dataset], configs, tmp_path / "out", progress=False).arun()
    svg = ET.parse(tmp_path / "out" / "recall.svg").getroot()
    titles = [t.text or "" for t in svg.iter("{http://www.w3.org/2000/svg}title")]
    # One bar per (k, category, configuration), each titled with its value.
    assert any(t.startswith("episodic · all: ") and t.endswith("%") for t in titles)
    assert any(t.startswith("kernel · all: ") for t in titles)


async def test_the_interactive_chart_is_valid_vega_lite_with_a_value_on_every_bar(
    tiny_dataset: Path, tmp_path: Path
) -> None:
    configs = [EvalConfig(name="kernel"), EvalConfig(name="episodic", ranker=Ranker.EPISODIC)]
    results = await Experiment([tiny_dataset], configs, tmp_path / "out", progress=False).arun()
    bundle, metadata = results.chart(ks=(5, 10, "ndcg@10"))._repr_mimebundle_()
    spec = bundle[VEGA_LITE_MIME]
    alt.Chart.from_dict(spec)  # validates against the Vega-Lite 5 schema
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/v5")
    (values,) = spec["datasets"].values()
    summary = results.summary
    expected = summary[(summary["config"] == "episodic") & (summary["category"] == "all")]
    bar = next(
        v
        for v in values
        if v["config"] == "episodic" and v["category"] == "all" and v["k"] == "recall@10"
    )
    assert bar["recall"] == pytest.approx(float(expected["recall@10"].iloc[0]))
    ndcg = next(
        v
        for v in values
        if v["config"] == "bm25" and v["category"] == "all" and v["k"] == "ndcg@10"
    )
    baseline = summary[(summary["config"] == "bm25") & (summary["category"] == "all")]
    assert ndcg["recall"] == pytest.approx(float(baseline["ndcg@10"].iloc[0]))
    tooltip = {t["field"] for t in spec["spec"]["encoding"]["tooltip"]}
    assert {"config", "category", "k", "recall"} <= tooltip
    # The static picture for viewers that draw no Vega: the same bars as SVG.
    assert bundle["image/svg+xml"].startswith("<svg") and "episodic" in bundle["image/svg+xml"]
    assert metadata[VEGA_LITE_MIME]["embed_options"]["renderer"] == "svg"
    json.dumps(bundle)  # a notebook saves it as JSON
