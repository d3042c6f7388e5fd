"""The invariance-sensitivity frontier (the paper's Figure 2) as PNG and SVG."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.text import Text  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

from lgip_metric.statistics import reference  # noqa: E402
from lgip_dataset.files.atomic import atomic_path  # noqa: E402
from lgip_metric.results.provenance import RANDOM_MARK  # noqa: E402
from lgip_metric.results.record import Results  # noqa: E402
from lgip_metric.stats import interval_label  # noqa: E402


def pareto_front(points: list[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point dominates (lower x = E_inv and higher y = E_sens are
    better), ordered by x."""
    front = [
        i for i, (x, y) in enumerate(points)
        if not any(x2 <= x and y2 >= y and (x2, y2) != (x, y) for x2, y2 in points)
    ]
    return sorted(front, key=lambda i: points[i])


def _errors(value: float, interval) -> list[float]:
    """The error bar's lengths below and above ``value``; a percentile interval of few resamples may not hold
    the point estimate, and then the bar on that side has no length (matplotlib refuses negative ones)."""
    return [max(0.0, value - interval[0]), max(0.0, interval[1] - value)] if interval else [0.0, 0.0]


# No creation date in the files, so a rerun writes the same bytes (matplotlib stamps SVGs by default).
_NO_DATE = {"png": {}, "svg": {"Date": None}}
_OFFSETS = [(9, 6), (9, -14), (-9, 6), (-9, -14), (11, -3), (-11, -3), (0, 13), (0, -19), (16, 16), (16, -24),
            (-16, 16), (-16, -24), (24, -3), (-24, -3)]
RING = 15  # marker size (points) of the rings round the Pareto front's points


def _area(a: Bbox, b: Bbox) -> float:
    """Area of the intersection of two boxes."""
    return max(0.0, min(a.x1, b.x1) - max(a.x0, b.x0)) * max(0.0, min(a.y1, b.y1) - max(a.y0, b.y0))


def _place_labels(ax, labels: list[tuple[str, float, float, dict]], ringed=()) -> dict[str, Bbox]:
    """Annotate points, choosing per label the offset whose box overlaps the placed ones (markers,
    the rings of ``ringed`` points, earlier labels) least; return each label's box (display units)."""
    renderer = ax.figure.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    markers = ax.transData.transform([(x, y) for _, x, y, _ in labels])
    ring = RING * ax.figure.dpi / 72 / 2
    placed = [Bbox.from_extents(px - 5, py - 5, px + 5, py + 5) for px, py in markers]
    placed += [Bbox.from_extents(px - ring, py - ring, px + ring, py + ring)
               for px, py in ax.transData.transform(list(ringed))] if ringed else []
    boxes = {}
    for text, x, y, style in labels:
        best = None
        for dx, dy in _OFFSETS:
            note = ax.annotate(text, (x, y), textcoords="offset points", xytext=(dx, dy),
                               ha="left" if dx >= 0 else "right", va="center",
                               arrowprops={"arrowstyle": "-", "color": "0.65", "linewidth": 0.6, "shrinkA": 1,
                                           "shrinkB": 4}, **style)
            note.update_positions(renderer)
            box = Text.get_window_extent(note, renderer).expanded(1.05, 1.1)  # the words, not the leader line
            outside = box.width * box.height - _area(box, frame)
            overlap = sum(_area(box, b) for b in placed) + 10 * outside
            if best is None or overlap < best[0]:
                if best:
                    best[1].remove()
                best = (overlap, note, box)
            else:
                note.remove()
            if overlap == 0:
                break
        placed.append(best[2])
        boxes[text] = Text.get_window_extent(best[1], renderer)
    return boxes


def _draw_front(ax, points, label: str, **style) -> list[tuple[float, float]]:
    """Ring the front's points and join them (a single undominated point gets a ring only); the legend
    shows a line through a small ring. Returns the ringed points."""
    front = [points[i] for i in pareto_front(points)]
    ax.plot(*zip(*front), marker="o", markersize=RING, markerfacecolor="none", **style)
    ax.plot([], [], marker="o", markersize=6, markerfacecolor="none", label=label, **style)  # the legend's symbol
    return front


