"""The dependency-layers widget: modules by layer, the facilities that tie them, and how each
one's init went (a bar per module: its boot time against the slowest), redrawn as boot
progresses.

The layout (`layers_layout`) routes every tie between the boxes. The interactive view
(`js/layers.js`) draws it and, when a module is hovered, highlights what it requires and
what it provides; the same picture as a static SVG is the fallback for viewers without
widgets.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from typing import TYPE_CHECKING, Any

import anywidget
import ipywidgets as widgets
import traitlets

from hologram.kernel import Plan, Progress, Status
from hologram.notebook.front import StaticFallback, bundle, style
from hologram.notebook.layers_layout import BOX_H, MARGIN, Layout, Rect, layout

if TYPE_CHECKING:
    from hologram.facade import Kernel

COLOURS = {
    Status.PENDING: ("#f2f2f2", "#9a9a9a"),
    Status.RUNNING: ("#fff3cd", "#d39e00"),
    Status.DONE: ("#d7f0dd", "#2e8b57"),
    Status.FAILED: ("#f8d7da", "#c0392b"),
    Status.CLOSED: ("#e8e8e8", "#b0b0b0"),
}
BAR_H = 5


@dataclass
class _Node:
    name: str
    row: int
    requires: tuple[str, ...] = ()
    provides: tuple[str, ...] = ()
    status: Status = Status.PENDING
    seconds: float | None = None
    error: str = ""


@dataclass
class LayersModel:
    """What the widget shows, independent of how it is drawn."""

    group0: list[str]
    layers: list[list[str]]
    nodes: dict[str, _Node] = field(default_factory=dict)
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    _layout: Layout | None = None

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

    @property
    def layout(self) -> Layout:
        """Boxes, routes and labels: fixed by the plan, so computed once."""
        if self._layout is None:
            self._layout = layout(self.rows(), self.edges)
        return self._layout

    def detail(self, node: _Node) -> str:
        if node.seconds is not None:
            return f"{node.seconds * 1000:.1f} ms"
        return "failed" if node.status is Status.FAILED else str(node.status)

    def boot_share(self, node: _Node) -> float:
        """The module's boot time against the slowest module's (its bar's length)."""
        slowest = max((n.seconds or 0.0 for n in self.nodes.values()), default=0.0) or 1.0
        return (node.seconds or 0.0) / slowest

    def to_json(self) -> dict[str, Any]:
        """What the front end draws: the layout, and each module's state and boot time."""
        shape = self.layout
        modules = [
            {
                "name": node.name,
                "box": _rect(shape.boxes[node.name]),
                "status": str(node.status),
                "fill": COLOURS[node.status][0],
                "stroke": COLOURS[node.status][1],
                "detail": self.detail(node),
                "share": self.boot_share(node),
                "requires": list(node.requires),
                "provides": list(node.provides),
                "error": node.error,
            }
            for node in self.nodes.values()
        ]
        routes = [
            {"from": r.provider, "to": r.requirer, "facility": r.facility, "points": r.points}
            for r in shape.routes
        ]
        labels = [
            {"facility": lb.facility, "from": lb.provider, "box": _rect(lb.rect), "shown": lb.shown}
            for lb in shape.labels
        ]
        rows = [{"label": label, "y": y + BOX_H / 2 + 4} for label, y in shape.rows]
        size = {"width": shape.width, "height": shape.height}
        return {"modules": modules, "routes": routes, "labels": labels, "rows": rows, **size}


def _rect(rect: Rect) -> dict[str, float]:
    return {"x": rect.x, "y": rect.y, "w": rect.w, "h": rect.h}


def render_svg(model: LayersModel) -> str:
    """The static picture (the fallback, and what tests read): the same layout the
    interactive view draws, without its hover."""
    shape = model.layout
    width, height = shape.width, shape.height
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="hologram-layers" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif">'
    ]
    for label, y in shape.rows:
        parts.append(
            f'<text x="{MARGIN}" y="{y + BOX_H / 2 + 4}" font-size="12" fill="#555">'
            f"{escape(label)}</text>"
        )
    for route in shape.routes:
        points = " ".join(f"{x:.1f},{y:.1f}" for x, y in route.points)
        parts.append(
            f'<g class="edge" data-facility="{escape(route.facility)}" '
            f'data-from="{escape(route.provider)}" data-to="{escape(route.requirer)}">'
            f'<polyline points="{points}" fill="none" stroke="#8899aa" stroke-width="1.2"/></g>'
        )
    for lb in shape.labels:
        if lb.shown:
            parts.append(
                f'<text class="facility-label" x="{lb.rect.x + 2:.1f}" y="{lb.rect.y + 9:.1f}" '
                f'font-size="10" fill="#556677">{escape(lb.facility)}</text>'
            )
    parts.extend(_module_svg(model, node) for node in model.nodes.values())
    parts.append("</svg>")
    return "".join(parts)


