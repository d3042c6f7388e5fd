"""Plots of ``lgip analyze``: the strongest associations and the outcomes per variant type (PNG)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import pandas as pd  # noqa: E402

from lgip_metric.statistics.analysis import OUTCOMES  # noqa: E402
from lgip_dataset.files.atomic import atomic_path  # noqa: E402


def _save(fig, path: Path) -> Path:
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", bbox_inches="tight")
    plt.close(fig)
    return path


def plot_effects(tests: pd.DataFrame, path: Path) -> Path:
    """Horizontal bars of the tests' effects (significant ones filled), strongest first."""
    fig, ax = plt.subplots(figsize=(7, 0.3 * len(tests) + 1.5), dpi=130)
    labels = [f"{r.outcome} ~ {r.feature}{'=' + str(r.level) if r.level != '' else ''} ({r.test})"
              for r in tests.itertuples()]
    colors = ["tab:blue" if s else "0.75" for s in tests["significant"]]
    ax.barh(range(len(tests)), tests["effect"], color=colors)
    ax.set_yticks(range(len(tests)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.axvline(0, color="0.3", linewidth=0.8)
    ax.set_xlabel("effect: r (Pearson/Spearman) or mean difference group − rest (Welch t)")
    ax.set_title("Strongest associations (blue: BH q below alpha)", fontsize=9)
    return _save(fig, path)


def plot_outcomes(frame: pd.DataFrame, path: Path) -> Path:
    """Box plots of the flip gap and the invariance error per variant type."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), dpi=130)
    for ax, (kind, outcome) in zip(axes, OUTCOMES.items()):
        part = frame[frame["kind"] == kind]
        types = sorted(part["type"].unique())
        ax.boxplot([part.loc[part["type"] == t, outcome] for t in types], showfliers=False)
        ax.set_xticks(range(1, len(types) + 1), types, rotation=30, fontsize=7)
        ax.set_title(f"{outcome} by {kind} type", fontsize=9)
    return _save(fig, path)
