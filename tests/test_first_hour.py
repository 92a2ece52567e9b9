"""The first hour in a notebook, as the README shows it: tests/first_hour.ipynb holds the
README's notebook blocks exactly, and run in a real IPython kernel (nbclient, as nbconvert
runs it) its saved outputs show what a newcomer should see: the layers widget where the
magic stands, the status printed once, the memory table and the replies in their own
cells, a late reply kept in the cell that asked, the help for a bare `%hologram`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "tests" / "first_hour.ipynb"
WIDGET = "application/vnd.jupyter.widget-view+json"


def readme_blocks() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### In a notebook") : readme.index("### The command line")]
    return [block.rstrip("\n") for block in re.findall(r"```python\n(.*?)```", section, re.S)]


def readme_cells(notebook: Any) -> list[Any]:
    """The code cells that follow a markdown cell marked *README*."""
    cells = notebook.cells
    return [
        cells[i + 1]
        for i, cell in enumerate(cells[:-1])
        if cell.cell_type == "markdown" and cell.source.startswith("*README*")
    ]


def texts(cell: Any) -> list[str]:
    """Every text a cell's saved outputs hold: streams, and each display's plain text."""
    found = []
    for output in cell.outputs:
        if output.output_type == "stream":
            found.append(output.text)
        elif "data" in output:
            found.append(str(output.data.get("text/plain", "")))
            found.append(str(output.data.get("text/html", "")))
    return found


def test_the_notebook_holds_the_readmes_blocks_exactly() -> None:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    blocks = readme_blocks()
    assert len(blocks) == 2
    assert [cell.source for cell in readme_cells(notebook)] == blocks


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Any:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    where = tmp_path_factory.mktemp("first-hour")
    client = NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(where)}}
    )

    async def reply_lands_between_cells(cell: Any, cell_index: int, execute_reply: Any) -> None:
        """After the `%%hologram` cell has ended, hold the next cell back until the whole
        reply has been shown (the last update, the only one with markdown; the streamed
        ones before it are plain text): it then lands in the gap, addressed to a request
        nbclient has closed, which is the case a loaded machine makes by chance."""
        if not cell.source.startswith("%%hologram") or any(
            "(offline scripted model)" in text for text in texts(cell)
        ):
            return
        while True:
            message = await client.kc.get_iopub_msg(timeout=60)
            shown = message["content"].get("data", {})
            if message["msg_type"] == "update_display_data" and "text/markdown" in shown:
                return

    client.on_cell_executed = reply_lands_between_cells
    client.execute()
    return notebook


def test_the_layers_widget_shows_mid_cell_and_the_status_prints_once(ran: Any) -> None:
    start, _ = readme_cells(ran)
    assert any(WIDGET in output.get("data", {}) for output in start.outputs)
    summary = "\n".join(texts(start))
    assert len(re.findall(r"^kernel \w+ ready on ", summary, re.M)) == 1, summary
    assert "layer 0" in summary


def test_the_reply_and_the_memory_table_show_in_their_own_cell(ran: Any) -> None:
    _, talk = readme_cells(ran)
    shown = "\n".join(texts(talk))
    assert "“I love climbing”" in shown  # the reply to "What do I love?"
    assert "<table" in shown and "context" in shown  # the memory hits, from the window
    assert "(waiting for the reply" not in shown and "(searching memory" not in shown


def test_a_late_reply_fills_the_cell_that_asked_for_it(ran: Any) -> None:
    [cell] = [c for c in ran.cells if c.source.startswith("%%hologram")]
    shown = "\n".join(texts(cell))
    assert "(offline scripted model)" in shown, shown
    assert "(waiting for the reply" not in shown


def test_a_bare_hologram_prints_the_help(ran: Any) -> None:
    [cell] = [c for c in ran.cells if c.source == "%hologram"]
    shown = "\n".join(texts(cell))
    words = " ".join(shown.split())
    assert "say TEXT" in words and "memory QUERY" in words and "positional arguments" in words