def frontier(results: list[Results], out_dir: Path, paper: bool) -> list[Path]:
    """Draw models at (E_inv, E_sens) with bootstrap error bars and the Pareto front; write PNG and SVG.

    With no measured ``results``, only the paper's quoted points are drawn (``paper`` must be True).
    """
    if not results and not paper:
        raise ValueError("frontier needs at least one results file or the paper's reference rows")
    return frontier_layout(results, out_dir, paper)[0]


def frontier_layout(results: list[Results], out_dir: Path, paper: bool) -> tuple[list[Path], dict[str, Bbox]]:
    """:func:`frontier`, also returning where each point's label went (display units), for checks."""
    with plt.rc_context({"svg.fonttype": "none"}):  # SVG keeps labels as searchable, editable text
        return _frontier(results, out_dir, paper)


def _frontier(results: list[Results], out_dir: Path, paper: bool) -> tuple[list[Path], dict[str, Bbox]]:
    fig, ax = plt.subplots(figsize=(7.5, 5.5), dpi=150)
    points = [(r.statistics["E_inv"], r.statistics["E_sens"]) for r in results]
    labels = [(r.label, x, y, {"fontsize": 8, "zorder": 4}) for r, (x, y) in zip(results, points)]
    for r, (x, y) in zip(results, points):
        intervals = r.statistics.get("intervals", {})
        ax.errorbar(
            x, y,
            xerr=[[e] for e in _errors(x, intervals.get("E_inv"))],
            yerr=[[e] for e in _errors(y, intervals.get("E_sens"))],
            fmt="X" if r.random_weights else "o", color="tab:red" if r.random_weights else "tab:blue",
            markersize=8, capsize=3, elinewidth=1, zorder=3,
        )
    trained = [p for r, p in zip(results, points) if not r.random_weights]  # random weights are no frontier
    ringed = []
    if trained:
        ringed += _draw_front(ax, trained, "Pareto front (measured, trained weights)", color="tab:blue",
                              linewidth=1.5, zorder=2)
        levels = sorted({interval_label(r.statistics["bootstrap"]["confidence"]) for r in results})
        ax.plot([], [], "o", color="tab:blue", label=f"measured ({' / '.join(levels)}, bootstrap over images)")
    if paper:
        quoted = reference.table1()
        paper_points = [(row["E_inv"], row["E_sens"]) for row in quoted]
        ax.scatter(*zip(*paper_points), marker="s", facecolors="none", edgecolors="0.45",
                   label=reference.LABEL, zorder=2)
        labels += [(row["model"], x, y, {"fontsize": 6.5, "color": "0.4"}) for row, (x, y) in zip(quoted, paper_points)]
        ringed += _draw_front(ax, paper_points, f"Pareto front, {reference.LABEL}", color="0.55", linestyle="--",
                              linewidth=1)
    if any(r.random_weights for r in results):
        ax.plot([], [], "X", color="tab:red", label=f"{RANDOM_MARK}: meaningless numbers")
    ax.axhline(0.0, color="0.8", linewidth=0.8, zorder=1)
    ax.set_xlabel("invariance error $E_{inv}$ (lower is better)")
    ax.set_ylabel("semantic sensitivity $E_{sens}$ (higher is better)")
    averaging = f"{results[0].data['averaging']} averaging" if results else reference.LABEL
    ax.set_title(f"LGIP invariance–sensitivity frontier ({averaging}; better = up and left)", fontsize=10)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, frameon=False)
    ax.grid(alpha=0.3)
    ax.margins(x=0.08, y=0.12)  # room for the labels of the outermost points
    fig.tight_layout()
    fig.set_layout_engine("none")  # laid out once: no format redraws the figure to lay it out again
    label_boxes = _place_labels(ax, labels, ringed)
    # The tight box once for both formats, as savefig's "tight" finds it, which draws the figure again per format
    tight = fig.get_tightbbox(fig.canvas.get_renderer()).padded(plt.rcParams["savefig.pad_inches"])
    paths = []
    for suffix in ("png", "svg"):
        path = out_dir / f"frontier.{suffix}"
        with atomic_path(path) as tmp, plt.rc_context({"svg.hashsalt": "lgip"}):  # same ids every run
            fig.savefig(tmp, format=suffix, bbox_inches=tight, metadata=_NO_DATE[suffix])
        paths.append(path)
    plt.close(fig)
    return paths, label_boxes
