"""The Hologram widgets in a real JupyterLab, in real Chromium.

A notebook written here boots a kernel with `%hologram start` and shows the four widgets
(layers, scheduler timeline, context window, graph). Cells are run one at a time, as a person
would, and the test reads and drives the rendered page: each widget with the counts the
kernel's own state says it should have; hovering a module lights its ties; the scheduler
timeline redrawn by turns that a background task runs after its cell has finished, a bar's
hover telling its input's text, the wheel zooming its axis; the context widget's top_k
slider moving the cut; a node of the graph dragged and a neighbour opened, which the kernel
sees; and no error in the browser console. Screenshots are kept under
`<artifacts>/jupyterlab_widgets`.
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
from hologram.memory import Fate, Triple
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
    # 4: the context window, after the background turns and a prune to four events
    """
await chatting
window = kernel.state.memory.context
window.top_k, window.protected_recent = 4, 2
report = await window.prune("background note 2")
context = %hologram context
await context.scoring
print("context events:", len(window), "archived:", len(report.ids(Fate.ARCHIVED)))
context
""",
    # 5: the graph around an entity, two hops: France's own neighbour is one hop further
    """
await kernel.state.graph.store.commit([
    Triple("Alice", "lives_in", "Paris"),
    Triple("Alice", "likes", "green tea"),
    Triple("Paris", "located_in", "France"),
    Triple("France", "part_of", "Europe"),
])
graph = %hologram graph Alice
await graph.loading
print("facts shown:", len(graph.facts))
graph
""",
    # 6: what the browser's drag and click did to the widget in the kernel
    """
print("kernel sees: facts", len(graph.facts), "expanded", graph.expanded,
      "Alice at", graph.view.positions["Alice"])
""",
    # 7: close the kernel, flushing its stores
    """
stopping = %hologram shutdown
closed = await stopping
print("closed:", closed[-1])
""",
    # 8: an experiment's recall chart (a summary as Experiment.collect writes it)
    """
import pandas as pd
from hologram.eval.chart import RecallChart

summary = pd.DataFrame([
    {"dataset": "companion_en", "config": config, "category": category, "scored": 20,
     "recall@5": r5, "recall@10": r10}
    for config, category, r5, r10 in [
        ("kernel", "single_hop", 0.5, 0.75), ("kernel", "all", 0.45, 0.6),
        ("episodic", "single_hop", 0.55, 0.8), ("episodic", "all", 0.5, 0.65),
    ]
])
RecallChart(summary)
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


def bboxes(cell: Any, selector: str) -> list[dict[str, float]]:
    return cell.locator(selector).evaluate_all(
        "(els) => els.map((e) => { const b = e.getBoundingClientRect();"
        " return {x: b.x, y: b.y, w: b.width, h: b.height}; })"
    )


