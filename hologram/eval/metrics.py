"""Scores of one probe, and the table of many.

Turn-level evidence recall@k is the share of a probe's evidence turns among the first k
retrieved (LoCoMo's measure: a probe with two evidence turns and one found scores 0.5).
MRR is the reciprocal rank of the first evidence turn found (0 when none is).

Beside them, the measures peers publish: `recall_any@k` (1 when any evidence turn is in the
first k, as LongMemEval-style reports count), NDCG@10 with binary relevance, and session
recall@k (the share of the evidence's sessions that the first k turns reach).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from hologram.eval.dataset import ADVERSARIAL

KS = (1, 5, 10, 20)
NDCG_K = 10
PEER_METRICS = (
    *(f"recall_any@{k}" for k in KS),
    f"ndcg@{NDCG_K}",
    *(f"session_recall@{k}" for k in KS),
)
ALL = "all"
"""The row over every scored, answerable probe (adversarial ones are reported apart)."""


def recall_at(ranked: Sequence[str], evidence: Sequence[str], k: int) -> float:
    if not evidence:
        raise ValueError("recall is undefined for a probe without evidence")
    wanted = set(evidence)
    return len(wanted.intersection(ranked[:k])) / len(wanted)


def reciprocal_rank(ranked: Sequence[str], evidence: Sequence[str]) -> float:
    wanted = set(evidence)
    for position, turn_id in enumerate(ranked, 1):
        if turn_id in wanted:
            return 1.0 / position
    return 0.0


def recall_any_at(ranked: Sequence[str], evidence: Sequence[str], k: int) -> float:
    return 1.0 if set(evidence).intersection(ranked[:k]) else 0.0


def ndcg_at(ranked: Sequence[str], evidence: Sequence[str], k: int = NDCG_K) -> float:
    """Binary-relevance NDCG: each evidence turn counts once, at its first position."""
    wanted = set(evidence)
    seen: set[str] = set()
    gain = 0.0
    for position, turn_id in enumerate(ranked[:k], 1):
        if turn_id in wanted and turn_id not in seen:
            seen.add(turn_id)
            gain += 1.0 / math.log2(position + 1)
    ideal = sum(1.0 / math.log2(position + 1) for position in range(1, min(len(wanted), k) + 1))
    return gain / ideal


def session_recall_at(
    ranked: Sequence[str], evidence: Sequence[str], session_of: Mapping[str, str], k: int
) -> float:
    wanted = {session_of.get(e, e) for e in evidence}
    reached = {session_of[t] for t in ranked[:k] if t in session_of}
    return len(wanted & reached) / len(wanted)


def newer_wins(ranked: Sequence[str], evidence: Sequence[str], stale: Sequence[str]) -> float:
    """1.0 when an evidence turn ranks above every stale turn (a stale turn not retrieved at
    all ranks last), 0.0 otherwise: the changed preference's new value must come first."""
    position = {turn_id: i for i, turn_id in enumerate(ranked)}
    best_new = min((position[e] for e in evidence if e in position), default=None)
    if best_new is None:
        return 0.0
    best_old = min((position[s] for s in stale if s in position), default=len(ranked))
    return 1.0 if best_new < best_old else 0.0


def probe_scores(
    ranked: Sequence[str],
    evidence: Sequence[str],
    stale: Sequence[str] = (),
    session_of: Mapping[str, str] | None = None,
) -> dict[str, float]:
    """Every metric of one probe (NaN where undefined: a probe without evidence).
    `session_of` maps a turn id to its session; without it each turn is its own session."""
    if not evidence:
        return dict.fromkeys(METRICS, float("nan"))
    sessions = session_of or {}
    scores = {f"recall@{k}": recall_at(ranked, evidence, k) for k in KS}
    scores["mrr"] = reciprocal_rank(ranked, evidence)
    scores["newer_wins"] = newer_wins(ranked, evidence, stale) if stale else float("nan")
    scores |= {f"recall_any@{k}": recall_any_at(ranked, evidence, k) for k in KS}
    scores[f"ndcg@{NDCG_K}"] = ndcg_at(ranked, evidence)
    scores |= {f"session_recall@{k}": session_recall_at(ranked, evidence, sessions, k) for k in KS}
    return scores


