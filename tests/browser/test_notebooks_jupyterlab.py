"""The notebooks in `notebooks/` that show a Hologram widget, run whole in a real JupyterLab in
real Chromium: every cell runs without error (JupyterLab stops a "run all" at the first
error, so every prompt numbered means none failed), and each widget's SVG is in the page as
many times as the notebook shows it, with the elements its own assertions promise. A copy
of each notebook runs, so the checkout is never rewritten by JupyterLab's autosave.
A screenshot of each notebook is kept under `<artifacts>/jupyterlab_notebooks`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import JupyterLab
from tests.chromium import artifacts, needs_chromium

pytestmark = needs_chromium()

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
RUN_DEADLINE_MS = 300_000
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}

# notebook -> (selector, how many), read from the notebook: what it displays and asserts.
EXPECTED: dict[str, list[tuple[str, int]]] = {
    # the demo plan's widget and the real kernel's `%hologram layers`
    "01_kernel_assembly.ipynb": [("svg.hologram-layers", 2)],
    # `%hologram scheduler`: a story preempted by a timer, then resumed; the input that was
    # stopped; a streaming story preempted by the kettle, then resumed
    "04_scheduler.ipynb": [
        ("svg.hologram-scheduler", 1),
        ("svg.hologram-scheduler text.mark[data-mark='preempt']", 2),
        ("svg.hologram-scheduler text.mark[data-mark='resume']", 2),
        ("svg.hologram-scheduler text.mark[data-mark='stop']", 1),
    ],
    # the context widget after a prune that archived something: the window's events
    # scored, and what the prune archived leaving for the cold store
    "05_context_memory.ipynb": [
        (".hg-context .hologram-prune", 1),
        (".hg-context .hologram-prune .candidate[data-fate='protected']", -1),
        ("[data-testid=top-k-cut]", 1),
        (".hg-context .hg-leaving .candidate[data-fate='archived']", -1),
    ],
    # the graph around 小明, one hop, with history
    "06_graph_memory.ipynb": [
        ("svg.hologram-graph", 1),
        ("svg.hologram-graph g.entity[data-entity='小明'][data-highlighted='1']", 1),
    ],
}


def run_all(page: Any) -> None:
    page.locator("li.lm-MenuBar-item", has_text="Run").first.click()
    page.locator("li.lm-Menu-item[data-command='runmenu:run-all']").click()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_notebook_runs_in_jupyterlab_and_its_widgets_render(
    name: str, jupyterlab: JupyterLab, browser_page: tuple[Any, list[str]], tmp_path: Path
) -> None:
    page, problems = browser_page
    # A notebook saved elsewhere may name another kernel; this server has python3 only, and
    # a kernel chooser would wait for a click.
    notebook = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))
    notebook["metadata"]["kernelspec"] = KERNELSPEC
    (jupyterlab.root / name).write_text(json.dumps(notebook), encoding="utf-8")
    page.goto(jupyterlab.notebook_url(name))
    page.wait_for_selector(".jp-Notebook .jp-CodeCell", state="attached")
    page.locator(".jp-StatusBar-Widget", has_text="| Idle").first.wait_for()
    cells = sum(cell["cell_type"] == "code" for cell in notebook["cells"])
    page.wait_for_function(
        "(n) => document.querySelectorAll('.jp-Notebook .jp-CodeCell').length === n", arg=cells
    )
    run_all(page)
    every_prompt_numbered = """(n) => {
        const prompts = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')];
        const done = prompts.filter(p => /\\[\\d+\\]/.test(p.textContent)).length;
        const busy = prompts.some(p => /\\[\\*\\]/.test(p.textContent));
        return prompts.length === n && (done === n || (!busy && done > 0));
    }"""
    page.wait_for_function(every_prompt_numbered, arg=cells, timeout=RUN_DEADLINE_MS)
    prompts = page.locator(".jp-Notebook .jp-CodeCell .jp-InputPrompt").all_text_contents()
    unrun = [i for i, p in enumerate(prompts) if "[*]" in p or "[ ]" in p]
    # A traceback renders as stderr output: say what failed, for a failure seen only in CI.
    errors = page.locator(
        ".jp-OutputArea-output[data-mime-type*='stderr'], "
        ".jp-OutputArea-output[data-mime-type*='error']"
    )
    shown = [text[-800:] for text in errors.all_text_contents()]
    assert unrun == [], f"cells {unrun} of {name} never ran; an earlier cell failed: {shown}"
    for selector, expected in EXPECTED[name]:
        found = page.locator(selector).count()
        if expected < 0:
            assert found >= 1, (name, selector)
        else:
            assert found == expected, (name, selector, found)
    page.screenshot(
        path=str(artifacts(tmp_path, "jupyterlab_notebooks") / f"{Path(name).stem}.png"),
        full_page=True,
    )
    assert problems == []
