"""Line charts as inline SVG, rendered on the server: no script, no network, one file.

Why hand-written SVG and not a charting library: the report must open from disk anywhere,
stay small for a 300-generation run, and every text in it must pass through one escaping
function. A chart is a viewBox (it scales with the page), labelled axes with round ticks,
lines told apart by dash pattern as well as colour and labelled at their ends, and markers
whose shape (not colour alone) says what happened; each marker's <title> is its hover text.

A viewBox scales its text with it, so one drawing cannot be readable at every width: a chart
is drawn twice (``chart_pair``), wide (``WIDE``, for a box of 700 px and more) and narrow
(``NARROW``: fewer ticks, no end labels, text larger for its size, each marker's brief hover
text, so that the page stays under 1 MB), and the page's style sheet shows the one that fits
the window (a media query; no script).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

LANE = 34  # the strip under the plot that holds retry markers
DASHES = ("", "7 4", "2 3", "10 3 2 3", "1 5", "14 4")
MARKER = 5.5


def text(value: object) -> str:
    """Any value as safe text for an element or an attribute (the one escape of this module)."""
    return escape(str(value), quote=True)


def _number(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".") if math.isfinite(value) else "0"


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high] (steps of 1, 2 or 5 times a power of ten)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return [0.0, 1.0]
    if high - low <= max(abs(low), abs(high), 1.0) * 1e-9:
        # one value (or two a rounding apart: 0.9745000000000001 and 0.9744999999999995),
        # where a step of 1e-16 would never move a float that large
        low, high = low - 0.5, high + 0.5
    raw = (high - low) / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    ticks = [round(first + index * step, 12) for index in range(2 * max(1, count) + 2)]
    covering = [tick for tick in ticks if tick <= high + step * 1e-9]
    if covering[-1] < high:  # the last tick above the top, as an axis ends
        covering.append(ticks[len(covering)])
    return covering


def _tick_label(value: float, step: float) -> str:
    decimals = max(0, -math.floor(math.log10(step))) if step > 0 else 0
    return f"{value:.{decimals}f}"


@dataclass(frozen=True)
class Frame:
    """A chart's geometry in viewBox units: its size, the margins around the plot, how many
    ticks the x axis aims at, and whether the lines are named at their ends."""

    width: int
    height: int
    left: int
    top: int
    bottom: int
    right_plain: int
    right_labels: int  # room on the right for the lines' end labels
    x_ticks: int
    end_labels: bool
    y_label_x: int  # where the y axis's rotated name is centred
    full_titles: bool  # markers hover with their whole title, else with their brief
    variant: str  # the class the style sheet shows or hides it by


# Text is 12 units wide-drawn and 13 narrow-drawn: shown at 700 px and more, a wide chart's
# labels are >= 11 px; a narrow one shown in a 360 px box (a 390 px phone) keeps them >= 12 px.
WIDE = Frame(
    width=760, height=340, left=64, top=28, bottom=58, right_plain=24, right_labels=130,
    x_ticks=8, end_labels=True, y_label_x=16, full_titles=True, variant="wide",
)  # fmt: skip
NARROW = Frame(
    width=380, height=300, left=60, top=18, bottom=50, right_plain=14, right_labels=14,
    x_ticks=4, end_labels=False, y_label_x=13, full_titles=False, variant="narrow",
)  # fmt: skip


@dataclass
class Series:
    """A line: its name (legend and end label), points (x, y), and how it is drawn."""

    name: str
    points: list[tuple[float, float]]
    style: int = 0  # picks the dash pattern and the colour class
    width: float = 2.0
    label_end: bool = True
    above_markers: bool = False  # drawn over the markers (the line that matters most)


@dataclass
class Marker:
    """A point with a shape: ``kind`` is the shape and class (advance, rollback, retry,
    failed, dot); ``lane`` puts it in the strip under the plot (at step ``lane`` from the
    axis) instead of at its y value."""

    x: float
    y: float | None
    kind: str
    title: str
    attributes: dict[str, object] = field(default_factory=dict)
    brief: str = ""  # the hover text of the narrow drawing (the title without its long tail)
    lane: int | None = None
    css: str = ""  # more classes, for the page's scripts-free tests and styles
    size: float = MARKER  # half the marker's width
    on_top: bool = False  # drawn last, over every line (the rare events worth finding)


def marker_path(kind: str, centre_x: float, centre_y: float, size: float = MARKER) -> str:
    """The outline of a marker shape centred at (``centre_x``, ``centre_y``)."""
    half, span = _number(size), _number(2 * size)
    if kind == "advance":  # a triangle pointing up
        return f"M{_number(centre_x)} {_number(centre_y - size)}l{half} {span}h-{span}z"
    if kind == "rollback":  # a triangle pointing down
        return f"M{_number(centre_x)} {_number(centre_y + size)}l{half} -{span}h-{span}z"
    if kind == "retry":  # a square
        corner, side = size * 0.8, _number(size * 1.6)
        return f"M{_number(centre_x - corner)} {_number(centre_y - corner)}h{side}v{side}h-{side}z"
    if kind == "failed":  # a cross
        return (
            f"M{_number(centre_x - size)} {_number(centre_y - size)}l{span} {span}"
            f"M{_number(centre_x - size)} {_number(centre_y + size)}l{span} -{span}"
        )
    # a diamond for anything else (a decision this page does not know)
    return (
        f"M{_number(centre_x)} {_number(centre_y - size)}"
        f"l{half} {half}l-{half} {half}l-{half} -{half}z"
    )


def legend_swatch(kind: str) -> str:
    """A marker shape as a small standalone SVG, for legends and tables."""
    return (
        '<svg class="swatch" viewBox="0 0 16 16" width="14" height="14" aria-hidden="true">'
        f'<path class="m-{text(kind)}" d="{marker_path(kind, 8, 8, 5.5)}"/></svg>'
    )


class _Scale:
    def __init__(self, low: float, high: float, start: float, end: float):
        self.low, self.high, self.start, self.end = low, high, start, end

    def __call__(self, value: float) -> float:
        if self.high == self.low:
            return (self.start + self.end) / 2
        return self.start + (value - self.low) * (self.end - self.start) / (self.high - self.low)


def line_chart(
    *,
    chart_id: str,
    title: str,
    description: str,
    x_label: str,
    y_label: str,
    series: Sequence[Series],
    markers: Sequence[Marker] = (),
    lane_label: str | None = None,
    y_range: tuple[float, float] | None = None,
    y_limits: tuple[float, float] | None = None,
    integer_x: bool = True,
    frame: Frame = WIDE,
) -> str:
    """One chart as an <svg> element (a viewBox of the frame's size that scales with the page).

    ``y_limits`` is the values' natural range (a score's [0, 1]): while every value lies in
    it, the axis's padding stops at its ends (no score axis from -0.5 to 1.5)."""
    labelled = [s for s in series if s.label_end and s.points] if frame.end_labels else []
    right = frame.right_labels if labelled else frame.right_plain
    lane_height = LANE if lane_label else 0
    width, height = frame.width, frame.height
    plot_left, plot_right = frame.left, width - right
    plot_top, plot_bottom = frame.top, height - frame.bottom - lane_height
    x_values = [x for s in series for x, _ in s.points] + [m.x for m in markers]
    y_values = [y for s in series for _, y in s.points] + [
        m.y
        for m in markers
        if m.y is not None and m.lane is None  # (a lane's are off the axis)
    ]
    x_low, x_high = (min(x_values), max(x_values)) if x_values else (0.0, 1.0)
    if integer_x:
        x_low, x_high = x_low - 0.5, x_high + 0.5
    if y_range is not None:
        y_ticks = nice_ticks(*y_range)
    elif not y_values:  # nothing on the axis (every point in a lane): the values' own range
        y_ticks = nice_ticks(*(y_limits or (0.0, 1.0)))
    else:
        y_low, y_high = min(y_values), max(y_values)
        pad = (y_high - y_low) * 0.06 or 0.05
        y_low, y_high = y_low - pad, y_high + pad
        if y_limits is not None and y_limits[0] <= min(y_values):
            y_low = max(y_low, y_limits[0])
        if y_limits is not None and max(y_values) <= y_limits[1]:
            y_high = min(y_high, y_limits[1])
        y_ticks = nice_ticks(y_low, y_high)
    x_ticks = [t for t in nice_ticks(x_low, x_high, frame.x_ticks) if x_low <= t <= x_high]
    if integer_x:
        x_ticks = [t for t in x_ticks if t == int(t)]
    scale_x = _Scale(x_low, x_high, plot_left, plot_right)
    scale_y = _Scale(y_ticks[0], y_ticks[-1], plot_bottom, plot_top)
    y_step = y_ticks[1] - y_ticks[0] if len(y_ticks) > 1 else 1.0
    x_step = x_ticks[1] - x_ticks[0] if len(x_ticks) > 1 else 1.0
    ident = text(chart_id)
    parts = [
        f'<svg id="{ident}" class="chart {frame.variant}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-labelledby="{ident}-title {ident}-desc" preserveAspectRatio="xMidYMid meet">',
        f'<title id="{ident}-title">{text(title)}</title>',
        f'<desc id="{ident}-desc">{text(description)}</desc>',
        '<g class="grid">',
    ]
    for tick in y_ticks:
        tick_y = _number(scale_y(tick))
        parts.append(f'<line x1="{plot_left}" x2="{plot_right}" y1="{tick_y}" y2="{tick_y}"/>')
    parts.append('</g><g class="axis">')
    parts.append(
        f'<line x1="{plot_left}" x2="{plot_left}" y1="{plot_top}" y2="{plot_bottom}"/>'
        f'<line x1="{plot_left}" x2="{plot_right}" y1="{plot_bottom}" y2="{plot_bottom}"/>'
    )
    for tick in y_ticks:
        tick_y = _number(scale_y(tick))
        parts.append(
            f'<text x="{plot_left - 6}" y="{tick_y}" text-anchor="end" dominant-baseline="middle">'
            f"{text(_tick_label(tick, y_step))}</text>"
        )
    axis_bottom = plot_bottom + lane_height
    middle_y = (plot_top + plot_bottom) / 2
    for tick in x_ticks:
        tick_x = _number(scale_x(tick))
        parts.append(
            f'<line x1="{tick_x}" x2="{tick_x}" y1="{plot_bottom}" y2="{plot_bottom + 4}"/>'
            f'<text x="{tick_x}" y="{axis_bottom + 18}" text-anchor="middle">'
            f"{text(_tick_label(tick, x_step))}</text>"
        )
    parts.append(
        f'<text class="axis-label" x="{(plot_left + plot_right) / 2:.0f}" y="{height - 10}" '
        f'text-anchor="middle">{text(x_label)}</text>'
        f'<text class="axis-label" x="{frame.y_label_x}" y="{middle_y:.0f}" '
        f'text-anchor="middle" transform="rotate(-90 {frame.y_label_x} {middle_y:.0f})">'
        f"{text(y_label)}</text>"
    )
    if lane_label:
        parts.append(
            f'<line class="lane" x1="{plot_left}" x2="{plot_right}" y1="{axis_bottom}" '
            f'y2="{axis_bottom}"/><text class="lane-label" x="{plot_left - 6}" '
            f'y="{plot_bottom + lane_height / 2:.0f}" text-anchor="end" '
            f'dominant-baseline="middle">{text(lane_label)}</text>'
        )
    parts.append("</g>")

    def draw_line(line: Series) -> None:
        coordinates = " ".join(
            f"{_number(scale_x(x))},{_number(scale_y(y))}" for x, y in line.points
        )
        dash = DASHES[line.style % len(DASHES)]
        dash_attribute = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(
            f'<polyline class="line c{line.style % len(DASHES)}" data-series="{text(line.name)}" '
            f'fill="none" stroke-width="{line.width}"{dash_attribute} points="{coordinates}">'
            f"<title>{text(line.name)}</title></polyline>"
        )

    deepest = max((m.lane for m in markers if m.lane is not None), default=0)
    lane_step = min(11.0, (lane_height - 12) / max(1, deepest))

    def draw_marker(mark: Marker) -> None:
        mark_x = scale_x(mark.x)
        if mark.lane is not None:
            mark_y = plot_bottom + lane_height - 7 - mark.lane * lane_step
        else:
            mark_y = scale_y(mark.y if mark.y is not None else y_ticks[0])
        attributes = "".join(f' {text(k)}="{text(v)}"' for k, v in mark.attributes.items())
        classes = text(f"m-{mark.kind} {mark.css}".strip())
        parts.append(
            f'<path class="{classes}" d="{marker_path(mark.kind, mark_x, mark_y, mark.size)}"{attributes}>'
            f"<title>{text(mark.title if frame.full_titles else (mark.brief or mark.title))}</title></path>"
        )

    # layers, bottom to top: plain lines, plain markers, lines above markers, markers on top
    for line in series:
        if line.points and not line.above_markers:
            draw_line(line)
    parts.append('<g class="markers">')
    for mark in markers:
        if not mark.on_top:
            draw_marker(mark)
    parts.append("</g>")
    for line in series:
        if line.points and line.above_markers:
            draw_line(line)
    parts.append('<g class="markers top">')
    for mark in markers:
        if mark.on_top:
            draw_marker(mark)
    parts.append("</g>")
    parts += _end_labels(labelled, scale_x, scale_y, plot_right, plot_top, plot_bottom)
    parts.append("</svg>")
    return "".join(parts)


