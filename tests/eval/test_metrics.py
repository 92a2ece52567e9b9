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


def test_recall_any_counts_a_probe_found_when_one_evidence_turn_is_in() -> None:
    from hologram.eval.metrics import recall_any_at

    assert recall_any_at(RANKED, ["t2", "t5"], 1) == 0.0
    assert recall_any_at(RANKED, ["t2", "t5"], 5) == 1.0  # recall@5 is 0.5 here
    assert recall_any_at(RANKED, ["t99"], 20) == 0.0


def test_ndcg_discounts_each_evidence_turn_by_its_rank() -> None:
    from hologram.eval.metrics import ndcg_at

    # t2 at rank 2, t5 at rank 8; the ideal puts them at ranks 1 and 2.
    expected = (1 / math.log2(3) + 1 / math.log2(9)) / (1 / math.log2(2) + 1 / math.log2(3))
    assert ndcg_at(RANKED, ["t2", "t5"]) == pytest.approx(expected)
    assert ndcg_at(["t2", "t2", "t5"], ["t2", "t5"]) == pytest.approx(
        (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    ), "a turn retrieved twice counts once"
    assert ndcg_at(RANKED, ["t7"]) == 1.0
    assert ndcg_at(RANKED, ["t11"]) == 0.0, "rank 11 is outside the first 10"


def test_session_recall_is_the_share_of_evidence_sessions_reached() -> None:
    from hologram.eval.metrics import session_recall_at

    session_of = {"t7": "1", "t2": "1", "t9": "2", "t4": "3", "t5": "4"}
    # Evidence in sessions 1 and 4; the first turn (t7) reaches session 1 only.
    assert session_recall_at(RANKED, ["t2", "t5"], session_of, 1) == 0.5
    assert session_recall_at(RANKED, ["t2", "t5"], session_of, 10) == 1.0
    scores = probe_scores(RANKED, ["t2", "t5"], session_of=session_of)
    assert scores["session_recall@1"] == 0.5 and scores["recall@1"] == 0.0
    assert math.isnan(probe_scores(RANKED, [])["ndcg@10"])


async def test_the_bm25_baseline_ranks_turns_by_the_library_without_a_kernel() -> None:
    from hologram.eval.tiers import BM25Retriever
    from hologram.memory import Segmenter

    documents = [
        ("d1", "Kim: my sister keeps bees on her roof"),
        ("d2", "Kim: I am allergic to kiwi fruit"),
        ("d3", "Kim: 我上周六去了陶艺课"),
        ("d4", "Holo: how lovely"),
    ]
    retriever = BM25Retriever(documents, Segmenter())
    found = await retriever.search("which fruit am I allergic to", 2)
    assert found[0][0] == "d2"
    assert [t for t, _ in await retriever.search("陶艺课是哪天", 2)] == ["d3"]
    assert await retriever.search("nothing shared", 3) == []
