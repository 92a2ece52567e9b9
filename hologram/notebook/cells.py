"""What a magic leaves in its cell: a widget shown where the magic stands, a reply that
arrives after the cell has ended, a summary printed once; and reading the magic's line as
a user wrote it (a trailing comment, a trailing '?').

IPython shows only a cell's last value, so a magic that wants to be seen mid-cell displays
its output itself and returns a handle whose own repr is one quiet line. A reply made in a
background task is displayed through a display id made while the cell runs, so the output
stays in that cell: a frontend redraws it, and nbconvert saves it there.
"""

from __future__ import annotations

import asyncio
import contextvars
import re
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from IPython.display import DisplayHandle, display

W = TypeVar("W")

_COMMENT = re.compile(r"\s+#(?:\s.*)?$")
"""A trailing comment as Python writes one: whitespace, '#', then a space or the end of the
line; '#5' or 'C#' are words, not comments."""
_HELP_HIJACK = re.compile(
    r"^(?P<indent>\s*)(?:(?P<target>[\w.]+(?:\s*,\s*[\w.]+)*)\s*=\s*)?%hologram\s+(?P<rest>.*\?)\s*$"
)


def without_comment(line: str) -> str:
    """`line` without a trailing `# comment` (IPython hands line magics their comments)."""
    return _COMMENT.sub("", line)


def keep_question_marks(lines: list[str]) -> list[str]:
    """An input transformer (IPython runs it before its help syntax): a `%hologram` line
    that ends in '?' becomes the very call IPython would make of it, so `say what do you
    remember about Anna?` is said, not taken as a request for help on `Anna`."""
    changed = []
    for line in lines:
        found = _HELP_HIJACK.match(line.rstrip("\n"))
        if found is None:
            changed.append(line)
            continue
        target = f"{found['target']} = " if found["target"] else ""
        call = f"get_ipython().run_line_magic('hologram', {found['rest']!r})"
        changed.append(f"{found['indent']}{target}{call}\n")
    return changed


class Shown(Generic[W]):
    """A widget displayed where its magic stands in the cell. Its attributes are the
    widget's (`layers.svg`, `await graph.loading`); as a cell's last value it shows one
    line, not a second copy of the widget."""

    def __init__(self, what: str, widget: W, between_cells: BetweenCells | None = None) -> None:
        self.what = what
        self.widget = widget
        self.display: DisplayHandle | None = display(widget, display_id=True)
        loading = getattr(widget, "loading", None)
        if between_cells is not None and isinstance(loading, asyncio.Future):
            # A widget that fills in the background is displayed before it has anything to
            # draw: once it has, its display is sent again, so the static picture a saved
            # notebook keeps beside the widget view is the filled one.
            loading.add_done_callback(lambda _: self._redraw(between_cells))

    def _redraw(self, between_cells: BetweenCells) -> None:
        handle = self.display
        if handle is not None:
            between_cells.send(
                handle.display_id, lambda: _outside_any_cell(handle.update, self.widget)
            )

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            # Not the widget's display hooks (`_repr_mimebundle_`, `_ipython_display_`):
            # as a cell's value the handle must not draw the widget a second time.
            raise AttributeError(name)
        return getattr(self.widget, name)

    def __repr__(self) -> str:
        return f"<hologram {self.what} (shown above; .widget is the widget)>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))


class Printed(dict[str, Any]):
    """A summary a magic has printed: the data itself, whose repr does not print it again."""

    what = "status"

    def __repr__(self) -> str:
        return f"<hologram {self.what} (printed above; index it for the fields)>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))


class PrintedRows(list[dict[str, Any]]):
    """Rows a magic has printed as a table (see `Printed`)."""

    def __repr__(self) -> str:
        return f"<hologram {len(self)} rows (printed above)>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))


class BetweenCells:
    """What background tasks display while no cell runs, sent again as the next cell starts.

    ipykernel addresses output made between cells to the request that ran last, whose
    outputs a client reading one request at a time (nbclient, so nbconvert, papermill and
    nbmake) has already closed: a reply landing in that gap would never reach the saved
    notebook. Sent again under the next request, the update still names its own display
    id, so the client applies it to the cell that asked. A frontend that saw the first
    update redraws the same output once more, which changes nothing."""

    def __init__(self, events: Any) -> None:
        self.events = events
        # The extension is loaded by `%load_ext` in a running cell.
        self.cell_running = True
        self.held: dict[str, Callable[[], None]] = {}
        events.register("pre_run_cell", self._cell_starts)
        events.register("post_run_cell", self._cell_ended)

    def close(self) -> None:
        self.events.unregister("pre_run_cell", self._cell_starts)
        self.events.unregister("post_run_cell", self._cell_ended)

    def send(self, display_id: str, update: Callable[[], None]) -> None:
        update()
        if not self.cell_running:
            self.held[display_id] = update  # only the latest update of each display matters

    def _cell_starts(self, info: Any) -> None:
        self.cell_running = True
        held, self.held = self.held, {}
        for update in held.values():
            update()

    def _cell_ended(self, result: Any) -> None:
        self.cell_running = False


class ReplyCell:
    """The place in the running cell where an answer made later will show: a display id,
    made now, that the answer updates when it comes."""

    def __init__(self, waiting: str, between_cells: BetweenCells) -> None:
        self.between_cells = between_cells
        self.handle: DisplayHandle | None = display(
            {"text/plain": waiting}, raw=True, display_id=True
        )

    def show_text(self, text: str) -> None:
        self._update({"text/plain": text, "text/markdown": text})

    def show_partial(self, text: str) -> None:
        """What has come so far of an answer still arriving (plain text only)."""
        self._update({"text/plain": text})

    def show(self, value: Any) -> None:
        """A rich value (a DataFrame): its own representations."""
        self._send(lambda handle: _outside_any_cell(handle.update, value))

    def _update(self, bundle: dict[str, str]) -> None:
        self._send(lambda handle: _outside_any_cell(handle.update, bundle, raw=True))

    def _send(self, update: Callable[[DisplayHandle], None]) -> None:
        handle = self.handle
        if handle is not None:
            self.between_cells.send(handle.display_id, lambda: update(handle))


def _outside_any_cell(update: Callable[..., None], *args: Any, **kwargs: Any) -> None:
    """Run `update` in an empty context. ipykernel addresses output to the request in the
    caller's context, which for a background task is the cell that started it long ago;
    with none, to the request it is running now. A client that reads only the replies to
    its current request (nbclient, so nbconvert) then still sees the update, and applies it
    by its display id to the cell that asked."""
    contextvars.Context().run(update, *args, **kwargs)
