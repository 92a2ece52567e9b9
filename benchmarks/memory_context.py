"""Memory I benchmarks: the context window, the cold context, the embedders.

    python benchmarks/memory_context.py            # everything (about a minute)
    python benchmarks/memory_context.py --quick    # smaller sizes, for a smoke run

Prints medians and p95 beside the targets of TARGETS.md. Optional embedders join the
recall table when configured: HOLOGRAM_STATIC_VECTORS=<.vec file>, or
HOLOGRAM_HTTP_EMBEDDINGS=<base_url>,<model>,<dim> (e.g. an Ollama on 127.0.0.1).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hologram.kernel import KernelTasks, ManualClock  # noqa: E402
from hologram.memory import (  # noqa: E402
    ColdContext,
    ColdDoc,
    ContextEvent,
    ContextWindow,
    HashedNgramEmbedder,
    HttpEmbedder,
    Segmenter,
    StaticEmbedder,
    StoredVector,
    TfidfBigramEmbedder,
)
from hologram.memory.recall.episodic import stems  # noqa: E402
from hologram.memory.turns import TurnStore  # noqa: E402
from hologram.sdk import Embedder  # noqa: E402

PROBE = ROOT / "datasets" / "memory_probe"


def load_probe() -> tuple[list[dict], list[dict]]:
    def read(name: str) -> list[dict]:
        return [json.loads(line) for line in (PROBE / name).read_text().splitlines() if line]

    return read("docs.jsonl"), read("questions.jsonl")


def stats_ms(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p95 * 1000


def random_unit(n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    m = rng.standard_normal((n, dim)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def word_pool() -> tuple[list[str], list[float]]:
    """Words with realistic (Zipf-like) frequencies: jieba's own dictionary, plus English."""
    import jieba

    words, weights = [], []
    with open(Path(jieba.__file__).parent / "dict.txt", encoding="utf-8") as handle:
        for i, line in enumerate(handle):
            if i % 7:
                continue
            word, freq, *_ = line.split()
            words.append(word)
            weights.append(float(freq))
    docs, _ = load_probe()
    english = {w.strip(".,").lower() for d in docs if d["lang"] == "en" for w in d["text"].split()}
    for word in english:
        words.append(word)
        weights.append(2000.0)
    return words, weights


async def bench_context(sizes: list[int], rounds: int, tasks: KernelTasks) -> None:
    print("\n## context window: append + prune (one event over top_k, so every prune drops one)")
    print(f"{'events':>8} {'median ms':>10} {'p95 ms':>8}   target (10k) ≤ 5 ms")
    embedder = HashedNgramEmbedder()
    rng = np.random.default_rng(1)
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            clock = ManualClock()
            cold = ColdContext(
                TurnStore(Path(tmp) / "turns.db"),
                embedder,
                Segmenter().keywords,
                clock,
                tasks=tasks.scope("coldcontext"),
            )
            window = ContextWindow(
                cold.turns,
                embedder,
                clock,
                top_k=size,
                protected_recent=10,
                cold=cold,
                tasks=tasks.scope("memory"),
            )
            await window.open()
            vectors = random_unit(size, embedder.dim, rng)
            for i in range(size):
                event = ContextEvent(timestamp=clock.now() + i, source="qq", input=f"event {i}")
                event.vector = StoredVector(embedder.fingerprint, vectors[i])
                window._insert(event)
            await clock.advance(size + 1)
            await window.append("qq", input="warm up jieba and the thread pool")
            await window.prune("warm up")
            samples = []
            for i in range(rounds):
                await clock.advance(1)
                text = f"我们聊聊第{i}件事 and the weather"
                started = time.perf_counter()
                await window.append("qq", input=text)
                await window.prune(text)
                samples.append(time.perf_counter() - started)
            median, p95 = stats_ms(samples)
            flag = "  ✓" if size != 10_000 else ("  ✓" if median <= 5 else "  ✗")
            print(f"{size:>8} {median:>10.2f} {p95:>8.2f}{flag if size == 10_000 else ''}")
            await window.close()


