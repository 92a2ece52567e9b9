"""The Hologram widgets in a real JupyterLab, in real Chromium.

A notebook written here boots a kernel with `%hologram start` and shows the four widgets
(layers, scheduler timeline, context window, graph). Cells are run one at a time, as a person
would, and the test reads the rendered page: each widget's SVG with the counts the kernel's
own state says it should have, the scheduler timeline redrawn by turns that a background task
runs after its cell has finished, and no error in the browser console. A screenshot of each
widget is kept under `<artifacts>/jupyterlab_widgets`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.browser.conftest import JupyterLab
from tests.chromium import artifacts, needs_chromium

pytestmark = needs_chromium()

TURNS = 3
CELLS = [
    # 0: a kernel booted from the notebook, on the offline scripted model
    """
import asyncio
from hologram.memory import Triple
%load_ext hologram
boot = %hologram start --data {data_dir}
kernel = await boot
print("booted", kernel.phase)
""",
    # 1: the dependency layers
    """
layers = %hologram layers
modules = sum(len(layer) for layer in kernel.layers)
print("modules:", modules)
layers
""",
    # 2: the scheduler timeline, empty until turns run
    """
timeline = %hologram scheduler
timeline
""",
    # 3: turns started by a background task that first runs once this cell has ended
    f"""
async def chatter():
    for n in range({TURNS}):
        ticket = await kernel.inject(f"background note {{n}}")
        await ticket

chatting = asyncio.get_running_loop().create_task(chatter())
assert timeline.svg.count('class="run"') == 0
print("runs drawn when the cell ended:", timeline.svg.count('class="run"'))
""",
    # 4: the context window, after the background turns
    """
await chatting
context = %hologram context
print("context events:", len(kernel.state.memory.context))
context
""",
    # 5: the graph around an entity
    """
await kernel.state.graph.store.commit([
    Triple("Alice", "lives_in", "Paris"),
    Triple("Alice", "likes", "green tea"),
    Triple("Paris", "located_in", "France"),
])
graph = %hologram graph Alice
await graph.loading
print("facts shown:", len(graph.facts))
graph
""",
    # 6: close the kernel, flushing its stores
    """
stopping = %hologram shutdown
closed = await stopping
print("closed:", closed[-1])
""",
]


def notebook(data_dir: Path) -> dict[str, Any]:
    cells = [
        {
            "cell_type": "code",
            "metadata": {},
            "execution_count": None,
            "outputs": [],
            "source": source.strip().replace("{data_dir}", str(data_dir)),
        }
        for source in CELLS
    ]
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


class Notebook:
    """The open notebook in the page: run a cell, read what it printed."""

    def __init__(self, page: Any) -> None:
        self.page = page

    def cell(self, index: int) -> Any:
        return self.page.locator(".jp-Notebook .jp-Cell").nth(index)

    def run(self, index: int) -> Any:
        cell = self.cell(index)
        prompt = cell.locator(".jp-InputPrompt")
        # "[ ]:" before, "[*]:" once queued or running, "[n]:" when the kernel has answered.
        # A key pressed while the notebook is still wiring up its kernel can be dropped, so
        # the run is asked again while the cell is plainly not queued ("[*]" never repeats).
        for _ in range(5):
            cell.locator(".jp-InputPrompt").click()
            self.page.locator("jp-button[data-command='notebook:run-cell-and-select-next']").click()
            try:
                self.page.wait_for_function(
                    "(el) => /\\[(\\*|\\d+)\\]/.test(el.textContent)",
                    arg=prompt.element_handle(),
                    timeout=10_000,
                )
                break
            except Exception:
                continue
        try:
            self.page.wait_for_function(
                "(el) => /\\[\\d+\\]/.test(el.textContent)",
                arg=prompt.element_handle(),
                timeout=120_000,
            )
        except Exception as exc:
            raise AssertionError(f"cell {index} did not finish: {cell.inner_text()}") from exc
        if cell.locator(".jp-OutputArea-output[data-mime-type*='error']").count():
            raise AssertionError(f"cell {index} failed: {cell.inner_text()}")
        return cell

    def printed(self, index: int, marker: str) -> str:
        """What cell `index` printed, once a line with `marker` is there: the prompt's
        number and the stream output travel in separate messages, so either may be first."""
        outputs = self.cell(index).locator("[data-mime-type='application/vnd.jupyter.stdout']")
        outputs.filter(has_text=marker).first.wait_for()
        return "\n".join(outputs.all_inner_texts())


def count(cell: Any, selector: str) -> int:
    return int(cell.locator(selector).count())


def test_the_widgets_render_in_jupyterlab_and_the_timeline_updates_between_cells(
    jupyterlab: JupyterLab, browser_page: tuple[Any, list[str]], tmp_path: Path
) -> None:
    page, problems = browser_page
    shots = artifacts(tmp_path, "jupyterlab_widgets")
    name = "hologram_widgets.ipynb"
    (jupyterlab.root / name).write_text(json.dumps(notebook(tmp_path / "data")))
    page.goto(jupyterlab.notebook_url(name))
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']")
    page.locator(".jp-StatusBar-Widget", has_text="| Idle").first.wait_for()
    book = Notebook(page)

    book.run(0)
    assert "booted ready" in book.printed(0, "booted")

    layers = book.run(1)
    modules = int(book.printed(1, "modules:").split("modules:")[1].split()[0])
    layers.locator("svg.hologram-layers").wait_for()
    assert count(layers, "svg.hologram-layers g.module") >= modules > 0
    assert f"{modules} modules in" in layers.inner_text()
    layers.locator("svg.hologram-layers").screenshot(path=str(shots / "layers.png"))

    timeline = book.run(2)
    timeline.locator("svg.hologram-scheduler").wait_for()
    assert count(timeline, "svg.hologram-scheduler g.run") == 0

    book.run(3)
    assert "runs drawn when the cell ended: 0" in book.printed(3, "runs drawn")
    # No cell runs now: only the background task's turns can redraw the timeline.
    finished = "svg.hologram-scheduler g.run[data-ended='finish']"
    page.wait_for_function(f'(n) => document.querySelectorAll("{finished}").length >= n', arg=TURNS)
    assert count(timeline, finished) == TURNS
    assert "running: idle" in timeline.locator("svg.hologram-scheduler text.stack").text_content()
    timeline.locator("svg.hologram-scheduler").screenshot(path=str(shots / "scheduler.png"))

    context = book.run(4)
    events = int(book.printed(4, "context events:").split("context events:")[1].split()[0])
    assert events >= 2 * TURNS
    context.locator("svg.hologram-prune").wait_for(state="attached")
    rows = context.locator(".widget-html-content table tbody tr")
    assert rows.count() == events
    assert "background note 2" in context.inner_text()
    context.locator(".jp-OutputArea-output").last.screenshot(path=str(shots / "context.png"))

    graph = book.run(5)
    facts = int(book.printed(5, "facts shown:").split("facts shown:")[1].split()[0])
    assert facts == 3
    graph.locator("svg.hologram-graph").wait_for()
    assert count(graph, "svg.hologram-graph g.fact") == facts
    entities = graph.locator("svg.hologram-graph g.entity")
    names = {entities.nth(i).get_attribute("data-entity") for i in range(entities.count())}
    assert names == {"Alice", "Paris", "France", "green tea"}
    graph.locator(".jp-OutputArea-output").last.screenshot(path=str(shots / "graph.png"))

    book.run(6)
    assert "closed: data-dir lock" in book.printed(6, "closed:")
    page.screenshot(path=str(shots / "notebook.png"), full_page=True)
    assert problems == []
