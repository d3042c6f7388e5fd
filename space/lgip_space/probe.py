"""The Probe tab: one image, one caption, its paraphrases and flips, scored by each chosen model."""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from PIL import Image

from lgip_dataset.perturb import Perturber, PerturbResult, Variant
from lgip_metric import stats
from lgip_metric.models import Encoder

KIND_COLORS = {"paraphrase": "#3b82f6", "flip": "#f97316"}
TYPE_COLORS = {"template": "#93c5fd", "marker": "#a5b4fc", "object": "#fdba74", "color": "#f9a8d4", "count": "#fcd34d"}
TABLE_COLUMNS = ["model", "variant", "kind", "type", "text", "swap", "s(I,c)", "s(I,variant)", "delta", "verdict"]
PERTURBER = Perturber(k_same=6, k_diff=6)


@dataclass(frozen=True)
class Scored:
    """One model's similarities for the caption (``original``) and each variant (``variants``)."""

    model: str
    original: float
    variants: np.ndarray


def perturb(caption: str, seed: int) -> PerturbResult:
    """The caption's paraphrases and flips (the dataset's own engine, K_same = K_diff = 6)."""
    return PERTURBER.perturb(caption, seed=seed)


def variants(result: PerturbResult) -> list[Variant]:
    """Paraphrases, then flips: the order of every output."""
    return [*result.paraphrases, *result.flips]


def variant_names(result: PerturbResult) -> list[str]:
    """Short names: P1..Pn for paraphrases, F1..Fm for flips."""
    return [f"P{i + 1}" for i in range(len(result.paraphrases))] + [f"F{i + 1}" for i in range(len(result.flips))]


def similarities(encoder: Encoder, image: Image.Image, texts: list[str]) -> np.ndarray:
    """cos(f_img(image), f_text(t)) for every text, with the model's own preprocessing."""
    return (encoder.embed_texts(texts).double() @ encoder.embed_images([image])[0].double()).numpy()


def score(encoder: Encoder, model: str, image: Image.Image, caption: str, result: PerturbResult) -> Scored:
    """Score the caption and all its variants in one text batch."""
    sims = similarities(encoder, image, [caption, *(v.text for v in variants(result))])
    return Scored(model, float(sims[0]), sims[1:])


def caption_metrics(scored: Scored, result: PerturbResult) -> dict:
    """This caption's E_inv, gap (E_sens) and PR, globally and per flip type, with counts.

    ``lgip_metric.stats`` on the caption's rows as its only (image, caption) pair: mean |s - s'|
    over the paraphrases, mean s - s† and the share of s > s† (a tie is not positive) over the
    flips; None where the caption has no variant of that kind.
    """
    rows = variants(result)
    if not rows:  # a caption too short to paraphrase or flip (e.g. one word)
        return {"E_inv": None, "paraphrases": 0, "gap": None, "PR": None, "flips": 0, "caught": 0, "per_type": {}}
    one_pair = np.zeros(len(rows), dtype=np.int64)  # the same caption id and image id on every row
    summary = stats.summarize(np.full(len(rows), scored.original), scored.variants, [v.kind for v in rows],
                              [v.type for v in rows], one_pair, one_pair)
    values = stats.statistics(summary, bootstrap=0, require_both_kinds=False)
    flips = np.isin(summary.cell_stratum, stats.headline_columns(summary.strata, stats.FLIP))  # the pair's cells
    out = {"E_inv": values["E_inv"], "paraphrases": _rows(values, "E_inv"), "gap": values["E_sens"],
           "PR": values["PR"], "flips": _rows(values, "PR"), "caught": int(summary.positive[flips].sum()),
           "per_type": {}}
    for type_, block in values["per_type"].items():
        if block["kind"] == stats.FLIP:
            out["per_type"][type_] = {"gap": block["E_sens"], "PR": block["PR"]}
    return out


def _rows(block: dict, metric: str) -> int:
    return block["counts"][metric]["variant_rows"] if metric in block["counts"] else 0


def highlight(result: PerturbResult) -> list[tuple[str, str | None]]:
    """HighlightedText segments: one line per variant, its changed words labelled with the variant type."""
    caption_words = _words(result.caption)
    segments: list[tuple[str, str | None]] = []
    for name, variant in zip(variant_names(result), variants(result)):
        segments.append((f"{name}  ", None))
        words = _words(variant.text)
        matcher = difflib.SequenceMatcher(a=[_key(w) for w in caption_words], b=[_key(w) for w in words], autojunk=False)
        for op, _, _, j1, j2 in matcher.get_opcodes():
            segments.append(("".join(words[j1:j2]), None if op == "equal" else variant.type))
        segments.append(("\n", None))
    return [(text, label) for text, label in segments if text]


