"""The dependency-layers widget: modules by layer, the facilities that tie them, and how each
one's init went, redrawn as boot progresses.

The picture is an SVG drawn here in Python, so it needs no front-end code and no CDN: any
Jupyter front end that shows ipywidgets shows it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from typing import TYPE_CHECKING

import ipywidgets as widgets

from hologram.kernel import Plan, Progress, Status

if TYPE_CHECKING:
    from hologram.facade import Kernel

BOX_W, BOX_H, GAP_X, ROW_H, MARGIN = 170, 46, 24, 96, 16
COLOURS = {
    Status.PENDING: ("#f2f2f2", "#9a9a9a"),
    Status.RUNNING: ("#fff3cd", "#d39e00"),
    Status.DONE: ("#d7f0dd", "#2e8b57"),
    Status.FAILED: ("#f8d7da", "#c0392b"),
    Status.CLOSED: ("#e8e8e8", "#b0b0b0"),
}


@dataclass
class _Node:
    name: str
    row: int
    requires: tuple[str, ...] = ()
    provides: tuple[str, ...] = ()
    status: Status = Status.PENDING
    seconds: float | None = None
    error: str = ""
    x: float = 0.0
    y: float = 0.0


@dataclass
class LayersModel:
    """What the widget shows, independent of how it is drawn."""

    group0: list[str]
    layers: list[list[str]]
    nodes: dict[str, _Node] = field(default_factory=dict)
    edges: list[tuple[str, str, str]] = field(default_factory=list)

    @classmethod
    def from_plan(cls, plan: Plan, group0: list[str] | None = None) -> LayersModel:
        group0 = list(group0 or [])
        model = cls(group0=group0, layers=plan.layer_names(), edges=plan.edges())
        offset = 1 if group0 else 0
        for name in group0:
            model.nodes[name] = _Node(name, 0)
        for index, layer in enumerate(plan.layers):
            for module in layer:
                model.nodes[module.name] = _Node(
                    module.name, index + offset, tuple(module.requires), tuple(module.provides)
                )
        return model

    def apply(self, progress: Progress) -> None:
        node = self.nodes.get(progress.name)
        if node is None:
            return
        node.status = progress.status
        node.error = progress.error
        if progress.status is Status.DONE:
            node.seconds = progress.seconds

    def rows(self) -> list[tuple[str, list[str]]]:
        labelled = [(f"layer {i}", names) for i, names in enumerate(self.layers)]
        return ([("group 0", self.group0)] if self.group0 else []) + labelled


def render_svg(model: LayersModel) -> str:
    rows = model.rows()
    widest = max((len(names) for _, names in rows), default=1)
    label_w = 70
    width = MARGIN * 2 + label_w + widest * (BOX_W + GAP_X)
    height = MARGIN * 2 + len(rows) * ROW_H
    for r, (_, names) in enumerate(rows):
        for c, name in enumerate(names):
            node = model.nodes[name]
            node.x = MARGIN + label_w + c * (BOX_W + GAP_X)
            node.y = MARGIN + r * ROW_H
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="hologram-layers" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif">'
    ]
    for r, (label, _) in enumerate(rows):
        y = MARGIN + r * ROW_H + BOX_H / 2 + 4
        parts.append(
            f'<text x="{MARGIN}" y="{y}" font-size="12" fill="#555">{escape(label)}</text>'
        )
    for provider, requirer, facility in model.edges:
        a, b = model.nodes[provider], model.nodes[requirer]
        x1, y1, x2, y2 = a.x + BOX_W / 2, a.y + BOX_H, b.x + BOX_W / 2, b.y
        parts.append(
            f'<g class="edge" data-facility="{escape(facility)}" data-from="{escape(provider)}" '
            f'data-to="{escape(requirer)}"><line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" '
            'stroke="#8899aa" stroke-width="1.2"/>'
            f'<text x="{(x1 + x2) / 2 + 4}" y="{(y1 + y2) / 2}" font-size="10" fill="#667788">'
            f"{escape(facility)}</text></g>"
        )
    for node in model.nodes.values():
        fill, stroke = COLOURS[node.status]
        detail = (
            f"{node.seconds * 1000:.1f} ms"
            if node.seconds is not None
            else ("failed" if node.status is Status.FAILED else str(node.status))
        )
        provides = f" → {', '.join(node.provides)}" if node.provides else ""
        title = escape(f"{node.name}: requires {', '.join(node.requires) or 'nothing'}{provides}")
        error = f"\n{escape(node.error)}" if node.error else ""
        parts.append(
            f'<g class="module" data-module="{escape(node.name)}" data-status="{node.status}">'
            f"<title>{title}{error}</title>"
            f'<rect x="{node.x}" y="{node.y}" width="{BOX_W}" height="{BOX_H}" rx="6" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="1.5"/>'
            f'<text x="{node.x + 8}" y="{node.y + 18}" font-size="13" font-weight="bold">'
            f"{escape(node.name)}</text>"
            f'<text x="{node.x + 8}" y="{node.y + 35}" font-size="11" fill="#444">'
            f"{escape(detail + provides)}</text></g>"
        )
    parts.append("</svg>")
    return "".join(parts)


class LayersWidget(widgets.VBox):
    """Shows a plan's layers; attached to a kernel, it follows the kernel's boot live."""

    def __init__(self, model: LayersModel) -> None:
        self.model = model
        self._html = widgets.HTML(render_svg(model))
        self._caption = widgets.HTML(self._caption_text())
        super().__init__([self._caption, self._html])
        self._detach: Callable[[], None] | None = None

    @classmethod
    def for_plan(cls, plan: Plan, group0: list[str] | None = None) -> LayersWidget:
        return cls(LayersModel.from_plan(plan, group0))

    @classmethod
    def for_kernel(cls, kernel: Kernel) -> LayersWidget:
        from hologram._group0 import group0

        plan = kernel.plan or kernel.make_plan()
        view = cls(LayersModel.from_plan(plan, [step.name for step in group0()]))
        for name, seconds in kernel.timings.items():
            view.model.apply(Progress(name, 0, Status.DONE, seconds))
        view._detach = kernel.add_observer(view.update)
        view.refresh()
        return view

    def close(self) -> None:
        if self._detach is not None:
            self._detach()
            self._detach = None
        super().close()

    @property
    def svg(self) -> str:
        return self._html.value

    def update(self, progress: Progress) -> None:
        self.model.apply(progress)
        self.refresh()

    def refresh(self) -> None:
        self._html.value = render_svg(self.model)
        self._caption.value = self._caption_text()

    def _caption_text(self) -> str:
        counts: dict[Status, int] = {}
        for node in self.model.nodes.values():
            counts[node.status] = counts.get(node.status, 0) + 1
        summary = ", ".join(f"{n} {s}" for s, n in counts.items())
        modules = sum(len(layer) for layer in self.model.layers)
        return (
            f"<b>{modules} modules in {len(self.model.layers)} layers</b> "
            f"<span style='color:#666'>({escape(summary)})</span>"
        )