def overlaps(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["x"] < b["x"] + b["w"]
        and b["x"] < a["x"] + a["w"]
        and (a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"])
    )


def check_layers(book: Notebook, shots: Path) -> None:
    layers = book.run(1)
    modules = int(book.printed(1, "modules:").split("modules:")[1].split()[0])
    layers.locator("svg.hologram-layers").wait_for()
    assert count(layers, "svg.hologram-layers g.module") >= modules > 0
    assert f"{modules} modules in" in layers.inner_text()
    labels = bboxes(layers, "svg.hologram-layers text.facility-label:not(.hover-only)")
    assert len(labels) >= 10
    assert [(a, b) for i, a in enumerate(labels) for b in labels[i + 1 :] if overlaps(a, b)] == []
    # Hovering a module lights what it requires and what it provides.
    layers.locator("svg.hologram-layers g.module[data-module='memory'] rect").first.hover()
    requires = layers.locator("g.edge.requires")
    assert {requires.nth(i).get_attribute("data-to") for i in range(requires.count())} == {"memory"}
    provides = layers.locator("g.edge.provides")
    assert provides.count() >= 2
    assert {provides.nth(i).get_attribute("data-from") for i in range(provides.count())} == {
        "memory"
    }
    assert "requires" in layers.locator("[data-testid=tooltip]").text_content()
    layers.locator("svg.hologram-layers").screenshot(path=str(shots / "layers.png"))


def check_timeline(book: Notebook, page: Any, shots: Path) -> None:
    timeline = book.run(2)
    timeline.locator("svg.hologram-scheduler").wait_for()
    assert count(timeline, "svg.hologram-scheduler g.run") == 0
    book.run(3)
    assert "runs drawn when the cell ended: 0" in book.printed(3, "runs drawn")
    # No cell runs now: only the background task's turns can redraw the timeline.
    finished = "svg.hologram-scheduler g.run[data-ended='finish']"
    page.wait_for_function(f'(n) => document.querySelectorAll("{finished}").length >= n', arg=TURNS)
    assert count(timeline, finished) == TURNS
    stack = timeline.locator("svg.hologram-scheduler text.stack")
    assert "running: idle" in stack.text_content()
    # Hover an input's bar and read its text, its channel and why it started.
    timeline.locator(f"{finished}").nth(1).hover()
    tip = timeline.locator("[data-testid=tooltip]")
    assert "background note 1" in tip.text_content() and "notebook" in tip.text_content()
    timeline.locator("svg.hologram-scheduler g.run").nth(1).screenshot(
        path=str(shots / "scheduler_bar.png")
    )
    timeline.locator(".hg-scheduler").screenshot(path=str(shots / "scheduler_hover.png"))
    # The wheel zooms the time axis; a double click shows it all again.
    timeline.locator("svg.hologram-scheduler").hover()
    page.mouse.wheel(0, -400)
    page.wait_for_function(
        "() => document.querySelector('svg.hologram-scheduler text.stack').textContent"
        ".includes('double-click')"
    )
    timeline.locator("svg.hologram-scheduler").screenshot(path=str(shots / "scheduler.png"))
    timeline.locator("svg.hologram-scheduler").dblclick()
    assert "wheel: zoom" in stack.text_content()


def check_context(book: Notebook, shots: Path) -> None:
    context = book.run(4)
    printed = book.printed(4, "context events:").split("context events:")[1].split()
    events, archived = int(printed[0]), int(printed[2])
    assert events == 4 and archived >= 1
    rows = context.locator(".hg-context .hg-rows .candidate")
    rows.first.wait_for()
    assert rows.count() == events
    assert count(context, ".hg-context .hg-leaving .candidate[data-fate='archived']") == archived
    cut = context.locator("[data-testid=top-k-cut]")
    assert cut.get_attribute("data-after") == "4"
    # Move the top_k slider: the cut moves to what a prune with that top_k would keep.
    context.locator("[data-testid=top-k]").fill("3")
    keeps = [int(rows.nth(i).get_attribute("data-keep-from")) for i in range(rows.count())]
    assert cut.get_attribute("data-after") == str(sum(k <= 3 for k in keeps)) == "3"
    assert count(context, ".candidate[data-preview='cut']") == 1
    context.locator("[data-testid=top-k]").fill("2")
    assert cut.get_attribute("data-after") == "2"
    assert count(context, ".hg-rows .candidate[data-fate='protected']") == 2
    # A long text opens on a click.
    rows.nth(0).locator(".hg-text").click()
    assert rows.nth(0).get_attribute("data-open") == "1"
    assert "ago" in rows.nth(0).inner_text()
    context.locator(".jp-OutputArea-output").last.screenshot(path=str(shots / "context.png"))


def check_graph(book: Notebook, page: Any, shots: Path) -> None:
    graph = book.run(5)
    facts = int(book.printed(5, "facts shown:").split("facts shown:")[1].split()[0])
    assert facts == 3
    graph.locator("svg.hologram-graph").wait_for()
    assert count(graph, "svg.hologram-graph g.fact") == facts
    entities = graph.locator("svg.hologram-graph g.entity")
    names = {entities.nth(i).get_attribute("data-entity") for i in range(entities.count())}
    assert names == {"Alice", "Paris", "France", "green tea"}
    # Drag Alice somewhere else: her circle and her facts follow the pointer.
    alice = graph.locator("g.entity[data-entity='Alice'] circle")
    before = alice.bounding_box()
    page.mouse.move(before["x"] + before["width"] / 2, before["y"] + before["height"] / 2)
    page.mouse.down()
    page.mouse.move(before["x"] + 60, before["y"] + 40, steps=8)
    page.mouse.up()
    after = alice.bounding_box()
    assert abs(after["x"] - before["x"] - 60 + before["width"] / 2) < 3
    dropped = [float(alice.get_attribute("cx")), float(alice.get_attribute("cy"))]
    # Hover a fact: its sentence, confidence and validity.
    graph.locator("g.fact").first.hover()
    tip = graph.locator("[data-testid=tooltip]").text_content()
    assert "confidence" in tip and "valid" in tip
    # Click France: the kernel opens its neighbours, and Europe appears.
    graph.locator("g.entity[data-entity='France'] circle").click()
    graph.locator("g.entity[data-entity='Europe']").wait_for()
    assert count(graph, "svg.hologram-graph g.fact") == 4
    graph.locator(".jp-OutputArea-output").last.screenshot(path=str(shots / "graph.png"))
    # Redrawn by the kernel, Alice stays where she was dropped: the kernel has her place.
    redrawn = [float(alice.get_attribute("cx")), float(alice.get_attribute("cy"))]
    assert max(abs(a - b) for a, b in zip(redrawn, dropped, strict=True)) < 0.1, redrawn
    book.run(6)
    seen = book.printed(6, "kernel sees:")
    assert "facts 4 expanded ['France']" in seen, seen
    kept = json.loads(seen.split("Alice at")[1].strip())
    assert max(abs(a - b) for a, b in zip(kept, dropped, strict=True)) < 0.1, (kept, dropped)


def check_chart(book: Notebook, page: Any, shots: Path) -> None:
    chart = book.run(8)
    bars = chart.locator(".vega-embed svg g.mark-rect path")
    bars.first.wait_for()
    assert bars.count() == 8  # 2 configurations x 2 categories x recall@5 and @10
    # Hover each bar until episodic's single_hop recall@10: its tooltip gives the value.
    tip = page.locator("#vg-tooltip-element")
    for index in range(bars.count()):
        bars.nth(index).hover()
        tip.wait_for(state="visible")
        text = tip.inner_text()
        if "episodic" in text and "single_hop" in text and "recall@10" in text:
            break
    assert "80.0%" in text and "20" in text, text
    chart.locator(".jp-OutputArea-output").last.screenshot(path=str(shots / "recall_chart.png"))


def test_the_widgets_render_in_jupyterlab_and_a_person_can_drive_them(
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
    check_layers(book, shots)
    check_timeline(book, page, shots)
    check_context(book, shots)
    check_graph(book, page, shots)
    book.run(7)
    assert "closed: data-dir lock" in book.printed(7, "closed:")
    check_chart(book, page, shots)
    page.screenshot(path=str(shots / "notebook.png"), full_page=True)
    assert problems == []