METRICS = (*(f"recall@{k}" for k in KS), "mrr", "newer_wins", *PEER_METRICS)
"""Every per-probe metric, in the order the summary lists them."""


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=float), q)) if len(values) else float("nan")


def summarise(probes: pd.DataFrame, keys: Sequence[str] = ("config", "dataset")) -> pd.DataFrame:
    """One row per configuration, dataset and category, plus an ``all`` row of the
    answerable categories: mean recall@k and MRR over scored probes, retrieval latency
    p50/p95 and the tokens the memory section would put in the prompt."""
    metric_cols = [c for c in METRICS if c in probes.columns]
    rows: list[dict[str, Any]] = []
    keys = list(keys)
    for group_key, group in probes.groupby(keys, sort=False):
        names = group_key if isinstance(group_key, tuple) else (group_key,)
        base = dict(zip(keys, names, strict=True))
        answerable = group[group["category"] != ADVERSARIAL]
        parts = [(c, g) for c, g in group.groupby("category", sort=True)] + [(ALL, answerable)]
        for category, part in parts:
            scored = part[part["scored"]]
            row = base | {"category": category, "probes": len(part), "scored": len(scored)}
            for col in metric_cols:
                values = scored[col].dropna()
                row[col] = float(values.mean()) if len(values) else float("nan")
            row["latency_p50_ms"] = percentile(part["latency_ms"].tolist(), 50)
            row["latency_p95_ms"] = percentile(part["latency_ms"].tolist(), 95)
            row["prompt_tokens"] = float(part["prompt_tokens"].mean()) if len(part) else 0.0
            rows.append(row)
    return pd.DataFrame(rows)


def comparison(summary: pd.DataFrame, ks: Sequence[int] = KS) -> pd.DataFrame:
    """The table the CLI prints: recall@k (in %) per category and overall, one row per
    configuration and dataset, columns like ``recall@10 temporal`` and ``recall@10 all``."""
    frame = summary.copy()
    table = frame.pivot_table(
        index=["dataset", "config"],
        columns="category",
        values=[f"recall@{k}" for k in ks],
        sort=False,
    )
    order = [c for c in dict.fromkeys(frame["category"]) if c != ALL] + [ALL]
    columns = [(f"recall@{k}", c) for k in ks for c in order if (f"recall@{k}", c) in table]
    table = table[columns] * 100
    table.columns = [f"{metric} {category}" for metric, category in columns]
    return table.round(1)


BASELINE = "bm25"
"""The configuration every table compares against: plain BM25 from a library (bm25s) over
the same turns, so a figure reads as a ratio to a ranker that is not ours."""

PEER_COLUMNS = ("recall@10", "recall_any@10", f"ndcg@{NDCG_K}", "session_recall@10", "mrr")
ANSWER_COLUMNS = ("j", "f1")
"""In the summary when the experiment answered: the judge's accuracy and token F1."""


def peers(summary: pd.DataFrame) -> pd.DataFrame:
    """The answerable probes of each configuration and dataset in the measures peers publish
    (in %, MRR as it is), with recall@10 as a ratio to the BM25 baseline of the dataset; and
    J and F1 (in %) when the experiment answered."""
    overall = summary[summary["category"] == ALL]
    columns = [c for c in (*PEER_COLUMNS, *ANSWER_COLUMNS) if c in overall.columns]
    table = overall.set_index(["dataset", "config"])[columns].copy()
    for column in columns:
        if column != "mrr":
            table[column] = table[column] * 100
    baseline = overall[overall["config"] == BASELINE].set_index("dataset")["recall@10"]
    table[f"recall@10 × {BASELINE}"] = [
        value / baseline[dataset] / 100 if baseline.get(dataset) else math.nan
        for (dataset, _config), value in zip(table.index, table["recall@10"], strict=True)
    ]
    return table.rename(columns={"j": "J", "f1": "F1"}).round(3)
