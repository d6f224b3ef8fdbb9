"""Inline SVG plots drawn by hand, so the HTML report needs no script, font or URL.

Each function returns one ``<svg>`` element as a string (coordinates in user
units, scaled by the browser). Text is escaped; colours are fixed so a printed
report looks the same as the screen.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from judgekit.report._format import num
from judgekit.report.model import Confusion, ScatterPoint, Stat

_FONT = 'font-family="sans-serif" font-size="11"'
_AXIS = "#555"
_BLUE = "#2b6cb0"
_RED = "#c53030"


def _svg(width: int, height: int, body: list[str], plot_id: str, title: str) -> str:
    return (
        f'<svg id="{plot_id}" class="plot" role="img" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">'
        f"<title>{escape(title)}</title>" + "".join(body) + "</svg>"
    )


def _text(x: float, y: float, text: str, anchor: str = "middle", extra: str = "") -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" {_FONT} {extra}>'
        f"{escape(text)}</text>"
    )


def confusion_heatmap(confusion: Confusion) -> str:
    """Judge (rows) by human (columns); cell shade = the cell's count (darkest: the largest)."""
    labels = confusion.labels
    k = max(len(labels), 1)
    cell = max(28, min(64, 360 // k))
    left, top = 110, 60
    width, height = left + cell * k + 20, top + cell * k + 20
    body = [
        _text(left + cell * k / 2, 18, "human label", extra='font-weight="bold"'),
        _text(
            16,
            top + cell * k / 2,
            "judge label",
            extra=(f'font-weight="bold" transform="rotate(-90 16 {top + cell * k / 2:.1f})"'),
        ),
    ]
    largest = max((c for row in confusion.matrix for c in row), default=0)
    for j, label in enumerate(labels):
        body.append(_text(left + cell * (j + 0.5), top - 8, label[:10]))
    for i, (label, row) in enumerate(zip(labels, confusion.matrix, strict=True)):
        body.append(_text(left - 8, top + cell * (i + 0.5) + 4, label[:14], anchor="end"))
        for j, count in enumerate(row):
            share = count / largest if largest else 0.0
            shade = int(255 - 200 * share)
            fill = f"rgb({shade},{shade + (255 - shade) // 3},255)"
            colour = "#fff" if share > 0.6 else "#000"
            x, y = left + cell * j, top + cell * i
            body.append(
                f'<rect class="cell" x="{x}" y="{y}" width="{cell}" height="{cell}" '
                f'fill="{fill}" stroke="#fff"><title>judge {escape(label)} / human '
                f"{escape(labels[j])}: {count}</title></rect>"
            )
            body.append(_text(x + cell / 2, y + cell / 2 + 4, str(count), extra=f'fill="{colour}"'))
    return _svg(width, height, body, "confusion-heatmap", "Confusion matrix heatmap")


#: Width of one character of the 11-unit sans-serif font, generously: labels are laid out
#: with it so none is clipped at the plot's edge.
_CHAR = 6.6


def _label_room(labels: Sequence[str], minimum: int = 60) -> int:
    """Room left of the axis for the longest label, so none is clipped."""
    return max(minimum, int(max((len(t) for t in labels), default=0) * _CHAR) + 16)


def nice_ticks(lo: float, hi: float, most: int = 6) -> list[float]:
    """Round tick values from at or below ``lo`` to at or above ``hi``: steps of 1, 2, 2.5
    or 5 times a power of ten.

    A 1-5 scale gets 1, 2, 3, 4, 5 (never 1.11, 2.22, ...); [0, 1] gets 0, 0.2, ... 1.
    """
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else []
    raw = (hi - lo) / max(most - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw - 1e-12)
    first = math.floor(lo / step + 1e-9) * step
    ticks = [round(first, 10)]
    while ticks[-1] < hi - 1e-9:
        ticks.append(round(first + len(ticks) * step, 10))
    return ticks


def _tick_text(value: float, ticks: Sequence[float]) -> str:
    """A tick label with as few decimals as its neighbours need."""
    if all(float(t).is_integer() for t in ticks):
        return f"{value:.0f}"
    digits = 1 if all(abs(t * 10 - round(t * 10)) < 1e-9 for t in ticks) else 2
    return num(value, digits)


def _scale(lo: float, hi: float, a: float, b: float) -> tuple[float, float]:
    """Linear map [lo, hi] -> [a, b] as (slope, offset)."""
    span = hi - lo if hi > lo else 1.0
    slope = (b - a) / span
    return slope, a - lo * slope


def forest_plot(
    rows: Sequence[tuple[str, Stat, bool]],
    overall: Stat | None,
    threshold: float | None,
    statistic_name: str,
    plot_id: str = "slice-forest",
    title: str = "Per-slice forest plot",
) -> str:
    """Per-slice point estimates with interval whiskers; flagged slices in red."""
    values = [v for _, s, _ in rows for v in (s.statistic, s.ci_low, s.ci_high) if math.isfinite(v)]
    if overall is not None:
        values += [
            v for v in (overall.statistic, overall.ci_low, overall.ci_high) if math.isfinite(v)
        ]
    if threshold is not None:
        values.append(threshold)
    lo = min(values) if values else 0.0
    hi = max(values) if values else 1.0
    if hi - lo < 1.0 and lo >= -1.0 and hi <= 1.0:  # an agreement figure: show [0, 1] or more
        lo, hi = min(lo, 0.0), max(hi, 1.0)
    ticks = nice_ticks(lo, hi)
    lo, hi = min([lo, *ticks]), max([hi, *ticks])
    names = [f"{name[:18]} (n={stat.n})" for name, stat, _ in rows]
    left, top, row_h = _label_room(names, 120), 30, 24
    right = left + 390
    height = top + row_h * (len(rows) + 1) + 40
    slope, offset = _scale(lo, hi, left, right)
    body = []
    for tick in ticks:
        x = slope * tick + offset
        body.append(
            f'<line x1="{x:.1f}" y1="{top - 10}" x2="{x:.1f}" y2="{height - 35}" stroke="#eee"/>'
        )
        body.append(_text(x, height - 20, _tick_text(tick, ticks)))
    body.append(_text((left + right) / 2, height - 4, statistic_name))
    if overall is not None and overall.defined:
        x = slope * overall.statistic + offset
        body.append(
            f'<line class="overall" x1="{x:.1f}" y1="{top - 10}" x2="{x:.1f}" '
            f'y2="{height - 35}" stroke="{_AXIS}" stroke-dasharray="4 3"/>'
        )
        body.append(_text(x, top - 14, "overall"))
    if threshold is not None:
        x = slope * threshold + offset
        body.append(
            f'<line class="threshold" x1="{x:.1f}" y1="{top - 10}" x2="{x:.1f}" '
            f'y2="{height - 35}" stroke="{_RED}" stroke-dasharray="2 2"/>'
        )
    for i, (name, stat, flagged) in enumerate(rows):
        y = top + row_h * (i + 0.5)
        colour = _RED if flagged else _BLUE
        body.append(_text(left - 10, y + 4, names[i], anchor="end"))
        if math.isfinite(stat.ci_low) and math.isfinite(stat.ci_high):
            x1, x2 = slope * stat.ci_low + offset, slope * stat.ci_high + offset
            body.append(
                f'<line class="ci" x1="{x1:.1f}" y1="{y:.1f}" x2="{x2:.1f}" y2="{y:.1f}" '
                f'stroke="{colour}" stroke-width="2"/>'
            )
        if stat.defined:
            x = slope * stat.statistic + offset
            body.append(
                f'<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour}">'
                f"<title>{escape(name)}: {num(stat.statistic)}</title></circle>"
            )
    return _svg(right + 40, height, body, plot_id, title)


def scatter_plot(points: Sequence[ScatterPoint], y_label: str = "judge score") -> str:
    """Judge score against response length (characters), with a small vertical jitter.

    The jitter stays inside a band around each score and every point inside the
    axes; the score axis has round ticks (1 to 5 on a 1-5 scale).
    """
    left, right, top, bottom = 60, 560, 20, 260
    xs = [p.length for p in points] or [0]
    ys = [p.score for p in points] or [0.0]
    y_ticks = nice_ticks(min(ys), max(ys)) or [min(ys)]
    y_lo, y_hi = min([*ys, *y_ticks]), max([*ys, *y_ticks])
    pad = 0.08 * ((y_hi - y_lo) or 1.0)
    sx, ox = _scale(min(xs), max(xs), left + 6, right - 6)
    sy, oy = _scale(y_lo - pad, y_hi + pad, bottom, top)
    jitter = pad * abs(sy)
    body = [
        f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="{_AXIS}"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="{_AXIS}"/>',
        _text((left + right) / 2, bottom + 32, "response length (characters)"),
        _text(
            14,
            (top + bottom) / 2,
            y_label,
            extra=f'transform="rotate(-90 14 {(top + bottom) / 2})"',
        ),
        _text(left + 6, bottom + 16, str(min(xs))),
        _text(right - 6, bottom + 16, str(max(xs))),
    ]
    for tick in y_ticks:
        y = sy * tick + oy
        body.append(f'<line x1="{left - 3}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" '
                    'stroke="#eee"/>')
        body.append(_text(left - 6, y + 4, _tick_text(tick, y_ticks), anchor="end"))
    for i, p in enumerate(points):
        dy = ((i * 7919) % 101 / 100.0 - 0.5) * jitter
        cy = min(max(sy * p.score + oy + dy, top + 2), bottom - 2)
        body.append(
            f'<circle class="point" cx="{sx * p.length + ox:.1f}" '
            f'cy="{cy:.1f}" r="2" fill="{_BLUE}" fill-opacity="0.45"/>'
        )
    return _svg(right + 20, bottom + 40, body, "length-scatter", "Score versus length")


def bias_bars(bars: Sequence[tuple[str, Stat]]) -> str:
    """Horizontal bars on [0, 1] with interval whiskers (position-bias rates).

    The label column is as wide as the longest label, so none is clipped.
    """
    names = [f"{name} (n={stat.n})" for name, stat in bars]
    left, top, row_h = _label_room(names, 120), 20, 30
    right = left + 350
    height = top + row_h * len(bars) + 40
    slope, offset = _scale(0.0, 1.0, left, right)
    body = [f'<line x1="{left}" y1="{top - 5}" x2="{left}" y2="{height - 35}" stroke="{_AXIS}"/>']
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        x = slope * tick + offset
        body.append(_text(x, height - 20, num(tick, 2)))
    for i, (name, stat) in enumerate(bars):
        y = top + row_h * i
        body.append(_text(left - 8, y + row_h / 2 + 4, names[i], anchor="end"))
        if stat.defined:
            w = max(slope * min(max(stat.statistic, 0.0), 1.0), 0.5)
            body.append(
                f'<rect class="bar" x="{left}" y="{y + 5}" width="{w:.1f}" '
                f'height="{row_h - 10}" fill="{_BLUE}"><title>{escape(name)}: '
                f"{num(stat.statistic)}</title></rect>"
            )
        if math.isfinite(stat.ci_low) and math.isfinite(stat.ci_high):
            x1, x2 = slope * stat.ci_low + offset, slope * stat.ci_high + offset
            yc = y + row_h / 2
            body.append(
                f'<line class="ci" x1="{x1:.1f}" y1="{yc}" x2="{x2:.1f}" y2="{yc}" '
                f'stroke="#000" stroke-width="1.5"/>'
            )
    return _svg(right + 30, height, body, "position-bars", "Position-bias rates")


def reliability_diagram(bins: Sequence[Mapping[str, Any]]) -> str:
    """Accuracy against mean confidence per bin, on the unit square with its diagonal."""
    left, right, top, bottom = 60, 320, 20, 280
    sx, ox = _scale(0.0, 1.0, left, right)
    sy, oy = _scale(0.0, 1.0, bottom, top)
    body = [
        f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="{_AXIS}"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="{_AXIS}"/>',
        f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{top}" stroke="{_AXIS}" '
        'stroke-dasharray="4 3"/>',
        _text((left + right) / 2, bottom + 32, "judge's confidence"),
        _text(14, (top + bottom) / 2, "agrees with people",
              extra=f'transform="rotate(-90 14 {(top + bottom) / 2})"'),
        _text(left, bottom + 16, "0"), _text(right, bottom + 16, "1"),
        _text(left - 6, top + 4, "1", anchor="end"),
    ]
    total = sum(int(b.get("n", 0)) for b in bins) or 1
    for b in bins:
        conf, acc, n = float(b["confidence"]), float(b["accuracy"]), int(b["n"])
        radius = 3 + 12 * math.sqrt(n / total)
        body.append(
            f'<circle class="bin" cx="{sx * conf + ox:.1f}" cy="{sy * acc + oy:.1f}" '
            f'r="{radius:.1f}" fill="{_BLUE}" fill-opacity="0.6"><title>confidence '
            f"{num(conf)}, agreement {num(acc)}, n={n}</title></circle>"
        )
    return _svg(right + 20, bottom + 40, body, "reliability", "Reliability diagram")
