"""The metrics against values worked out by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from hologram.eval import comparison, probe_scores, summarise
from hologram.eval.metrics import newer_wins, recall_at, reciprocal_rank

RANKED = ["t7", "t2", "t9", "t4", "t1", "t3", "t8", "t5", "t6", "t0", "t11"]


def test_recall_is_the_share_of_evidence_turns_in_the_first_k() -> None:
    # Evidence t2 (rank 2) and t5 (rank 8): @1 none, @5 one of two, @10 both.
    assert recall_at(RANKED, ["t2", "t5"], 1) == 0.0
    assert recall_at(RANKED, ["t2", "t5"], 5) == 0.5
    assert recall_at(RANKED, ["t2", "t5"], 10) == 1.0
    assert recall_at(RANKED, ["t2", "t5", "t99"], 20) == pytest.approx(2 / 3)


def test_reciprocal_rank_counts_the_first_evidence_turn_found() -> None:
    assert reciprocal_rank(RANKED, ["t9", "t4"]) == pytest.approx(1 / 3)
    assert reciprocal_rank(RANKED, ["t99"]) == 0.0


def test_the_newer_preference_must_rank_above_the_stale_one() -> None:
    assert newer_wins(RANKED, ["t2"], ["t9"]) == 1.0
    assert newer_wins(RANKED, ["t9"], ["t2"]) == 0.0
    assert newer_wins(RANKED, ["t9"], ["t99"]) == 1.0, "a stale turn not retrieved ranks last"
    assert newer_wins(RANKED, ["t99"], ["t2"]) == 0.0


def test_a_probe_without_evidence_is_not_scored() -> None:
    scores = probe_scores(RANKED, [])
    assert all(math.isnan(v) for v in scores.values())


def _row(config: str, category: str, r10: float, latency: float, scored: bool = True) -> dict:
    return {
        "config": config,
        "dataset": "d",
        "category": category,
        "scored": scored,
        "recall@1": 0.0,
        "recall@5": r10 / 2,
        "recall@10": r10,
        "recall@20": r10,
        "mrr": r10 / 4,
        "newer_wins": float("nan"),
        "latency_ms": latency,
        "prompt_tokens": 10,
    }


def test_summary_and_table_by_hand() -> None:
    probes = pd.DataFrame(
        [
            _row("a", "temporal", 1.0, 1.0),
            _row("a", "temporal", 0.5, 3.0),
            _row("a", "single_fact", 0.0, 2.0),
            _row("a", "adversarial", 1.0, 4.0),
            _row("a", "single_fact", float("nan"), 5.0, scored=False),
            _row("b", "temporal", 0.0, 1.0),
            _row("b", "single_fact", 1.0, 1.0),
        ]
    )
    summary = summarise(probes).set_index(["config", "category"])
    # config a, temporal: mean(1.0, 0.5) = 0.75; all (answerable, scored): (1 + .5 + 0) / 3.
    assert summary.loc[("a", "temporal"), "recall@10"] == 0.75
    assert summary.loc[("a", "all"), "recall@10"] == pytest.approx(0.5)
    assert summary.loc[("a", "all"), "probes"] == 4 and summary.loc[("a", "all"), "scored"] == 3
    assert summary.loc[("a", "adversarial"), "recall@10"] == 1.0
    # latency over the four answerable probes 1, 3, 2, 5 ms: median 2.5.
    assert summary.loc[("a", "all"), "latency_p50_ms"] == 2.5
    table = comparison(summarise(probes))
    assert list(table.index.get_level_values("config")) == ["a", "b"]
    assert table.loc[("d", "a"), "recall@10 all"] == 50.0
    assert table.loc[("d", "b"), "recall@5 all"] == 25.0
    assert "recall@1 temporal" in table.columns and "recall@20 single_fact" in table.columns
