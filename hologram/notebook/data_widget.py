"""The data dir's versions as a table widget: each store, the version found, the version
this release expects, and what the start-up check makes of it."""

from __future__ import annotations

from html import escape

import ipywidgets

from hologram.update import Report

_COLOURS = {"current": "#2e7d32", "older": "#ef6c00", "newer": "#c62828", "absent": "#757575"}


def versions_html(report: Report) -> str:
    rows = "".join(
        f"<tr data-store='{escape(s.name)}' data-status='{s.status}'>"
        f"<td>{escape(s.name)}</td><td><code>{escape(s.path)}</code></td>"
        f"<td>{'-' if s.found is None else s.found}</td><td>{s.expected}</td>"
        f"<td style='color:{_COLOURS[s.status]}'>{s.status}</td></tr>"
        for s in report.stores
    )
    by = escape(report.written_by or "unversioned (before data-dir versions)")
    note = f"written by {by}; this release {escape(report.release)}"
    if report.backup is not None:
        note += f"; backup taken: <code>{escape(report.backup.name)}</code>"
    return (
        f"<div><b>{escape(str(report.data_dir))}</b><br><small>{note}</small>"
        "<table><tr><th>store</th><th>path</th><th>found</th><th>expected</th><th>status</th>"
        f"</tr>{rows}</table></div>"
    )


def versions_widget(report: Report) -> ipywidgets.HTML:
    """A widget showing `report`; call `.value = versions_html(new)` to show another."""
    return ipywidgets.HTML(versions_html(report))
