"""Graph memory benchmark: recall latency at 1k, 10k and 100k entities (about five relations
each), commit throughput, and database size per 10k relations.

    python benchmarks/memory_graph.py [--sizes 1000 10000 100000] [--queries 300]

Recall is keyword recall with a depth-2 walk, as `memory_recall` and the indexer run it:
a third of the queries are exact names, a third prefixes, a third substrings. The graph is
built through `GraphStore.commit` in batches of 1,000 triples (SQLite WAL, synchronous=FULL,
a real file in a temporary directory), entity names embedded by the 64-dimension bigram
TF-IDF embedder (building 100k entities with the jieba embedder takes minutes and does not
change recall, which reads no vectors).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import string
import tempfile
import time
from pathlib import Path

from hologram.kernel import KernelTasks, ManualClock
from hologram.memory import GraphStore, TfidfBigramEmbedder, Triple

TARGET_P95_MS = 20.0
RELATIONS = ("knows", "likes", "works_at", "visited", "owns", "mentions")


def names(count: int, rnd: random.Random) -> list[str]:
    syllables = ["ka", "ri", "mo", "ten", "sa", "lu", "vi", "no", "be", "dro", "fi", "gan"]
    out = []
    for i in range(count):
        word = "".join(rnd.choice(syllables) for _ in range(rnd.randint(2, 4)))
        out.append(f"{word.capitalize()} {rnd.choice(string.ascii_uppercase)}{i}")
    return out


async def build(
    path: Path, count: int, rnd: random.Random, tasks: KernelTasks
) -> tuple[GraphStore, list[str], float]:
    store = await GraphStore.open_at(
        path, TfidfBigramEmbedder(dim=64), ManualClock(), tasks=tasks.scope("graph")
    )
    entity_names = names(count, rnd)
    triples = []
    for i, source in enumerate(entity_names):
        for _ in range(5):
            # Mostly local links with some long ones: clusters plus hubs, like real memory.
            j = (i + rnd.randint(1, 50)) % count if rnd.random() < 0.8 else rnd.randrange(count)
            triples.append(
                Triple(source, rnd.choice(RELATIONS), entity_names[j], sentence_text=f"s{i}")
            )
    started = time.perf_counter()
    for start in range(0, len(triples), 1000):
        await store.commit(triples[start : start + 1000])
    seconds = time.perf_counter() - started
    return store, entity_names, len(triples) / seconds


async def recall_times(
    store: GraphStore, entity_names: list[str], queries: int, rnd: random.Random
) -> list[float]:
    times = []
    for q in range(queries):
        name = rnd.choice(entity_names)
        keyword = (name, name.split()[0][:4], name.split()[1])[q % 3]
        started = time.perf_counter()
        result = await store.recall([keyword], depth=2)
        times.append((time.perf_counter() - started) * 1000)
        assert result.entities, f"no entity for {keyword!r}"
    return times


def p95(values: list[float]) -> float:
    return sorted(values)[max(int(len(values) * 0.95) - 1, 0)]


async def main(sizes: list[int], queries: int) -> None:
    rnd = random.Random(7)
    print(
        f"{'entities':>9} {'relations':>10} {'recall p50':>11} {'recall p95':>11} "
        f"{'target p95':>11} {'commit/s':>10} {'MB/10k rel':>11}"
    )
    tasks = KernelTasks()  # the benchmark's own group: there is no kernel here
    for count in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            store, entity_names, rate = await build(Path(tmp) / "graph.db", count, rnd, tasks)
            await recall_times(store, entity_names, 20, rnd)  # warm the page cache
            times = await recall_times(store, entity_names, queries, rnd)
            stats = await store.stats()
            await store.wal_checkpoint()
            size = (Path(tmp) / "graph.db").stat().st_size
            relations = stats["current_facts"] + stats["closed_facts"]
            await store.close()
        mark = "ok" if p95(times) <= TARGET_P95_MS else "MISSED"
        print(
            f"{count:>9,} {relations:>10,} {statistics.median(times):>9.2f}ms "
            f"{p95(times):>9.2f}ms {TARGET_P95_MS:>8.0f} ms {rate:>10,.0f} "
            f"{size / 1e6 / (relations / 10_000):>11.2f}  {mark}"
        )
    await tasks.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    asyncio.run(main(args.sizes, args.queries))
