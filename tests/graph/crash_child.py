"""Run as a subprocess: commit batches of triples; the last batch stops inside its open
transaction (after its rows are written, before COMMIT) and says so, to be killed there."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from hologram.kernel import KernelTasks, ManualClock
from hologram.memory import GraphStore, Triple
from hologram.memory.graph.store import GraphStore as _Store
from tests.memory.helpers import AxisEmbedder

BATCH = 20


class PausingStore(_Store):
    pause = False

    async def _insert_relations(self, db, *args, **kwargs):  # type: ignore[no-untyped-def]
        await super()._insert_relations(db, *args, **kwargs)
        if self.pause:
            print("IN_TRANSACTION", flush=True)
            await asyncio.sleep(60)


def batch(n: int) -> list[Triple]:
    return [
        Triple(f"b{n}-s{i}", "knows", f"b{n}-t{i}", sentence_text=f"batch {n}")
        for i in range(BATCH)
    ]


async def main(path: Path, complete: int) -> None:
    # The child is killed mid-commit: its group is never closed.
    tasks = KernelTasks().scope("graph")
    store: GraphStore = await PausingStore.open_at(path, AxisEmbedder(), ManualClock(), tasks=tasks)
    for n in range(complete):
        await store.commit(batch(n))
    print("COMMITTED", complete, flush=True)
    store.pause = True
    await store.commit(batch(complete))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), int(sys.argv[2])))
