"""Recall@k by category and configuration as an interactive chart: a Vega-Lite spec built
with Altair, drawn by the Vega renderer that ships in JupyterLab's own wheel (nothing is
fetched), with a tooltip on every bar. The same display carries `plot.recall_charts` as its
static SVG, which is what a viewer without Vega (GitHub, nbviewer, an HTML export) shows.

Altair is held below 6: its 6.x emits Vega-Lite 6 under a MIME type JupyterLab 4 does not
render (it registers Vega-Lite 3 to 5)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from hologram.eval.plot import metric_columns, recall_charts

VEGA_LITE_MIME = "application/vnd.vegalite.v5+json"


def recall_long(summary: pd.DataFrame, ks: Sequence[int | str]) -> pd.DataFrame:
    """One row per (dataset, configuration, category, metric): what a bar shows."""
    columns = [c for c in metric_columns(ks) if c in summary]
    rows = summary.melt(
        id_vars=["dataset", "config", "category", "scored"],
        value_vars=columns,
        var_name="k",
        value_name="recall",
    )
    return rows.dropna(subset=["recall"]).reset_index(drop=True)


class RecallChart:
    """Displayed in a notebook as the interactive chart; `.spec` is the Vega-Lite document,
    `.svg` the static picture."""

    def __init__(self, summary: pd.DataFrame, ks: Sequence[int | str] = (5, 10)) -> None:
        self.ks = tuple(ks)
        self.data = recall_long(summary, self.ks)
        self.svg = recall_charts(summary, self.ks)
        self.spec = self._spec()

    def _spec(self) -> dict[str, Any]:
        import altair as alt

        # Explicit orders: Vega-Lite sorts facets by name (recall@10 before recall@5).
        metrics = metric_columns(self.ks)
        categories = list(dict.fromkeys(self.data["category"]))
        configs = list(dict.fromkeys(self.data["config"]))
        bars = (
            alt.Chart(self.data)
            .mark_bar()
            .encode(
                x=alt.X("category:N", title=None, sort=categories),
                xOffset=alt.XOffset("config:N", sort=configs),
                y=alt.Y("recall:Q", title="score", scale=alt.Scale(domain=[0, 1])).axis(format="%"),
                color=alt.Color("config:N", title="configuration", sort=configs),
                tooltip=[
                    alt.Tooltip("dataset:N"),
                    alt.Tooltip("config:N", title="configuration"),
                    alt.Tooltip("category:N"),
                    alt.Tooltip("k:N", title="metric"),
                    alt.Tooltip("recall:Q", format=".1%"),
                    alt.Tooltip("scored:Q", title="probes scored"),
                ],
            )
            .properties(width=alt.Step(12), height=180)
        )
        chart = bars.facet(
            column=alt.Column("k:N", title=None, sort=metrics),
            row=alt.Row("dataset:N", title=None, sort=list(dict.fromkeys(self.data["dataset"]))),
        )
        return chart.to_dict()

    def _repr_mimebundle_(self, **_kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        data = {
            VEGA_LITE_MIME: self.spec,
            "image/svg+xml": self.svg,
            "text/plain": f"<recall chart: {len(self.data)} bars; hover one for its value>",
        }
        # Drawn as SVG rather than on a canvas: sharper in screenshots and exports, and each
        # bar is an element a test (or a person's inspector) can point at.
        return data, {VEGA_LITE_MIME: {"embed_options": {"renderer": "svg"}}}
