"""Where the layers widget puts its boxes, lines and labels: a layered layout whose edges
run orthogonally in the free space between the boxes, so no line crosses a box and no
label lies on another.

Every row (group 0, then each layer) sits on one grid of slots, so the corridors between
slots are free in every row. A facility is one bus: it leaves its provider's bottom edge,
runs along a track of the channel below the provider's row, and, when it reaches rows
further down, descends in a lane of a corridor; in the channel above each requirer's row it
runs along a track to the requirer's top edge. Each bus has its own track in each channel
and its own lane in its corridor, so two buses never run on top of each other; a bus is
labelled once, under its provider, and a label that finds no free place is left to the
hover (`Label.shown` False) rather than drawn over another.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

BOX_W, BOX_H = 160, 54
ROW_LABEL_W, MARGIN = 70, 14
LANE, TRACK, LABEL_ZONE, CHANNEL_PAD, MIN_CORRIDOR = 9, 8, 16, 8, 26
CHAR_W, LABEL_H = 6.2, 12


@dataclass(frozen=True, slots=True)
class Rect:
    x: float
    y: float
    w: float
    h: float

    def overlaps(self, other: Rect) -> bool:
        return (
            self.x < other.x + other.w
            and other.x < self.x + self.w
            and self.y < other.y + other.h
            and other.y < self.y + self.h
        )

    def crossed_by(self, a: tuple[float, float], b: tuple[float, float]) -> bool:
        """Whether the axis-parallel segment a-b passes through the inside of this box
        (touching its border, as a line ending at a box does, is not crossing)."""
        (x1, y1), (x2, y2) = a, b
        lo_x, hi_x, lo_y, hi_y = min(x1, x2), max(x1, x2), min(y1, y2), max(y1, y2)
        return lo_x < self.x + self.w and hi_x > self.x and lo_y < self.y + self.h and hi_y > self.y


@dataclass(frozen=True, slots=True)
class Label:
    facility: str
    provider: str
    rect: Rect
    shown: bool


@dataclass(frozen=True, slots=True)
class Route:
    provider: str
    requirer: str
    facility: str
    points: tuple[tuple[float, float], ...]

    def segments(self) -> Iterable[tuple[tuple[float, float], tuple[float, float]]]:
        return zip(self.points, self.points[1:], strict=False)


@dataclass(slots=True)
class Layout:
    boxes: dict[str, Rect] = field(default_factory=dict)
    rows: list[tuple[str, float]] = field(default_factory=list)
    """Each row's label and the y of its boxes' tops."""
    routes: list[Route] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    width: float = 0.0
    height: float = 0.0


@dataclass(slots=True)
class _Bus:
    facility: str
    provider: str
    requirers: list[str]
    corridor: int | None = None
    lane: int = 0


def layout(
    rows: Sequence[tuple[str, Sequence[str]]], edges: Sequence[tuple[str, str, str]]
) -> Layout:
    """Place `rows` (label, module names) top to bottom and route every (provider,
    requirer, facility) edge between them."""
    row_of = {name: r for r, (_, names) in enumerate(rows) for name in names}
    widest = max((len(names) for _, names in rows), default=1)
    slot_of = _slots(rows, edges, widest)
    buses = _buses(edges, row_of)
    for bus in buses:
        bus.corridor = _corridor(bus, row_of, slot_of, widest)
    lanes: dict[int, int] = defaultdict(int)
    for bus in buses:
        if bus.corridor is not None:
            bus.lane = lanes[bus.corridor]
            lanes[bus.corridor] += 1
    corridor_w = [max(MIN_CORRIDOR, lanes[k] * LANE + 2 * CHANNEL_PAD) for k in range(widest + 1)]
    tracks = _tracks(buses, row_of)
    result = Layout()
    slot_x = [
        MARGIN + ROW_LABEL_W + sum(corridor_w[: c + 1]) + c * BOX_W for c in range(widest + 1)
    ]
    y: float = MARGIN
    channel_top: list[float] = []
    for r, (label, names) in enumerate(rows):
        result.rows.append((label, y))
        for name in names:
            result.boxes[name] = Rect(slot_x[slot_of[name]], y, BOX_W, BOX_H)
        channel_top.append(y + BOX_H)
        y += BOX_H + _channel_h(tracks, r)
    lane_x = {k: slot_x[k] - corridor_w[k] + CHANNEL_PAD + LANE / 2 for k in range(widest + 1)}

    def track_y(channel: int, bus: _Bus) -> float:
        return channel_top[channel] + LABEL_ZONE + tracks[channel].index(bus.facility) * TRACK + 4

    ports_out, ports_in = _ports(buses, result.boxes, row_of, slot_of)
    for bus in buses:
        trunk = None if bus.corridor is None else lane_x[bus.corridor] + bus.lane * LANE
        for requirer in bus.requirers:
            result.routes.append(
                _route(bus, requirer, trunk, row_of, result.boxes, ports_out, ports_in, track_y)
            )
    result.labels = _labels(buses, result.boxes, ports_out)
    result.width = slot_x[widest] + MARGIN
    result.height = y - _channel_h(tracks, len(rows) - 1) + MARGIN
    return result


def _slots(
    rows: Sequence[tuple[str, Sequence[str]]], edges: Sequence[tuple[str, str, str]], widest: int
) -> dict[str, int]:
    """Each module's slot: a row's modules ordered by where their providers sit (fewer
    crossings), the row centred on the grid."""
    providers: dict[str, list[str]] = defaultdict(list)
    for provider, requirer, _ in edges:
        providers[requirer].append(provider)
    slot_of: dict[str, int] = {}
    for _, names in rows:
        known = [slot_of[p] for n in names for p in providers[n] if p in slot_of]
        middle = sum(known) / len(known) if known else 0.0

        def centre(name: str, middle: float = middle) -> float:
            placed = [slot_of[p] for p in providers[name] if p in slot_of]
            return sum(placed) / len(placed) if placed else middle

        ordered = sorted(names, key=lambda n: (centre(n), names.index(n)))
        offset = (widest - len(names)) // 2
        for index, name in enumerate(ordered):
            slot_of[name] = offset + index
    return slot_of


def _buses(edges: Sequence[tuple[str, str, str]], row_of: dict[str, int]) -> list[_Bus]:
    by_key: dict[tuple[str, str], _Bus] = {}
    for provider, requirer, facility in edges:
        if row_of[requirer] <= row_of[provider]:
            raise ValueError(f"{requirer!r} needs {facility!r} from a row below or beside it")
        key = (provider, str(facility))
        by_key.setdefault(key, _Bus(str(facility), provider, [])).requirers.append(requirer)
    return list(by_key.values())


def _corridor(
    bus: _Bus, row_of: dict[str, int], slot_of: dict[str, int], widest: int
) -> int | None:
    """The corridor a bus descends in (corridor k lies left of slot k), the one nearest its
    ends; None when every requirer is in the next row (the bus stays in one channel)."""
    top = row_of[bus.provider]
    if all(row_of[r] == top + 1 for r in bus.requirers):
        return None
    ends = [slot_of[bus.provider] + 0.5] + [slot_of[r] + 0.5 for r in bus.requirers]
    return min(range(widest + 1), key=lambda k: (sum(abs(k - e) for e in ends), k))


def _tracks(buses: Sequence[_Bus], row_of: dict[str, int]) -> dict[int, list[str]]:
    """The buses running in each channel (channel r lies below row r), one track each."""
    tracks: dict[int, list[str]] = defaultdict(list)
    for bus in buses:
        top = row_of[bus.provider]
        for channel in sorted({top} | {row_of[r] - 1 for r in bus.requirers}):
            tracks[channel].append(bus.facility)
    return tracks


def _channel_h(tracks: dict[int, list[str]], channel: int) -> float:
    return LABEL_ZONE + len(tracks.get(channel, [])) * TRACK + CHANNEL_PAD + 8


def _ports(
    buses: Sequence[_Bus], boxes: dict[str, Rect], row_of: dict[str, int], slot_of: dict[str, int]
) -> tuple[dict[tuple[str, str], float], dict[tuple[str, str], float]]:
    """Where each bus leaves its provider (bottom edge) and enters each requirer (top edge):
    spread along the edge, ordered by where the other end lies."""
    outgoing: dict[str, list[tuple[float, str]]] = defaultdict(list)
    incoming: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for bus in buses:
        ends = [slot_of[r] for r in bus.requirers]
        outgoing[bus.provider].append((sum(ends) / len(ends), bus.facility))
        for requirer in bus.requirers:
            incoming[requirer].append(
                (slot_of[bus.provider] - row_of[bus.provider] / 100, bus.facility)
            )

    def spread(
        sides: dict[str, list[tuple[float, str]]], lo: float, hi: float
    ) -> dict[tuple[str, str], float]:
        at: dict[tuple[str, str], float] = {}
        for name, ends in sides.items():
            box = boxes[name]
            ordered = sorted(ends)
            for index, (_, facility) in enumerate(ordered):
                share = lo + (hi - lo) * (index + 1) / (len(ordered) + 1)
                at[(name, facility)] = round(box.x + box.w * share, 1)
        return at

    # Out on the left part of a bottom edge, in on the right part of a top edge: a box and
    # the one below it in the same slot never send two lines down the same x.
    return spread(outgoing, 0.0, 0.34), spread(incoming, 0.34, 1.0)


def _route(
    bus: _Bus,
    requirer: str,
    trunk: float | None,
    row_of: dict[str, int],
    boxes: dict[str, Rect],
    ports_out: dict[tuple[str, str], float],
    ports_in: dict[tuple[str, str], float],
    track_y: Callable[[int, _Bus], float],
) -> Route:
    out_x = ports_out[(bus.provider, bus.facility)]
    in_x = ports_in[(requirer, bus.facility)]
    source, target = boxes[bus.provider], boxes[requirer]
    top = row_of[bus.provider]
    leave, arrive = track_y(top, bus), track_y(row_of[requirer] - 1, bus)
    points: list[tuple[float, float]] = [(out_x, source.y + source.h), (out_x, leave)]
    if trunk is not None and row_of[requirer] > top + 1:
        points += [(trunk, leave), (trunk, arrive)]
    points += [(in_x, arrive), (in_x, target.y)]
    deduped = [p for i, p in enumerate(points) if i == 0 or p != points[i - 1]]
    return Route(bus.provider, requirer, bus.facility, tuple(deduped))


def _labels(
    buses: Sequence[_Bus], boxes: dict[str, Rect], ports_out: dict[tuple[str, str], float]
) -> list[Label]:
    """One label per bus in the label zone under its provider: right of where it leaves,
    else left of it; if both would lie on a label already placed or on a box, hover only."""
    placed: list[Rect] = []
    labels = []
    for bus in buses:
        x = ports_out[(bus.provider, bus.facility)]
        box = boxes[bus.provider]
        width = len(bus.facility) * CHAR_W + 4
        y = box.y + box.h + 2
        chosen = None
        for left in (x + 3, x - 3 - width):
            candidate = Rect(left, y, width, LABEL_H)
            clear = not any(candidate.overlaps(p) for p in placed)
            if clear and not any(candidate.overlaps(b) for b in boxes.values()):
                chosen = candidate
                break
        if chosen is not None:
            placed.append(chosen)
        labels.append(
            Label(
                bus.facility,
                bus.provider,
                chosen or Rect(x + 3, y, width, LABEL_H),
                chosen is not None,
            )
        )
    return labels
