"""`%hologram graph`: the graph widget through a real IPython shell and kernel."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell

from hologram.memory import Triple
from hologram.notebook.graph_widget import GraphWidget


@pytest.fixture
def shell() -> Iterator[InteractiveShell]:
    ipython = InteractiveShell.instance()
    ipython.run_line_magic("load_ext", "hologram")
    yield ipython
    ipython.run_line_magic("unload_ext", "hologram")
    InteractiveShell.clear_instance()


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
