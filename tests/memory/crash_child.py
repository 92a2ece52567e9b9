"""Run by test_durability: a real kernel taking inputs until it is killed.

Prints "ack <n>" once input n is durable: appended, then flushed, as the kernel's journal
marks an input done only after its turn's memory is flushed.
"""

from __future__ import annotations

import asyncio
import sys

from hologram import Kernel


async def main(data_dir: str) -> None:
    async with Kernel(data_dir) as kernel:
        memory = kernel.state.memory
        memory.context.top_k = 12  # prune often: archives happen mid-conversation
        n = 0
        while True:
            text = f"message {n} about {'coffee' if n % 3 else 'rain'}"
            await memory.context.append("qq", input=text)
            if n % 2:  # two appends queued at a time
                await memory.flush()
                print(f"ack {n - 1}\nack {n}", flush=True)
            if n % 5 == 4:
                await memory.context.prune(text)
            n += 1


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
