"""`%hologram graph`: the graph widget through a real IPython shell and kernel."""

from __future__ import annotations

import asyncio
import base64
import math
import struct
import zlib
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell

from hologram.memory import Triple
from hologram.notebook.graph_view import RING
from hologram.notebook.graph_widget import GraphWidget


async def test_the_graph_widget_sizes_by_mentions_dashes_history_and_highlights_recall(
    shell: InteractiveShell, data_dir: Path
) -> None:
    kernel = await shell.run_line_magic("hologram", f"start --data {data_dir}")
    graph = kernel.state.graph
    await graph.store.commit(
        [
            Triple("Alice", "lives_in", "Paris"),
            Triple("Alice", "likes", "jazz"),
            Triple("Alice", "knows", "Bob"),
        ]
    )
    await graph.store.commit([Triple("Alice", "lives_in", "Berlin")])
    await graph.indexer.recall("Alice")
    widget = shell.run_line_magic("hologram", "graph Alice --history")
    assert isinstance(widget.widget, GraphWidget)
    await widget.loading
    svg = widget.svg
    assert 'data-entity="Alice" data-mentions="4" data-highlighted="1"' in svg
    assert 'data-entity="Paris" data-mentions="1"' in svg
    assert svg.count('data-current="0"') == 1 and "stroke-dasharray" in svg
    assert set(widget.relations["target"]) == {"Paris", "Berlin", "jazz", "Bob"}
    assert widget.entities.iloc[0]["name"] == "Alice"
    widget.history_box.value = False
    await widget.loading
    assert 'data-current="0"' not in widget.svg and "Paris" not in widget.svg
    missing = shell.run_line_magic("hologram", "graph Nobody")
    await missing.loading
    assert 'data-empty="1"' in missing.svg
    status = shell.run_line_magic("hologram", "status")
    assert status["graph_memory"]["heartbeat_totals"]["model_calls"] == 0
    widget.close()
    missing.close()
    await shell.run_line_magic("hologram", "shutdown")


async def test_a_refresh_overtaken_by_newer_settings_never_draws_over_them(
    shell: InteractiveShell, data_dir: Path
) -> None:
    kernel = await shell.run_line_magic("hologram", f"start --data {data_dir}")
    store = kernel.state.graph.store
    await store.commit([Triple("Alice", "likes", "jazz"), Triple("Bob", "likes", "tea")])
    widget = shell.run_line_magic("hologram", "graph Alice")
    await widget.loading
    # Alice's next lookup is slow, so Bob's, asked after it, finishes first.
    recall = store.recall
    alice_asked = asyncio.Event()

    async def slow_for_alice(names, *args, **kwargs):  # type: ignore[no-untyped-def]
        if names == ["Alice"]:
            alice_asked.set()
            await asyncio.sleep(0.3)
        return await recall(names, *args, **kwargs)

    store.recall = slow_for_alice  # type: ignore[method-assign]
    stale = widget.schedule()
    await alice_asked.wait()
    widget.entity_box.value = "Bob"
    await stale  # whoever awaits the older refresh gets the widget as the newer leaves it
    assert 'data-entity="Bob"' in widget.svg and "Alice" not in widget.svg
    assert set(widget.relations["source"]) == {"Bob"}
    widget.close()
    await shell.run_line_magic("hologram", "shutdown")


async def test_closing_the_widget_cancels_a_refresh_still_reading(
    shell: InteractiveShell, data_dir: Path
) -> None:
    kernel = await shell.run_line_magic("hologram", f"start --data {data_dir}")
    store = kernel.state.graph.store
    await store.commit([Triple("Alice", "likes", "jazz")])
    reading = asyncio.Event()
    facts = store.facts

    async def slow_facts(*args, **kwargs):  # type: ignore[no-untyped-def]
        reading.set()
        await asyncio.sleep(30)
        return await facts(*args, **kwargs)

    store.facts = slow_facts  # type: ignore[method-assign]
    widget = shell.run_line_magic("hologram", "graph")
    await reading.wait()
    widget.close()
    with pytest.raises(asyncio.CancelledError):
        await widget.loading
    await shell.run_line_magic("hologram", "shutdown")


def tiny_png() -> bytes:
    """A real 2×2 PNG, written here (no file shipped for one test)."""
    raw = b"".join(b"\x00" + b"\xc8\x50\x28" * 2 for _ in range(2))

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


async def test_a_click_opens_an_entitys_neighbours_around_it_and_keeps_every_place(
    shell: InteractiveShell, data_dir: Path
) -> None:
    kernel = await shell.run_line_magic("hologram", f"start --data {data_dir}")
    await kernel.state.graph.store.commit(
        [
            Triple("Alice", "lives_in", "Paris"),
            Triple("Paris", "located_in", "France"),
            Triple("Paris", "twinned_with", "Rome"),
        ]
    )
    widget = shell.run_line_magic("hologram", "graph Alice --depth 1")
    await widget.loading
    assert {f["target"] for f in widget.view.data["facts"]} == {"Paris"}
    placed = dict(widget.view.positions)
    assert set(placed) == {"Alice", "Paris"}
    widget.view.positions = {**placed, "Alice": [12.5, 34.0]}  # as a drag leaves it
    widget.widget._on_message(widget.view, {"expand": "Paris"}, [])
    await widget.expanding
    data = widget.view.data
    assert {f["target"] for f in data["facts"]} == {"Paris", "France", "Rome"}
    assert data["expanded"] == ["Paris"] and {n["name"] for n in data["nodes"]} >= {"France"}
    positions = widget.view.positions
    assert positions["Alice"] == [12.5, 34.0] and positions["Paris"] == placed["Paris"]
    for name in ("France", "Rome"):  # on a ring around Paris
        distance = math.dist(positions[name], positions["Paris"])
        assert distance == pytest.approx(RING, abs=0.2)
    assert widget.svg.count('class="fact"') == 3
    widget.close()
    await shell.run_line_magic("hologram", "shutdown")


async def test_a_facts_media_block_travels_as_a_thumbnail_with_its_sentence_and_validity(
    shell: InteractiveShell, data_dir: Path
) -> None:
    kernel = await shell.run_line_magic("hologram", f"start --data {data_dir}")
    store = kernel.state.graph.store
    image = tiny_png()
    block = await store.blocks.add_media(image, "image/png")
    await store.commit(
        [
            Triple(
                "Alice",
                "painted",
                "a sunset",
                sentence_text="Alice painted a sunset.",
                confidence=0.8,
                media_digests=(block.digest,),
            )
        ]
    )
    await store.commit([Triple("Alice", "lives_in", "Paris")])
    await store.commit([Triple("Alice", "lives_in", "Berlin")])
    widget = shell.run_line_magic("hologram", "graph Alice --history")
    await widget.loading
    facts = {f["target"]: f for f in widget.view.data["facts"]}
    painted = facts["a sunset"]
    (media,) = painted["media"]
    assert media["src"] == "data:image/png;base64," + base64.b64encode(image).decode()
    assert (painted["sentence"], painted["confidence"]) == ("Alice painted a sunset.", 0.8)
    assert facts["Paris"]["invalid_at"] >= facts["Paris"]["valid_at"]
    assert facts["Berlin"]["invalid_at"] is None and facts["Paris"]["closed_reason"]
    widget.close()
    await shell.run_line_magic("hologram", "shutdown")