def _module_svg(model: LayersModel, node: _Node) -> str:
    box = model.layout.boxes[node.name]
    fill, stroke = COLOURS[node.status]
    provides = f" → {', '.join(node.provides)}" if node.provides else ""
    title = escape(f"{node.name}: requires {', '.join(node.requires) or 'nothing'}{provides}")
    error = f"\n{escape(node.error)}" if node.error else ""
    bar = (box.w - 16) * model.boot_share(node)
    return (
        f'<g class="module" data-module="{escape(node.name)}" data-status="{node.status}">'
        f"<title>{title}{error}</title>"
        f'<rect x="{box.x}" y="{box.y}" width="{box.w}" height="{box.h}" rx="6" '
        f'fill="{fill}" stroke="{stroke}" stroke-width="1.5"/>'
        f'<text x="{box.x + 8}" y="{box.y + 18}" font-size="13" font-weight="bold">'
        f"{escape(node.name)}</text>"
        f'<text x="{box.x + 8}" y="{box.y + 34}" font-size="11" fill="#444">'
        f"{escape(model.detail(node))}</text>"
        f'<rect class="boot-bar" x="{box.x + 8}" y="{box.y + box.h - BAR_H - 6}" '
        f'width="{bar:.1f}" height="{BAR_H}" fill="{stroke}"/></g>'
    )


class LayersView(anywidget.AnyWidget):
    """The interactive picture: `data` is `LayersModel.to_json()`."""

    _esm = bundle("common", "layers")
    _css = style()
    data = traitlets.Dict().tag(sync=True)


class LayersWidget(StaticFallback, widgets.VBox):
    """Shows a plan's layers; attached to a kernel, it follows the kernel's boot live."""

    def __init__(self, model: LayersModel) -> None:
        self.model = model
        self.view = LayersView(data=model.to_json())
        self._svg = render_svg(model)
        self._caption = widgets.HTML(self._caption_text())
        super().__init__([self._caption, self.view])
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
        self.view.close()
        super().close()

    @property
    def svg(self) -> str:
        return self._svg

    def fallback_html(self) -> str:
        return self._caption.value + self._svg

    def update(self, progress: Progress) -> None:
        self.model.apply(progress)
        self.refresh()

    def refresh(self) -> None:
        self._svg = render_svg(self.model)
        self.view.data = self.model.to_json()
        self._caption.value = self._caption_text()

    def _caption_text(self) -> str:
        counts: dict[Status, int] = {}
        for node in self.model.nodes.values():
            counts[node.status] = counts.get(node.status, 0) + 1
        summary = ", ".join(f"{n} {s}" for s, n in counts.items())
        modules = sum(len(layer) for layer in self.model.layers)
        return (
            f"<b>{modules} modules in {len(self.model.layers)} layers</b> "
            f"<span style='color:#666'>({escape(summary)}; hover a module for what it "
            "requires and provides)</span>"
        )
