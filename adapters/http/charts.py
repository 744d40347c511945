"""The overview page's charts as server-side SVG: geometry here, drawing in ``templates/_charts.html``.

No JavaScript charting library: the figures are few and the page must work
without a network, so the server lays the charts out and the template draws
them as inline ``<svg>`` (every label goes through Jinja's autoescaping, so a
tool or actor name cannot inject markup). Each mark carries a ``<title>``
(a tooltip and what a screen reader says) and every chart has a table of the
same numbers next to it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from chatledger.projections.stats import Day, Decisions

__all__ = ["Bar", "Chart", "Label", "day_chart", "split_chart"]


@dataclass(frozen=True)
class Bar:
    """One rectangle, with its series (a CSS class) and its tooltip."""

    x: float
    y: float
    width: float
    height: float
    series: str
    title: str


@dataclass(frozen=True)
class Label:
    """A text at a point (``anchor``: SVG ``text-anchor``)."""

    x: float
    y: float
    text: str
    anchor: str = "middle"


@dataclass(frozen=True)
class Chart:
    """An SVG chart's size, marks and labels, ready to draw."""

    width: int
    height: int
    title: str
    bars: list[Bar] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    gridlines: list[float] = field(default_factory=list)
    """Heights (y) of horizontal gridlines."""


_LEFT, _RIGHT, _TOP, _BOTTOM = 40, 8, 12, 24


def _nice(top: int) -> int:
    """A round axis maximum at or above ``top`` (1, 2, 5 times a power of ten)."""
    if top <= 1:
        return 1
    power = 10 ** math.floor(math.log10(top))
    return int(next(step * power for step in (1, 2, 5, 10) if step * power >= top))


def day_chart(days: list[Day], *, width: int = 720, height: int = 200) -> Chart:
    """Conversations started and streams opened per day, as pairs of columns."""
    chart = Chart(width, height, "Conversations and streams per day")
    if not days:
        return chart
    plot_w, plot_h = width - _LEFT - _RIGHT, height - _TOP - _BOTTOM
    top = _nice(max(max(d.conversations, d.streams) for d in days))
    slot = plot_w / len(days)
    column = max(slot * 0.38, 1.0)
    every = max(1, math.ceil(len(days) / 10))
    for index, day in enumerate(days):
        left = _LEFT + index * slot + (slot - 2 * column) / 2
        for offset, (series, value, what) in enumerate(
            (("conversations", day.conversations, "conversation(s) started"),
             ("streams", day.streams, "stream(s) opened"))
        ):  # fmt: skip
            tall = plot_h * value / top
            chart.bars.append(
                Bar(left + offset * column, _TOP + plot_h - tall, column, tall, series,
                    f"{day.day.isoformat()}: {value:,} {what}")
            )  # fmt: skip
        if index % every == 0 or index == len(days) - 1:
            chart.labels.append(
                Label(_LEFT + (index + 0.5) * slot, height - 6, day.day.strftime("%m-%d"))
            )
    for fraction in (0.0, 0.5, 1.0):
        y = _TOP + plot_h * (1 - fraction)
        chart.gridlines.append(y)
        chart.labels.append(Label(_LEFT - 6, y + 4, f"{top * fraction:g}", "end"))
    return chart


def split_chart(
    title: str, groups: Mapping[str, Decisions], *, width: int = 720, most: int = 12
) -> Chart:
    """Approved and denied per name (a tool, an actor), one stacked row each, ``most`` rows at most."""
    rows = list(groups.items())[:most]
    row_h, label_w, count_w = 26, 200, 90
    chart = Chart(width, max(len(rows), 1) * row_h + 8, title)
    top = max((d.total for _, d in rows), default=0)
    if not top:
        return chart
    scale = (width - label_w - count_w) / top
    for index, (name, d) in enumerate(rows):
        y = 4 + index * row_h
        shown = name if len(name) <= 28 else name[:27] + "…"
        chart.labels.append(Label(label_w - 8, y + 17, shown, "end"))
        approved_w, denied_w = d.approved * scale, d.denied * scale
        if d.approved:
            chart.bars.append(
                Bar(label_w, y + 3, approved_w, row_h - 8, "approved",
                    f"{name}: {d.approved:,} approved")
            )  # fmt: skip
        if d.denied:
            chart.bars.append(
                Bar(label_w + approved_w, y + 3, denied_w, row_h - 8, "denied",
                    f"{name}: {d.denied:,} denied")
            )  # fmt: skip
        chart.labels.append(
            Label(label_w + approved_w + denied_w + 6, y + 17, f"{d.approved:,} / {d.denied:,}",
                  "start")
        )  # fmt: skip
    return chart
