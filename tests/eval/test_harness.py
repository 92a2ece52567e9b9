"""The harness replays through real kernels on the dataset's dates, and its runs resume."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from hologram.eval import (
    EvalConfig,
    EvalError,
    Experiment,
    Ranker,
    Tier,
    Unit,
    load_dataset,
    run_unit,
)
from tests.eval.conftest import SMALL_WINDOW, START

DAY = 86400.0


async def test_replay_drives_the_heartbeats_and_ageing_on_the_datasets_dates(
    tiny_dataset: Path,
) -> None:
    config = EvalConfig(name="small", settings=SMALL_WINDOW)
    result = await run_unit(Unit(config, str(tiny_dataset), "tiny"))
    info = result.info
    last_turn = max(t.at for t in load_dataset(tiny_dataset).conversations[0].turns())
    # The clock went from the first turn to the last: five days of kernel time.
    assert info["first_turn_at"] == START.timestamp()
    assert info["clock_at_end"] >= last_turn
    # The heartbeat loops ticked on that clock: the rule loop alone ticks every ten minutes.
    assert info["heartbeat_ticks"] >= (last_turn - START.timestamp()) / 600
    # Pruning archived turns into the cold context, and the archive loop moved the ones
    # older than 72 hours on into the graph as text blocks: ageing happened on these dates.
    assert info["archived"] > 0
    assert info["graph_blocks"] > 0


async def test_a_replay_gives_the_same_memory_every_time(tiny_dataset: Path) -> None:
    config = EvalConfig(name="small", settings=SMALL_WINDOW)
    first = await run_unit(Unit(config, str(tiny_dataset), "tiny"))
    second = await run_unit(Unit(config, str(tiny_dataset), "tiny"))
    keys = ("heartbeat_ticks", "archived", "window", "cold_documents", "graph_blocks")
    assert [first.info[k] for k in keys] == [second.info[k] for k in keys]
    assert [r["retrieved"] for r in first.rows] == [r["retrieved"] for r in second.rows]


async def test_every_probe_gets_a_row_with_its_scores(tiny_dataset: Path) -> None:
    config = EvalConfig(name="episodic", ranker=Ranker.EPISODIC)
    result = await run_unit(Unit(config, str(tiny_dataset), "tiny"))
    rows = {r["probe"]: r for r in result.rows}
    assert set(rows) == {"p1", "p2", "p3", "p4", "p5", "p6"}
    assert rows["p2"]["recall@5"] == 1.0, "kiwi is asked about in the same words"
    assert rows["p4"]["newer_wins"] in (0.0, 1.0)
    assert all(r["latency_ms"] >= 0 and r["prompt_tokens"] >= 0 for r in rows.values())


async def test_two_configurations_give_two_rows(tiny_dataset: Path, tmp_path: Path) -> None:
    configs = [
        EvalConfig(name="kernel", settings=SMALL_WINDOW),
        EvalConfig(name="episodic", ranker=Ranker.EPISODIC, settings=SMALL_WINDOW),
    ]
    results = await Experiment([tiny_dataset], configs, tmp_path / "out", progress=False).arun()
    # The BM25 baseline joins every experiment as its own row.
    assert list(results.table.index) == [("tiny", "kernel"), ("tiny", "episodic"), ("tiny", "bm25")]
    assert {"recall@1 all", "recall@5 all", "recall@10 all", "recall@20 all"} <= set(
        results.table.columns
    )
    for name in ("probes.csv", "summary.csv", "table.csv", "peers.csv", "results.json"):
        assert (tmp_path / "out" / name).exists()
    saved = pd.read_json(tmp_path / "out" / "results.json", typ="series")
    assert saved["code_version"] and len(saved["configs"]) == 3
    peers = results.peers
    assert list(peers.columns) == [
        "recall@10", "recall_any@10", "ndcg@10", "session_recall@10", "mrr", "recall@10 × bm25"
    ]  # fmt: skip
    assert peers.loc[("tiny", "bm25"), "recall@10 × bm25"] == 1.0
    kernel = peers.loc[("tiny", "kernel")]
    assert kernel["recall@10 × bm25"] == pytest.approx(
        kernel["recall@10"] / peers.loc[("tiny", "bm25"), "recall@10"], abs=1e-3
    )
    assert kernel["recall_any@10"] >= kernel["recall@10"]  # any-of counts at least as often


async def test_an_interrupted_run_resumes_to_the_same_result(
    tiny_dataset: Path, tmp_path: Path
) -> None:
    configs = [
        EvalConfig(name="window", tier=Tier.CONTEXT, settings=SMALL_WINDOW),
        EvalConfig(name="fused", settings=SMALL_WINDOW),
    ]

    def interrupt(_result: object) -> None:
        raise KeyboardInterrupt

    out = tmp_path / "interrupted"
    with pytest.raises(KeyboardInterrupt):
        await Experiment([tiny_dataset], configs, out, progress=False, on_unit=interrupt).arun()
    assert len(list((out / "units").glob("*.json"))) == 1, "the finished unit was saved"
    resumed_experiment = Experiment([tiny_dataset], configs, out, progress=False)
    assert len(resumed_experiment.pending()) == len(resumed_experiment.units()) - 1
    resumed = await resumed_experiment.arun()
    straight = await Experiment(
        [tiny_dataset], configs, tmp_path / "straight", progress=False
    ).arun()
    columns = ["config", "probe", "recall@1", "recall@5", "recall@10", "recall@20", "mrr"]
    pd.testing.assert_frame_equal(resumed.probes[columns], straight.probes[columns])
    pd.testing.assert_frame_equal(resumed.table, straight.table)


def test_configurations_are_read_from_toml_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "cold-episodic.toml"
    path.write_text(
        'tier = "cold"\nranker = "episodic"\ntext = "{day} {speaker}: {text}"\n'
        '[settings]\n"core.memory.context.top_k" = 12\n',
        encoding="utf-8",
    )
    config = EvalConfig.load(path)
    assert (config.name, config.tier, config.ranker) == (
        "cold-episodic",
        Tier.COLD,
        Ranker.EPISODIC,
    )
    assert config.settings == {"core.memory.context.top_k": 12}
    path.write_text('tier = "attic"\n', encoding="utf-8")
    with pytest.raises(ValueError, match="context"):
        EvalConfig.load(path)
    with pytest.raises(ValueError, match="unknown configuration keys"):
        EvalConfig.from_dict({"topk": 3})
    with pytest.raises(ValueError, match="weather"):
        EvalConfig(text="{weather} {text}")


async def test_the_graph_tier_says_what_to_do_without_a_graph(tiny_dataset: Path) -> None:
    from hologram.memory import ColdContextModule, MemoryModule, TextMemoryModule
    from hologram.modules import kernel_modules

    def without_graph() -> list:
        keep = (ColdContextModule, MemoryModule, TextMemoryModule)
        mods = [m for m in kernel_modules() if isinstance(m, keep) or m.name in {
            "events", "stagehost", "llm"}]  # fmt: skip
        return mods

    config = EvalConfig(name="graph", tier=Tier.GRAPH)
    with pytest.raises(EvalError, match="run tier"):
        await run_unit(Unit(config, str(tiny_dataset), "tiny"), modules=without_graph)


async def test_a_sweep_on_a_local_dask_cluster_gives_the_local_table(
    tiny_dataset: Path, tmp_path: Path
) -> None:
    pytest.importorskip(
        "dask.distributed", reason="the dask extra is not installed (pip install 'hologram[dask]')"
    )
    configs = [
        EvalConfig(name="kernel", settings=SMALL_WINDOW),
        EvalConfig(name="episodic", ranker=Ranker.EPISODIC, settings=SMALL_WINDOW),
    ]
    local = await Experiment([tiny_dataset], configs, tmp_path / "local", progress=False).arun()
    on_dask = await Experiment(
        [tiny_dataset], configs, tmp_path / "dask", executor="dask", workers=2, progress=False
    ).arun()
    pd.testing.assert_frame_equal(on_dask.table, local.table)


def test_a_configuration_file_may_leave_everything_to_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "plain.toml"
    path.write_text('tier = "cold"\n', encoding="utf-8")
    config = EvalConfig.load(path)
    assert config.text == EvalConfig().text and config.ranker is Ranker.KERNEL


def test_the_cli_prints_the_comparison_table(
    tiny_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hologram.cli import main

    config = tmp_path / "episodic.toml"
    config.write_text('ranker = "episodic"\n', encoding="utf-8")
    out = tmp_path / "cli-out"
    argv = ["eval", str(tiny_dataset), "--config", str(config), "--out", str(out), "--quiet"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "recall@10 all" in printed and "episodic" in printed
    assert re.search(r"replay per conversation: median [\d.]+ s, slowest .*target ≤ 15 s", printed)
    assert (out / "table.csv").exists() and (out / "recall.svg").read_text().startswith("<svg")
    assert main(["eval", str(tmp_path / "nowhere"), "--out", str(out), "--quiet"]) == 2
