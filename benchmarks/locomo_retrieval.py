"""Retrieval alone on LoCoMo, without kernels: the quick loop for tuning `EpisodicIndex`.

    python benchmarks/locomo_retrieval.py [PATH] [--no-baseline]
    (default PATH: ../shared/data/locomo/locomo_dev5.json; --no-baseline skips the bm25s row)

Every turn stored as `Speaker said, "text"` under its speaker, each question asked of the index; turn-level
evidence recall@5/10/20 on categories 1–4, per category, on the conversations the weights
were tuned on (conv-26, conv-30) and on the rest (held out), with the p95 time per question.
The rows from "+ dates" on are the steps of issue 23, each switched on in turn, then the
default with one step off, then neighbouring weights: the table is their ablation.
The whole-kernel figures come from `python -m hologram eval` (see benchmarks/eval/).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hologram.eval import load_dataset  # noqa: E402
from hologram.eval.metrics import recall_at  # noqa: E402
from hologram.eval.tiers import BM25Retriever  # noqa: E402
from hologram.memory import (  # noqa: E402
    EpisodicIndex,
    EpisodicWeights,
    Segmenter,
)

DEFAULT = ROOT.parent / "shared" / "data" / "locomo" / "locomo_dev5.json"
TUNED_ON = ("conv-26", "conv-30")
CATEGORIES = ("multi_hop", "temporal", "open_domain", "single_hop")
TARGET_RECALL10, TARGET_P95_MS = 75.0, 10.0

OFF = {"dates": 0.0, "when": 0.0, "expansion": 0.0}
"""The steps of issue 23 (time, a second round), switched off: the rows before them."""

VARIANTS = {
    "bm25 (plain words)": EpisodicWeights(
        previous_turn=0.0, session=0.0, neighbour=0.0, other_speaker=1.0, **OFF
    ),
    "+ previous turn": EpisodicWeights(session=0.0, neighbour=0.0, other_speaker=1.0, **OFF),
    "+ session": EpisodicWeights(neighbour=0.0, other_speaker=1.0, **OFF),
    "+ neighbour": EpisodicWeights(other_speaker=1.0, **OFF),
    "+ speaker": EpisodicWeights(**OFF),
    "+ dates": EpisodicWeights(when=0.0, expansion=0.0),
    "+ when": EpisodicWeights(expansion=0.0),
    "+ expansion (default)": EpisodicWeights(),
    "default, no dates": EpisodicWeights(dates=0.0),
    "default, no when": EpisodicWeights(when=0.0),
    "default, no outside": EpisodicWeights(outside_period=1.0),
    "outside at 0.5": EpisodicWeights(outside_period=0.5),
    "dates, said_in 0": EpisodicWeights(said_in=0.0),
    "dates at 0.5": EpisodicWeights(dates=0.5),
    "expansion anywhere": EpisodicWeights(expansion_elsewhere=False),
    "expansion at 0.6": EpisodicWeights(expansion=0.6),
    "expansion df 0.02": EpisodicWeights(expansion_max_df=0.02),
    "diversity 0.1": EpisodicWeights(diversity=0.1),
    "other speaker at 0.5": EpisodicWeights(other_speaker=0.5),
    "+ next turn (0.3)": EpisodicWeights(next_turn=0.3),
}


def searcher(
    docs: list[tuple[str, float, str, str]], segmenter: Segmenter, weights: EpisodicWeights | None
) -> Callable[[str], list[str]]:
    """The first 20 turn ids for a question: the episodic index with `weights`, or, with
    None, the harness's BM25 baseline (the bm25s library over the same words)."""
    if weights is None:
        baseline = BM25Retriever([(turn_id, text) for turn_id, _, text, _ in docs], segmenter)
        return lambda q: [turn_id for turn_id, _ in asyncio.run(baseline.search(q, 20))]
    index = EpisodicIndex(docs, segmenter.keywords, weights=weights)
    return lambda q: [turn_id for turn_id, _ in index.search(q, 20)]


def main(path: Path) -> None:
    dataset = load_dataset(path)
    segmenter = Segmenter()
    print(f"{path.name}: {dataset.probe_count} QA; categories 1-4; tuned on {', '.join(TUNED_ON)}")
    header = f"{'variant':24s} {'split':6s} {'@5':>5s} {'@10':>5s} {'@20':>5s}  " + " ".join(
        f"{c[:9]:>11s}" for c in CATEGORIES
    )
    print(header + "   p95 ms")
    rows: list[tuple[str, EpisodicWeights | None]] = [("bm25s (library baseline)", None)]
    if "--no-baseline" in sys.argv:
        rows = []
    for name, weights in [*rows, *VARIANTS.items()]:
        for split in ("tuned", "held"):
            scores: dict[tuple[str, int], list[float]] = defaultdict(list)
            times = []
            for conversation in dataset.conversations:
                if (conversation.id in TUNED_ON) != (split == "tuned"):
                    continue
                docs = [
                    (t.id, t.at, f'{t.speaker} said, "{t.text}"', t.speaker)
                    for t in conversation.turns()
                ]
                search = searcher(docs, segmenter, weights)
                for probe in conversation.probes:
                    if not probe.scored or probe.category not in CATEGORIES:
                        continue
                    began = time.perf_counter()
                    ranked = search(probe.question)
                    times.append(time.perf_counter() - began)
                    for k in (5, 10, 20):
                        value = recall_at(ranked, probe.evidence, k)
                        scores[("all", k)].append(value)
                        scores[(probe.category, k)].append(value)
            mean = {key: 100 * float(np.mean(v)) for key, v in scores.items()}
            cells = " ".join(f"{mean[(c, 5)]:5.1f}/{mean[(c, 10)]:5.1f}" for c in CATEGORIES)
            print(
                f"{name:24s} {split:6s} {mean[('all', 5)]:5.1f} {mean[('all', 10)]:5.1f} "
                f"{mean[('all', 20)]:5.1f}  {cells}   {np.percentile(times, 95) * 1000:.2f}"
            )
    print(
        f"targets: recall@10 (1-4) >= {TARGET_RECALL10} %, p95 per question <= {TARGET_P95_MS} ms"
    )


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(Path(args[0]) if args else DEFAULT)
