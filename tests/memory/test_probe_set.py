"""The retrieval probe set is well formed, and the default embedder keeps its recall on it."""

from __future__ import annotations

import json
from pathlib import Path

from hologram.kernel import KernelTasks, ManualClock
from hologram.memory import ColdContext, HashedNgramEmbedder, Segmenter
from hologram.memory.turns import TurnStore

PROBE = Path(__file__).resolve().parents[2] / "datasets" / "memory_probe"


def read(name: str) -> list[dict]:
    return [json.loads(line) for line in (PROBE / name).read_text().splitlines() if line]


def test_every_question_names_existing_documents_and_there_are_at_least_100() -> None:
    docs, questions = read("docs.jsonl"), read("questions.jsonl")
    ids = [d["id"] for d in docs]
    assert len(ids) == len(set(ids)) and {d["lang"] for d in docs} == {"zh", "en"}
    assert len(questions) >= 100 and len({q["id"] for q in questions}) == len(questions)
    for q in questions:
        assert q["answers"] and set(q["answers"]) <= set(ids), q["id"]
        assert q["lang"] in {"zh", "en"} and q["question"].strip()


async def test_default_embedder_recalls_at_least_nine_in_ten_questions_at_three(
    tmp_path: Path,
    tasks: KernelTasks,
) -> None:
    docs, questions = read("docs.jsonl"), read("questions.jsonl")
    store = ColdContext(
        TurnStore(tmp_path / "turns.db"),
        HashedNgramEmbedder(),
        Segmenter().keywords,
        ManualClock(),
        tasks=tasks.scope("coldcontext"),
    )
    ids = {}
    for doc in docs:
        ids[(await store.commit(doc["text"])).id] = doc["id"]
    found = 0
    for q in questions:
        hits = await store.query(q["question"], 3)
        found += bool({ids[h.doc.id] for h in hits} & set(q["answers"]))
    # Measured 95 % (benchmarks/memory_context.py); the floor catches a real regression.
    assert found / len(questions) >= 0.9
