"""The widgets outside a live front end: a notebook executed by nbclient (as nbconvert
does) keeps each widget's state, so a saved notebook shows what the widgets showed, and
each widget's output carries a static picture for viewers without widget support."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient
from nbconvert import HTMLExporter

CELLS = [
    """
from hologram import Kernel
from hologram.memory import Triple
from hologram.notebook.context_widget import ContextWidget
from hologram.notebook.graph_widget import GraphWidget
from hologram.notebook.layers import LayersWidget
from hologram.notebook.scheduler_widget import SchedulerWidget
kernel = await Kernel({data_dir!r}).start()
timeline = SchedulerWidget(kernel.events.subscribe)
await (await kernel.inject("a note to remember"))
await kernel.state.graph.store.commit([Triple("Alice", "likes", "tea")])
""",
    "LayersWidget.for_kernel(kernel)",
    "timeline",
    "context = ContextWidget.for_kernel(kernel)\nawait context.scoring\ncontext",
    "graph = GraphWidget.for_kernel(kernel, 'Alice')\nawait graph.loading\ngraph",
    "await kernel.shutdown()",
]


def executed(data_dir: Path) -> Any:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(cell.strip().replace("{data_dir!r}", repr(str(data_dir))))
        for cell in CELLS
    ]
    NotebookClient(notebook, timeout=120, kernel_name="python3", store_widget_state=True).execute()
    return notebook


def test_an_executed_notebook_keeps_each_widgets_state_and_a_static_picture(
    tmp_path: Path,
) -> None:
    notebook = executed(tmp_path / "data")
    state = notebook.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    views = {
        model["state"]["_anywidget_id"].rsplit(".", 1)[-1]: model["state"]
        for model in state.values()
        if model["model_name"] == "AnyModel"
    }
    assert set(views) == {"LayersView", "SchedulerWidget", "ContextView", "GraphView"}
    assert all("export default" in view["_esm"] for view in views.values())
    assert len(views["LayersView"]["data"]["modules"]) >= 10
    timeline = views["SchedulerWidget"]["events"]
    actions = [e["payload"]["action"] for e in timeline if e["type"] == "scheduler"]
    assert actions[:2] == ["enqueue", "start"] and "finish" in actions
    rows = views["ContextView"]["data"]["rows"]
    assert "a note to remember" in {r["text"] for r in rows}
    assert {n["name"] for n in views["GraphView"]["data"]["nodes"]} == {"Alice", "tea"}
    fallbacks = {
        "svg.hologram-layers": 1,
        "svg.hologram-scheduler": 2,
        "svg.hologram-prune": 3,
        "svg.hologram-graph": 4,
    }
    for selector, index in fallbacks.items():
        (output,) = [
            o
            for o in notebook.cells[index].outputs
            if o["output_type"] == "display_data" or o["output_type"] == "execute_result"
        ]
        assert "application/vnd.jupyter.widget-view+json" in output["data"]
        tag, css = selector.split(".")
        assert (
            f'<{tag} xmlns="http://www.w3.org/2000/svg" class="{css}"'
            in output["data"]["text/html"]
        )
    html, _ = HTMLExporter().from_notebook_node(notebook)
    assert "application/vnd.jupyter.widget-state+json" in html
    assert json.dumps("a note to remember")[1:-1] in html
