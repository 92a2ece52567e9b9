"""`%hologram context`: the pruning-score widget, through a real IPython shell and kernel."""

from __future__ import annotations

from pathlib import Path

from IPython.core.interactiveshell import InteractiveShell

from hologram.memory import Fate
from hologram.notebook.context_widget import ContextWidget, render_svg


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


async def test_a_preview_scores_as_the_prune_that_follows_and_changes_nothing(
    shell: InteractiveShell, data_dir: Path
) -> None:
    kernel = await shell.run_line_magic("hologram", f"start --data {data_dir}")
    context = kernel.state.memory.context
    context.top_k, context.protected_recent = 4, 2
    for text in ["coffee beans", "rain boots", "coffee grinder", "piano", "tea", "umbrella"]:
        await context.append("notebook", input=text)
    before = [e.id for e in context.events]
    preview = await context.preview("coffee")
    assert [e.id for e in context.events] == before and context.last_prune is None
    report = await context.prune("coffee")
    assert [e.id for e in preview.candidates] == [e.id for e in report.candidates]
    assert preview.scores.tolist() == report.scores.tolist()
    assert preview.kept == report.kept and preview.archived == report.archived
    assert (preview.before, preview.after) == (report.before, report.after) == (6, 4)
    await shell.run_line_magic("hologram", "shutdown")


async def test_the_widget_ranks_every_event_with_the_smallest_top_k_that_keeps_it(
    shell: InteractiveShell, data_dir: Path
) -> None:
    kernel = await shell.run_line_magic("hologram", f"start --data {data_dir}")
    context = kernel.state.memory.context
    context.top_k, context.protected_recent = 40, 2
    widget = shell.run_line_magic("hologram", "context")
    texts = ["coffee beans", "rain boots", "coffee grinder", "piano", "tea", "where is coffee?"]
    for text in texts:
        await context.append("notebook", input=text)
    await widget.scoring
    data = widget.view.data
    assert data["query"] == "where is coffee?" and data["size"] == len(texts)
    rows = data["rows"]
    assert sorted(r["id"] for r in rows) == sorted(e.id for e in context.events)
    assert [r["protected"] for r in rows] == [True, True] + [False] * 4
    assert [r["keep_from"] for r in rows] == sorted(r["keep_from"] for r in rows)
    # Whatever top_k the slider previews, the rows it keeps are what a prune keeps then.
    for top_k in range(len(texts) + 1):
        context.top_k = top_k
        preview = await context.preview(data["query"])
        kept = {e.id for e, k in zip(preview.candidates, preview.kept, strict=True) if k}
        kept |= {e.id for e in preview.protected}
        assert {r["id"] for r in rows if r["keep_from"] <= top_k} == kept, top_k
    assert all(r["age"] >= 0 for r in rows)
    widget.close()
    await shell.run_line_magic("hologram", "shutdown")


async def test_what_the_last_prune_archived_is_shown_leaving_for_the_cold_store(
    shell: InteractiveShell, data_dir: Path
) -> None:
    kernel = await shell.run_line_magic("hologram", f"start --data {data_dir}")
    context = kernel.state.memory.context
    context.top_k, context.protected_recent = 3, 1
    widget = shell.run_line_magic("hologram", "context")
    for text in ["coffee beans", "rain boots", "coffee grinder", "piano", "coffee?"]:
        await context.append("notebook", input=text)
    report = await context.prune("coffee?")
    await widget.scoring
    leaving = widget.view.data["leaving"]
    assert {r["id"] for r in leaving} == set(report.ids(Fate.ARCHIVED)) and len(leaving) == 2
    assert {r["fate"] for r in leaving} == {"archived"}
    assert widget.view.data["last_prune"] == {"query": "coffee?", "before": 5, "after": 3}
    widget.close()
    await shell.run_line_magic("hologram", "shutdown")
