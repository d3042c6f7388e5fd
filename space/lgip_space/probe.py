"""The Probe tab: one image, one caption, its paraphrases and flips, scored by each chosen model."""
from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass
from typing import Callable

import gradio as gr
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from PIL import Image

from matplotlib import colormaps
from matplotlib.colors import to_hex

from lgip_dataset.errors import LGIPError
from lgip_dataset.perturb import Perturber, PerturbResult, Variant
from lgip_dataset.perturb.registry import CORE, FAMILIES, HARD, OPT_IN
from lgip_metric import stats
from lgip_metric.models import Encoder

KIND_COLORS = {"paraphrase": "#3b82f6", "flip": "#f97316"}
# the family groups a visitor picks from: the paper's (Table 1), the hard flips, the extended probes
EXTENDED = tuple(name for name in FAMILIES if name not in CORE + HARD + OPT_IN)
FAMILY_GROUPS = {"core": CORE, "hard": HARD, "extended": EXTENDED}
FAMILY_CHOICES = [(f"paper: {', '.join(CORE)}", "core"), (f"hard flips: {', '.join(HARD)}", "hard"),
                  (f"extended probes: {', '.join(EXTENDED)}", "extended")]
DEFAULT_FAMILIES = ("core", "hard")
# each family's edits in its own colour: the paper's light, the hard flips' strong, the extended probes' from tab20
TYPE_COLORS = {"template": "#93c5fd", "marker": "#a5b4fc", "object": "#fdba74", "color": "#f9a8d4", "count": "#fcd34d",
               "hard_object": "#ea580c", "hard_color": "#db2777", "hard_count": "#ca8a04",
               **{name: to_hex(colormaps["tab20"](i % 20)) for i, name in enumerate(EXTENDED)}}
HARD_NOTE = ("**Hard flips** (`hard_object`, `hard_color`, `hard_count`, strong colours) are chosen here from this "
             "one caption. The dataset's hard flips are chosen across the whole build (`lgip build`: one integer "
             "program over every caption, so that each word is removed as often as it is inserted and text alone "
             "sits at chance), so a dataset row of this caption may carry another hard flip, or none.")
TABLE_COLUMNS = ["model", "variant", "kind", "type", "text", "swap", "s(I,c)", "s(I,variant)", "delta", "verdict"]


@dataclass(frozen=True)
class Scored:
    """One model's similarities for the caption (``original``) and each variant (``variants``)."""

    model: str
    original: float
    variants: np.ndarray


def families_of(groups) -> tuple[str, ...]:
    """The family names of the chosen groups (:data:`FAMILY_GROUPS` keys), in registry order; a DataError
    naming the valid groups for an unknown one or none."""
    from lgip_dataset.errors import DataError

    unknown = [g for g in groups or () if g not in FAMILY_GROUPS]
    if unknown or not groups:
        raise DataError(f"families: {'unknown group ' + repr(unknown[0]) if unknown else 'none chosen'}; "
                        f"choose one or more of {', '.join(FAMILY_GROUPS)}")
    return tuple(name for name in FAMILIES if any(name in FAMILY_GROUPS[g] for g in groups))


@functools.lru_cache(maxsize=8)
def _perturber(families: tuple[str, ...]) -> Perturber:
    return Perturber(k_same=6, k_diff=6, families=families)


def perturb(caption: str, seed: int, groups=DEFAULT_FAMILIES) -> PerturbResult:
    """The caption's paraphrases and flips of the chosen family groups (the dataset's own engine, K_same =
    K_diff = 6; the hard flips chosen from this caption alone)."""
    return _perturber(families_of(groups)).perturb(caption, seed=seed)


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


def score_each(load: Callable[[str], Encoder], names: list[str], image: Image.Image, caption: str,
               result: PerturbResult) -> tuple[list[Scored], dict[str, str]]:
    """Each model's scores, and beside them the error of each model that could not be loaded or scored
    (``load`` raises ``gr.Error``): one model's failure leaves the others' results standing."""
    scores, failed = [], {}
    for name in names:
        try:
            scores.append(score(load(name), name, image, caption, result))
        except gr.Error as err:
            failed[name] = err.message
        except LGIPError as err:
            failed[name] = str(err)
    return scores, failed


def caption_metrics(scored: Scored, result: PerturbResult) -> dict:
    """This caption's E_inv, gap (E_sens) and PR over the paper's flips, over the hard flips (``hard``, when
    it has some) and per flip type, with counts.

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
    if stats.HARD in values:  # the hard flips' own block, beside the paper's
        hard = np.isin(summary.cell_stratum, stats.hard_columns(summary.strata))
        out["hard"] = {"gap": values[stats.HARD]["E_sens"], "PR": values[stats.HARD]["PR"],
                       "flips": _rows(values[stats.HARD], "PR"), "caught": int(summary.positive[hard].sum())}
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


def summary(scores: list[Scored], result: PerturbResult, labels: dict[str, str],
            failed: dict[str, str] | None = None) -> str:
    """Markdown: per model this caption's similarity, E_inv, gap and PR (with counts and per flip type); then
    each model of ``failed`` with its error."""
    lines = []
    if any("random" in label for label in labels.values()):
        lines.append("> ⚠️ **Random weights**: a model marked *random weights* was never trained; its numbers "
                     "only show that the pipeline runs and mean nothing.\n")
    if not result.flips:
        lines.append("> No word of the chosen families was found to flip in this caption, so gap and PR are "
                     "undefined.\n")
    lines += ["| model | s(I,c) | E_inv ↓ | gap ↑ | PR ↑ | hard flips: gap / PR | per flip type (gap / PR) |",
              "|---|---:|---:|---:|---:|---|---|"]
    for scored in scores:
        m = caption_metrics(scored, result)
        per_type = "; ".join(f"{t}: {_fmt(b['gap'])} / {_fmt(b['PR'], 2)}" for t, b in m["per_type"].items())
        hard = (f"{_fmt(m['hard']['gap'])} / {_fmt(m['hard']['PR'], 2)} ({m['hard']['caught']}/{m['hard']['flips']} "
                "caught)" if "hard" in m else "—")
        lines.append(
            f"| {labels[scored.model]} | {scored.original:.4f} | {_fmt(m['E_inv'])} ({m['paraphrases']} para.) | "
            f"{_fmt(m['gap'])} | {_fmt(m['PR'], 2)} ({m['caught']}/{m['flips']} caught) | {hard} | {per_type or '—'} |"
        )
    lines += [f"\n> ❌ **{name}** could not be scored: {error}" for name, error in (failed or {}).items()]
    lines.append("\nFor this one caption: E_inv = mean |s(I,c) − s(I,c′)| over its paraphrases; gap = mean "
                 "s(I,c) − s(I,c†) over its flips (the paper's; the hard flips in their own column); PR = share of "
                 "flips scored below the caption (a tie counts as missed).")
    return "\n".join(lines)


def _fmt(value: float | None, digits: int = 4) -> str:
    return "—" if value is None else f"{value:.{digits}f}"