async def build_cold(
    size: int, embedder: Embedder, words, weights, root: Path, tasks: KernelTasks
) -> ColdContext:
    """A store of `size` synthetic documents indexed in memory (files are not written: the
    query path never reads them)."""
    segmenter = Segmenter()
    store = ColdContext(
        TurnStore(root / "turns.db"),
        embedder,
        segmenter.keywords,
        ManualClock(),
        tasks=tasks.scope("coldcontext"),
    )
    await store.wait_ready()
    rng = random.Random(size)
    texts = ["".join(rng.choices(words, weights, k=rng.randint(6, 20))) for _ in range(size)]
    vectors = embedder.embed_texts(texts)
    for i, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
        # A turn a minute, sessions of 20 turns an hour apart: sessions and neighbours as
        # the episodic recall meets them in a conversation.
        at = (i // 20) * 7200.0 + (i % 20) * 60.0
        doc = ColdDoc(
            id=uuid.uuid4().hex[:16], created_at=at, stored_at=at, source="qq",
            input=text, text=text, tokens=segmenter.keywords(text),
            vector=StoredVector(embedder.fingerprint, vector),
        )  # fmt: skip
        store._index(doc)
    store._write = lambda docs, durable=True: None  # type: ignore[method-assign]
    return store


async def bench_cold(sizes: list[int], queries: int, tasks: KernelTasks) -> None:
    print("\n## cold context: query latency (dual recall, top 3)")
    print(f"{'docs':>8} {'p50 ms':>8} {'p95 ms':>8}   target (100k) p95 ≤ 20 ms")
    words, weights = word_pool()
    _, questions = load_probe()
    embedder = HashedNgramEmbedder()
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            built = time.perf_counter()
            store = await build_cold(size, embedder, words, weights, Path(tmp), tasks)
            built = time.perf_counter() - built
            samples = []
            for i in range(queries):
                question = questions[i % len(questions)]["question"]
                started = time.perf_counter()
                await store.query(question, 3)
                samples.append(time.perf_counter() - started)
            p50, p95 = stats_ms(samples)
            mark = "" if size != 100_000 else ("  ✓" if p95 <= 20 else "  ✗")
            print(f"{size:>8} {p50:>8.2f} {p95:>8.2f}{mark}   (built in {built:.1f} s)")


def embedders() -> dict[str, Embedder]:
    found: dict[str, Embedder] = {"default": HashedNgramEmbedder()}
    docs, _ = load_probe()
    found["tfidf (uniform)"] = TfidfBigramEmbedder()
    found["tfidf (fitted on docs)"] = TfidfBigramEmbedder.fit(d["text"] for d in docs)
    if os.environ.get("HOLOGRAM_STATIC_VECTORS"):
        found["static"] = StaticEmbedder(Path(os.environ["HOLOGRAM_STATIC_VECTORS"]))
    if os.environ.get("HOLOGRAM_HTTP_EMBEDDINGS"):
        url, model, dim = os.environ["HOLOGRAM_HTTP_EMBEDDINGS"].split(",")
        found[f"http {model}"] = HttpEmbedder(url, model, int(dim))
    return found


def bench_throughput(found: dict[str, Embedder]) -> None:
    print("\n## embedder throughput (batches of 64 short zh/en texts)")
    docs, questions = load_probe()
    texts = [d["text"] for d in docs] + [q["question"] for q in questions]
    texts = (texts * 8)[:1024]
    for name, embedder in found.items():
        embedder.embed_texts(texts[:8])
        started = time.perf_counter()
        for start in range(0, len(texts), 64):
            embedder.embed_texts(texts[start : start + 64])
        seconds = time.perf_counter() - started
        print(f"{name:>24} {len(texts) / seconds:>10,.0f} texts/s")


async def bench_recall(found: dict[str, Embedder], tasks: KernelTasks) -> None:
    docs, questions = load_probe()
    print(f"\n## recall@3 on the probe set ({len(docs)} docs, {len(questions)} questions)")
    print(f"{'embedder':>24} {'fused':>7} {'vector':>7} {'words':>7} {'zh':>7} {'en':>7}")
    for name, embedder in found.items():
        with tempfile.TemporaryDirectory() as tmp:
            store = ColdContext(
                TurnStore(Path(tmp) / "turns.db"),
                embedder,
                Segmenter().keywords,
                ManualClock(),
                tasks=tasks.scope("coldcontext"),
            )
            ids = {}
            for doc in docs:
                ids[(await store.commit(doc["text"])).id] = doc["id"]
            hits = {"fused": 0, "vector": 0, "words": 0, "zh": 0, "en": 0}
            index = store.recall_index
            for q in questions:
                answers = set(q["answers"])
                fused = {ids[h.doc.id] for h in store._search(q["question"], 3)}
                query_vector = embedder.embed_texts([q["question"]])[0]
                terms = stems(store.keywords(q["question"]))
                vector = {ids[h.id] for h in index.search([], query_vector, 3)}
                bm25 = {ids[h.id] for h in index.search(terms, None, 3)}
                hits["fused"] += bool(fused & answers)
                hits["vector"] += bool(vector & answers)
                hits["words"] += bool(bm25 & answers)
                hits[q["lang"]] += bool(fused & answers)
            n = len(questions)
            per_lang = {lang: sum(q["lang"] == lang for q in questions) for lang in ("zh", "en")}
            print(
                f"{name:>24} {hits['fused'] / n:>7.1%} {hits['vector'] / n:>7.1%} "
                f"{hits['words'] / n:>7.1%} {hits['zh'] / per_lang['zh']:>7.1%} "
                f"{hits['en'] / per_lang['en']:>7.1%}"
            )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args()
    quick = args.quick
    found = embedders()
    tasks = KernelTasks()  # the benchmark's own group: there is no kernel here
    await bench_recall(found, tasks)
    bench_throughput(found)
    await bench_context(
        [1_000, 10_000] if quick else [1_000, 10_000, 100_000], 50 if quick else 200, tasks
    )
    await bench_cold([10_000] if quick else [10_000, 100_000], 100 if quick else 300, tasks)
    await tasks.close()


if __name__ == "__main__":
    asyncio.run(main())