def _words(text: str) -> list[str]:
    return re.findall(r"\s+|[^\s]+", text)


def _key(word: str) -> str:
    """Compare words ignoring case and trailing punctuation (paraphrases re-case and re-punctuate)."""
    return word.lower().rstrip(".,;:!?")


def table(scores: list[Scored], result: PerturbResult, labels: dict[str, str]) -> pd.DataFrame:
    """One row per (model, variant): both similarities, the difference and whether the model reacted right."""
    rows = []
    for scored in scores:
        for name, variant, s in zip(variant_names(result), variants(result), scored.variants):
            delta = float(s - scored.original)
            if variant.kind == "flip":
                verdict = "caught (s(I,c) > s(I,flip))" if scored.original > s else "missed"
            else:
                verdict = f"|delta| = {abs(delta):.4f}"
            swap = f"{variant.original} → {variant.replacement}" if variant.kind == "flip" else ""
            rows.append([labels[scored.model], name, variant.kind, variant.type, variant.text, swap,
                         round(scored.original, 4), round(float(s), 4), round(delta, 4), verdict])
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def chart(scores: list[Scored], result: PerturbResult, labels: dict[str, str]):
    """One panel per model: each variant's similarity drawn from the original's (dashed line)."""
    names = variant_names(result)
    kinds = [v.kind for v in variants(result)]
    fig = Figure(figsize=(4.6 * len(scores) + 1.2, 0.38 * len(names) + 1.6))  # no pyplot: nothing kept globally
    axes = fig.subplots(1, len(scores), sharey=True, squeeze=False)
    for ax, scored in zip(axes[0], scores):
        y = np.arange(len(names))[::-1]
        for yi, kind, s in zip(y, kinds, scored.variants):
            ax.plot([scored.original, s], [yi, yi], color=KIND_COLORS[kind], lw=2, alpha=0.6)
            missed = kind == "flip" and s >= scored.original
            ax.plot(s, yi, "o", color="#dc2626" if missed else KIND_COLORS[kind], ms=7)
        ax.axvline(scored.original, color="#374151", ls="--", lw=1.2)
        ax.set_yticks(y, [f"{n} {v.type}" for n, v in zip(names, variants(result))])
        ax.set_xlabel(f"similarity (original s(I,c) = {scored.original:.4f}, dashed)")
        ax.set_title(labels[scored.model], fontsize=10, color="#b91c1c" if "random" in labels[scored.model] else "black")
        ax.margins(x=0.15)
        ax.grid(axis="x", alpha=0.3)
    handles = [Line2D([], [], marker="o", ls="-", color=c, label=k) for k, c in KIND_COLORS.items()]
    handles.append(Line2D([], [], marker="o", ls="", color="#dc2626", label="flip not below the original"))
    fig.legend(handles=handles, loc="lower center", ncol=3, frameon=False, fontsize=9)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def summary(scores: list[Scored], result: PerturbResult, labels: dict[str, str]) -> str:
    """Markdown: per model this caption's similarity, E_inv, gap and PR (with counts and per flip type)."""
    lines = []
    if any("random" in label for label in labels.values()):
        lines.append("> ⚠️ **Random weights**: a model marked *random weights* was never trained; its numbers "
                     "only show that the pipeline runs and mean nothing.\n")
    if not result.flips:
        lines.append("> No object, color or count word was found to flip in this caption, so gap and PR are "
                     "undefined.\n")
    lines += ["| model | s(I,c) | E_inv ↓ | gap ↑ | PR ↑ | per flip type (gap / PR) |",
              "|---|---:|---:|---:|---:|---|"]
    for scored in scores:
        m = caption_metrics(scored, result)
        per_type = "; ".join(f"{t}: {_fmt(b['gap'])} / {_fmt(b['PR'], 2)}" for t, b in m["per_type"].items())
        lines.append(
            f"| {labels[scored.model]} | {scored.original:.4f} | {_fmt(m['E_inv'])} ({m['paraphrases']} para.) | "
            f"{_fmt(m['gap'])} | {_fmt(m['PR'], 2)} ({m['caught']}/{m['flips']} caught) | {per_type or '—'} |"
        )
    lines.append("\nFor this one caption: E_inv = mean |s(I,c) − s(I,c′)| over its paraphrases; gap = mean "
                 "s(I,c) − s(I,c†) over its flips; PR = share of flips scored below the caption "
                 "(a tie counts as missed).")
    return "\n".join(lines)


def _fmt(value: float | None, digits: int = 4) -> str:
    return "—" if value is None else f"{value:.{digits}f}"
