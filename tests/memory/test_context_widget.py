"""`%hologram context`: the pruning-score widget, through a real IPython shell and kernel."""

from __future__ import annotations

from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell

from hologram.notebook.context_widget import ContextWidget, render_svg


@pytest.fixture
def shell():
    ipython = InteractiveShell.instance()
    ipython.run_line_magic("load_ext", "hologram")
    yield ipython
    ipython.run_line_magic("unload_ext", "hologram")
    InteractiveShell.clear_instance()


async def test_the_widget_redraws_each_prune_with_scores_fates_and_the_window(
    shell: InteractiveShell, data_dir: Path
) -> None:
    kernel = await shell.run_line_magic("hologram", f"start --data {data_dir}")
    widget = shell.run_line_magic("hologram", "context")
    assert isinstance(widget.widget, ContextWidget) and 'data-empty="1"' in widget.svg
    context = kernel.state.memory.context
    context.top_k, context.protected_recent = 4, 2
    for text in ["coffee beans", "rain boots", "coffee grinder", "piano", "tea", "umbrella"]:
        await context.append("notebook", input=text)
    report = await context.prune("coffee")
    svg = widget.svg
    assert 'data-query="coffee" data-before="6" data-after="4"' in svg
    assert svg.count('class="candidate"') == 6
    assert svg.count('data-fate="protected"') == 2 and svg.count('data-fate="kept"') == 2
    assert svg.count('data-fate="archived"') == 2
    best = max((e for e in report.entries if e.score is not None), key=lambda e: e.score)
    assert svg.index(f'data-id="{best.event_id}"') < svg.index('data-fate="archived"')
    frame = widget.frame
    assert list(frame["input"]) == [e.input for e in context.events] and len(frame) == 4
    assert "2 protected" in widget.children[0].value or "protected 2" in widget.children[0].value
    widget.close()
    await shell.run_line_magic("hologram", "shutdown")


def test_an_empty_report_says_no_prune_happened() -> None:
    assert "no prune yet" in render_svg(None)
