"""The layers widget's layout, as geometry: for the real module set and for generated plans,
no tie is drawn through a module's box, no two labels lie on each other, and two facilities
never run on top of each other."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from hologram._group0 import group0
from hologram.facade import Kernel
from hologram.kernel import Progress, Status
from hologram.notebook.layers import LayersModel, render_svg
from hologram.notebook.layers_layout import Layout, layout

Segment = tuple[tuple[float, float], tuple[float, float]]


def crossings(shape: Layout) -> list[tuple[str, str, str]]:
    return [
        (route.provider, route.requirer, name)
        for route in shape.routes
        for a, b in route.segments()
        for name, box in shape.boxes.items()
        if box.crossed_by(a, b)
    ]


def overlapping_labels(shape: Layout) -> list[tuple[str, str]]:
    shown = [label for label in shape.labels if label.shown]
    return [
        (a.facility, b.facility)
        for i, a in enumerate(shown)
        for b in shown[i + 1 :]
        if a.rect.overlaps(b.rect)
    ]


def shared_runs(shape: Layout) -> list[tuple[str, str]]:
    """Pairs of facilities with collinear segments that overlap (one drawn over the other)."""
    runs: list[tuple[str, Segment]] = [
        (f"{route.provider}/{route.facility}", segment)
        for route in shape.routes
        for segment in route.segments()
    ]
    found = []
    for i, (bus_a, ((ax1, ay1), (ax2, ay2))) in enumerate(runs):
        for bus_b, ((bx1, by1), (bx2, by2)) in runs[i + 1 :]:
            if bus_a == bus_b:
                continue
            if ay1 == ay2 == by1 == by2:
                lo, hi = max(min(ax1, ax2), min(bx1, bx2)), min(max(ax1, ax2), max(bx1, bx2))
            elif ax1 == ax2 == bx1 == bx2:
                lo, hi = max(min(ay1, ay2), min(by1, by2)), min(max(ay1, ay2), max(by1, by2))
            else:
                continue
            if hi > lo:
                found.append((bus_a, bus_b))
    return found


def test_the_real_module_set_is_drawn_without_a_tie_through_a_box_or_labels_on_labels(
    tmp_path: Path,
) -> None:
    plan = Kernel(tmp_path / "data").make_plan()
    model = LayersModel.from_plan(plan, [step.name for step in group0()])
    shape = model.layout
    assert len(shape.routes) == len(plan.edges()) > 30
    assert crossings(shape) == []
    assert overlapping_labels(shape) == []
    assert shared_runs(shape) == []
    # Every facility is labelled in plain sight, on no box.
    provided = {(p, str(f)) for p, _, f in plan.edges()}
    assert {(lb.provider, lb.facility) for lb in shape.labels if lb.shown} == provided
    assert not [lb for lb in shape.labels for box in shape.boxes.values() if lb.rect.overlaps(box)]
    for route in shape.routes:
        start, end = route.points[0], route.points[-1]
        source, target = shape.boxes[route.provider], shape.boxes[route.requirer]
        assert start[1] == source.y + source.h and source.x < start[0] < source.x + source.w
        assert end[1] == target.y and target.x < end[0] < target.x + target.w
        assert all(a[0] == b[0] or a[1] == b[1] for a, b in route.segments()), route


def test_labels_that_find_no_free_place_are_left_to_the_hover() -> None:
    names = [f"a-very-long-facility-name-{n}" for n in range(4)]
    rows = [("layer 0", ["hub"]), ("layer 1", ["left", "right"])]
    edges = [("hub", side, name) for name in names for side in ("left", "right")]
    shape = layout(rows, edges)
    shown = [label for label in shape.labels if label.shown]
    assert 0 < len(shown) < len(names)
    assert overlapping_labels(shape) == [] and crossings(shape) == []


@st.composite
def plans(draw: st.DrawFn) -> tuple[list[tuple[str, list[str]]], list[tuple[str, str, str]]]:
    widths = draw(st.lists(st.integers(1, 4), min_size=2, max_size=6))
    rows = [(f"layer {r}", [f"m{r}.{c}" for c in range(w)]) for r, w in enumerate(widths)]
    edges = []
    for r, (_, names) in enumerate(rows[1:], 1):
        for name in names:
            earlier = [n for _, row in rows[:r] for n in row]
            for provider in draw(st.lists(st.sampled_from(earlier), max_size=4, unique=True)):
                edges.append((provider, name, f"f-{provider}"))
    return rows, edges


@settings(max_examples=60, deadline=None)
@given(plans())
def test_any_layered_plan_routes_around_every_box(
    plan: tuple[list[tuple[str, list[str]]], list[tuple[str, str, str]]],
) -> None:
    rows, edges = plan
    shape = layout(rows, edges)
    assert len(shape.routes) == len(edges)
    assert crossings(shape) == []
    assert overlapping_labels(shape) == []
    assert shared_runs(shape) == []


def test_each_modules_boot_time_is_a_bar_against_the_slowest(tmp_path: Path) -> None:
    plan = Kernel(tmp_path / "data").make_plan()
    model = LayersModel.from_plan(plan)
    model.apply(Progress("events", 0, Status.DONE, 0.020))
    model.apply(Progress("llm", 0, Status.DONE, 0.005))
    shares = {m["name"]: m["share"] for m in model.to_json()["modules"]}
    assert (shares["events"], shares["llm"], shares["agent"]) == (1.0, 0.25, 0.0)
    details = {m["name"]: m["detail"] for m in model.to_json()["modules"]}
    assert details["events"] == "20.0 ms" and details["agent"] == "pending"
    box = model.layout.boxes["llm"]
    assert f'class="boot-bar" x="{box.x + 8}"' in render_svg(model)
    assert f'width="{(box.w - 16) * 0.25:.1f}"' in render_svg(model)
