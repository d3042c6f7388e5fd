"""The LGIP metric's own Space: upload scores as CSV or JSON, get E_inv, E_sens and PR.

``evaluate``'s ``launch_gradio_widget`` does not run on Gradio 4+, so this small app takes its
place. It loads the module script beside it with ``evaluate.load`` (``lgip_metric.py`` in a
checkout, ``<space name>.py`` on the Hub, where ``evaluate.load("ORG/NAME")`` finds it), so the
numbers are exactly what ``evaluate.load(...).compute`` returns. Run it with ``python app.py``.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import evaluate
import gradio as gr
import pandas as pd

HERE = Path(__file__).resolve().parent
INPUTS = ("original_scores", "variant_scores", "variant_kinds", "variant_types", "caption_ids", "image_ids")
# the column names of `lgip score`'s scores.parquet, accepted as the same inputs
ALIASES = {"s_original": "original_scores", "s_variant": "variant_scores", "kind": "variant_kinds",
           "type": "variant_types", "caption_id": "caption_ids", "image_id": "image_ids"}
MAX_BYTES = 200 * 1024 * 1024
MAX_BOOTSTRAP = 10_000
EXAMPLE = pd.DataFrame({
    "original_scores": [0.31, 0.31, 0.31, 0.28, 0.28],
    "variant_scores": [0.30, 0.25, 0.33, 0.28, 0.21],
    "variant_kinds": ["paraphrase", "flip", "flip", "paraphrase", "flip"],
    "variant_types": ["template", "object", "color", "marker", "count"],
    "caption_ids": ["c1", "c1", "c1", "c2", "c2"],
    "image_ids": [139, 139, 139, 285, 285],
})


def module_script() -> Path:
    """The metric script beside this app: named after the Space on the Hub, after the folder here."""
    names = [os.environ.get("SPACE_ID", "").split("/")[-1], HERE.name]
    for name in names:
        if name and (HERE / f"{name}.py").is_file():
            return HERE / f"{name}.py"
    raise FileNotFoundError(f"no metric script ({' or '.join(f'{n}.py' for n in names if n)}) beside {__file__}")


def read_scores(path: str | Path) -> pd.DataFrame:
    """The uploaded table with the metric's input columns; ``gr.Error`` naming what is wrong."""
    path = Path(path)
    if path.stat().st_size > MAX_BYTES:
        raise gr.Error(f"{path.name} is larger than {MAX_BYTES // 2**20} MB.")
    suffix = path.suffix.lower()
    try:
        if suffix in (".json", ".jsonl"):
            frame = pd.read_json(path, lines=suffix == ".jsonl")
        else:
            frame = pd.read_csv(path)
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as err:
        raise gr.Error(f"{path.name} could not be read as {suffix[1:].upper() or 'CSV'}: {err}") from None
    frame = frame.rename(columns={k: v for k, v in ALIASES.items() if k in frame and v not in frame})
    missing = [c for c in INPUTS if c not in frame]
    if missing:
        raise gr.Error(f"{path.name} lacks the column(s) {', '.join(missing)}; expected {', '.join(INPUTS)} "
                       f"(or scores.parquet's {', '.join(ALIASES)}); found {', '.join(map(str, frame.columns))}.")
    return frame[list(INPUTS)]


def summary(results: dict) -> tuple[str, pd.DataFrame]:
    """Markdown headline and a per-type table of a ``compute`` result."""
    lines = [f"**Averaging:** {results['averaging']}", "",
             "| metric | value | 95% interval | base pairs | rows | images |", "|---|---:|---|---:|---:|---:|"]
    for metric in ("E_inv", "E_sens", "PR"):
        if results[metric] is None:  # no row of its kind: the reason instead of a number
            lines.append(f"| {metric} | — | {results['absent'][metric]} | 0 | 0 | 0 |")
            continue
        low_high = results.get("intervals", {}).get(metric)
        counts = results["counts"][metric]
        interval = f"[{low_high[0]:.4f}, {low_high[1]:.4f}]" if low_high else "—"
        lines.append(f"| {metric} | {results[metric]:.4f} | {interval} | {counts['base_pairs']:,} | "
                     f"{counts['variant_rows']:,} | {counts['images']:,} |")
    rows = [{"type": name, "kind": block["kind"], **{m: block.get(m) for m in ("E_inv", "E_sens", "PR")},
             "rows": max(c["variant_rows"] for c in block["counts"].values())}
            for name, block in results["per_type"].items()]
    return "\n".join(lines), pd.DataFrame(rows).round(4)


def build_demo() -> gr.Blocks:
    """The app: a scores file and options in, the statistics (table and raw JSON) out."""
    metric = evaluate.load(str(module_script()))

    def compute(path, pair_level, bootstrap, seed):
        if not path:
            raise gr.Error("Upload a CSV or JSON file of scores first.")
        if not 0 <= int(bootstrap) <= MAX_BOOTSTRAP:
            raise gr.Error(f"Bootstrap resamples must be between 0 and {MAX_BOOTSTRAP:,}.")
        frame = read_scores(path)
        try:
            results = metric.compute(**{c: frame[c].tolist() for c in INPUTS}, pair_level=bool(pair_level),
                                     bootstrap=int(bootstrap), seed=int(seed))
        except ValueError as err:
            raise gr.Error(f"The scores were refused: {err}") from None
        return (*summary(results), results)

    def example():
        path = Path(tempfile.mkdtemp(prefix="lgip-metric-")) / "example_scores.csv"
        EXAMPLE.to_csv(path, index=False)
        return str(path)

    with gr.Blocks(title="LGIP metric", analytics_enabled=False) as demo:
        gr.Markdown("# LGIP metric\nUpload one row per (image, caption, variant) with the columns "
                    f"`{'`, `'.join(INPUTS)}` as CSV or JSON (the column names of `lgip score`'s scores file work "
                    "too). You get E_inv (↓), E_sens and PR (↑) with counts and image-bootstrap intervals, globally "
                    "and per variant type: exactly `evaluate.load(\"lgip\").compute(...)`.")
        with gr.Row():
            upload = gr.File(label="Scores (.csv, .json, .jsonl)", file_types=[".csv", ".json", ".jsonl"])
            with gr.Column():
                pair_level = gr.Checkbox(label="Pair-level average (every row weighted equally)", value=False)
                bootstrap = gr.Number(value=1000, precision=0, label="Bootstrap resamples (0 = no intervals)")
                seed = gr.Number(value=0, precision=0, label="Bootstrap seed")
                with gr.Row():
                    load_example = gr.Button("Load the example")
                    go = gr.Button("Compute", variant="primary")
        headline = gr.Markdown()
        per_type = gr.Dataframe(label="Per variant type", interactive=False)
        raw = gr.JSON(label="compute() output")
        load_example.click(example, None, upload, api_visibility="private")
        go.click(compute, [upload, pair_level, bootstrap, seed], [headline, per_type, raw], api_name="compute")
    return demo


if __name__ == "__main__":
    build_demo().queue(default_concurrency_limit=2).launch()