def _end_labels(
    lines: Sequence[Series],
    scale_x: _Scale,
    scale_y: _Scale,
    plot_right: float,
    plot_top: float,
    plot_bottom: float,
) -> list[str]:
    """Each line's name at its last point, nudged apart so that no two overlap."""
    placed = sorted(
        ((scale_y(line.points[-1][1]), line) for line in lines), key=lambda item: item[0]
    )
    gap = 13.0
    positions: list[float] = []
    for line_y, _ in placed:
        positions.append(max(line_y, plot_top + 4, positions[-1] + gap if positions else -math.inf))
    overflow = positions[-1] - (plot_bottom - 2) if positions else 0
    if overflow > 0:
        positions = [max(plot_top, y - overflow) for y in positions]
    return [
        f'<text class="end-label c{line.style % len(DASHES)}" x="{plot_right + 6}" '
        f'y="{_number(y)}" dominant-baseline="middle">{text(_short(line.name))}</text>'
        for y, (_, line) in zip(positions, placed)
    ]


def _short(name: str, limit: int = 18) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


def chart_pair(*, chart_id: str, **drawing: Any) -> str:
    """A chart drawn wide (id ``chart_id``) and narrow (``chart_id``-narrow), for the style
    sheet to show the one that fits (``line_chart``'s arguments)."""
    return line_chart(chart_id=chart_id, frame=WIDE, **drawing) + line_chart(
        chart_id=f"{chart_id}-narrow", frame=NARROW, **drawing
    )
