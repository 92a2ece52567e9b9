"""Recall@k by category as a small SVG bar chart (no plotting library needed): one group of
bars per category, one bar per configuration, one panel per k. It is the static picture of
`hologram.eval.chart` and the ``recall.svg`` an experiment writes."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import pandas as pd

COLOURS = (
    "#4c78a8", "#f58518", "#54a24b", "#b279a2", "#e45756",
    "#72b7b2", "#eeca3b", "#ff9da6", "#9d755d", "#bab0ac",
)  # fmt: skip
"""Vega's tableau10: a sweep's rows (seven with the baseline) each keep a colour."""


BAR, GAP, HEIGHT, TOP, LEFT = 12, 14, 150, 30, 40


def metric_columns(ks: Sequence[int | str]) -> list[str]:
    """The summary columns a chart shows: a number k is recall@k, a name is itself
    (``"recall_any@10"``, ``"ndcg@10"``, ``"session_recall@5"``)."""
    return [k if isinstance(k, str) else f"recall@{k}" for k in ks]


def _size(rows: pd.DataFrame, ks: Sequence[int | str]) -> tuple[int, int]:
    """Width and height of one dataset's chart."""
    group = BAR * rows["config"].nunique() + GAP
    panel = group * rows["category"].nunique() + GAP
    return LEFT + panel * len(ks) + 10, TOP + HEIGHT + 90


def recall_chart(summary: pd.DataFrame, dataset: str, ks: Sequence[int | str] = (5, 10)) -> str:
    """The SVG text; display it with ``IPython.display.SVG(data=...)``."""
    rows = summary[summary["dataset"] == dataset]
    configs = list(dict.fromkeys(rows["config"]))
    categories = list(dict.fromkeys(rows["category"]))
    bar, gap, height, top, left = BAR, GAP, HEIGHT, TOP, LEFT
    group = bar * len(configs) + gap
    panel = group * len(categories) + gap
    width, full_height = _size(rows, ks)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{full_height}" '
        'font-family="sans-serif" font-size="10">'
    ]
    for p, column in enumerate(metric_columns(ks)):
        x0 = left + p * panel
        parts.append(f'<text x="{x0 + panel / 2}" y="14" text-anchor="middle">{column}</text>')
        parts.append(
            f'<line x1="{x0}" y1="{top + height}" x2="{x0 + panel - gap}" '
            f'y2="{top + height}" stroke="#888"/>'
        )
        for c, category in enumerate(categories):
            gx = x0 + c * group
            for i, config in enumerate(configs):
                match = rows[(rows["config"] == config) & (rows["category"] == category)]
                value = float(match[column].iloc[0]) if len(match) else 0.0
                value = 0.0 if value != value else value  # NaN: nothing scored
                h = value * height
                parts.append(
                    f'<rect x="{gx + i * bar}" y="{top + height - h:.1f}" width="{bar - 1}" '
                    f'height="{h:.1f}" fill="{COLOURS[i % len(COLOURS)]}">'
                    f"<title>{escape(config)} · {escape(category)}: {value:.1%}</title></rect>"
                )
            parts.append(
                f'<text transform="translate({gx + group / 2 - gap / 2},{top + height + 8}) '
                f'rotate(40)">{escape(category)}</text>'
            )
    for y, label in ((top, "100%"), (top + height / 2, "50%"), (top + height, "0%")):
        parts.append(f'<text x="{left - 4}" y="{y + 3}" text-anchor="end">{label}</text>')
    for i, config in enumerate(configs):
        y = top + height + 70 + (i // 3) * 12
        x = left + (i % 3) * 160
        parts.append(
            f'<rect x="{x}" y="{y - 8}" width="9" height="9" fill="{COLOURS[i % len(COLOURS)]}"/>'
        )
        parts.append(f'<text x="{x + 13}" y="{y}">{escape(config)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def recall_charts(summary: pd.DataFrame, ks: Sequence[int | str] = (5, 10)) -> str:
    """Every dataset's `recall_chart` in one SVG, one under another, each with its name."""
    parts, width, y = [], 0, 0
    for dataset in dict.fromkeys(summary["dataset"]):
        chart = recall_chart(summary, dataset, ks)
        chart_width, chart_height = _size(summary[summary["dataset"] == dataset], ks)
        parts.append(
            f'<text x="4" y="{y + 14}" font-family="sans-serif" font-size="12" '
            f'font-weight="bold">{escape(str(dataset))}</text>'
        )
        parts.append(chart.replace("<svg ", f'<svg x="0" y="{y + 18}" ', 1))
        width, y = max(width, chart_width), y + 18 + chart_height
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y}">'
        + "".join(parts)
        + "</svg>"
    )
