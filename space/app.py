"""LGIP Space: does a CLIP-style model's image-text score survive paraphrases and catch semantic flips?

Three tabs: **Probe** (one image and caption, its paraphrases and flips, scored by chosen models; a model
that cannot load is named beside the others' results), **Leaderboard** (shipped results files and the runs
of ``$LGIP_SPACE_RUNS`` beside the paper's quoted rows, with the frontier plot) and
**Run** (``lgip evaluate`` on the embedded sample or the first N rows of the Hub dataset).

Run locally from a checkout (``pip install -e .`` first)::

    python space/app.py                              # the paper's models (weights from the Hub)
    LGIP_SPACE_EXTRA_MODELS=tiny-clip python space/app.py   # + a tiny random-weight model, offline

``build_demo()`` builds the app without launching it (tests launch it on localhost).
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the helper package sits beside this file
    sys.path.insert(0, str(HERE))

import gradio as gr  # noqa: E402
from huggingface_hub import SpaceCard  # noqa: E402

from lgip_dataset import SAMPLE_DIR  # noqa: E402
from lgip_dataset.errors import LGIPError  # noqa: E402
from lgip_space import guards, hub_subset, leaderboard, probe, runner  # noqa: E402
from lgip_space.models import ModelPool, gpu  # noqa: E402
from lgip_space.sample import Sample  # noqa: E402

EXTRA_MODELS_ENV = "LGIP_SPACE_EXTRA_MODELS"
CONCURRENCY = 2
SAMPLE_SOURCE, HUB_SOURCE = "embedded sample", "Hub dataset (first N rows)"
INTRO = """# LGIP: Language-Guided Invariance Probing
A good vision-language model gives an image and its caption **the same score under a paraphrase**
("a photo of …", "… in the scene") and **a lower score when one word changes the meaning**
(an object, a color or a count). Pick an image and a caption and see what your model does: the paper's
families and the hard flips (a word that fits the caption's context) by default, the extended probes on request."""


def default_dataset() -> str:
    """The Hub dataset this Space is published with (the README's ``datasets:``)."""
    return SpaceCard.load(HERE / "README.md").data.datasets[0]


def build_demo(extra_models=(), sample_dir=SAMPLE_DIR, results_dir=leaderboard.RESULTS_DIR, runs_dir=None) -> gr.Blocks:
    """The Gradio app. ``extra_models`` adds names (e.g. ``tiny-clip``) to the paper models' allow-list;
    ``runs_dir`` (default: ``$LGIP_SPACE_RUNS``) is a folder of run folders the Leaderboard shows beside
    ``results_dir``'s files."""
    runs = runs_dir or os.environ.get(leaderboard.RUNS_ENV)
    runs_dir = Path(runs) if runs else None
    pool = ModelPool(extra_models)
    sample = Sample(sample_dir)
    runs_root = Path(tempfile.gettempdir()) / "lgip-space-runs"

    def pick_sample(image_id):
        image_id = guards.check_sample_id(image_id, sample.ids)
        captions = sample.captions(image_id)
        return (sample.image(image_id), gr.update(choices=captions, value=captions[0]), captions[0],
                f"COCO val2017 {sample.credit(image_id)}")

    def select_from_gallery(evt: gr.SelectData):
        return sample.ids[evt.index]

    @gpu(duration=60)
    def run_probe(image, caption, models, seed, families):
        image = guards.check_image(image)
        caption = guards.check_caption(caption)
        names = pool.check(models)
        try:
            result = probe.perturb(caption, guards.check_seed(seed), families)
        except LGIPError as err:
            raise gr.Error(f"Families refused: {err}") from None
        scores, failed = probe.score_each(pool.get, names, image, caption, result)
        if not scores:
            raise gr.Error(" ".join(failed.values()))
        labels = {one.model: pool.label(one.model) for one in scores}
        return (probe.highlight(result), probe.summary(scores, result, labels, failed),
                probe.chart(scores, result, labels), probe.table(scores, result, labels))

    def show_leaderboard():
        shipped = leaderboard.load_shipped(results_dir, runs_dir)
        return leaderboard.notes(shipped), leaderboard.table(shipped), leaderboard.frontier_png(shipped)

    @gpu(duration=300)
    def run_benchmark(model, source, dataset_id, rows, progress=gr.Progress(track_tqdm=True)):
        name = pool.check([model])[0]
        source = guards.check_choice(source, (SAMPLE_SOURCE, HUB_SOURCE), "Data")
        out = runner.new_run_dir(runs_root)
        if source == HUB_SOURCE:
            dataset_id, rows = guards.check_hub_source(dataset_id, rows)
            progress(0, desc=f"reading the first {rows:,} rows of {dataset_id}")
            dataset = hub_subset.first_rows(dataset_id, rows, out / f"{dataset_id.replace('/', '--')}-first{rows}")
            label = f"the first {rows:,} rows of {dataset_id}"
        else:
            dataset, label = sample_dir, "the embedded sample (COCO val2017, CC BY / CC BY-SA images)"
        progress(0, desc=f"loading {name} and scoring")
        try:
            results = runner.evaluate_model(name, dataset, out / "run")
        except LGIPError as err:
            raise gr.Error(f"The run failed: {err}") from None
        return (runner.headline(results, label), leaderboard.table([results]), str(results.path),
                str(out / "run" / "report" / "frontier.png"))

    notes, board, frontier = show_leaderboard()
    with gr.Blocks(title="LGIP: language-guided invariance probing", delete_cache=(3600, 3600),
                   analytics_enabled=False) as demo:
        gr.Markdown(INTRO)
        with gr.Tab("Probe"):
            with gr.Row():
                with gr.Column(scale=2):
                    image = guards.guard_uploads(gr.Image(
                        label="Image (upload one, or pick a sample below)", height=300, sources=["upload", "clipboard"],
                        type="pil", image_mode="RGB", format="png"))  # png: a picked sample round-trips losslessly
                    credit = gr.Markdown(label="Image credit")
                    picker = gr.Dropdown(choices=sample.choices(), value=None, label="Sample image")
                    gallery = gr.Gallery(value=sample.thumbnails(), columns=8, height=190, allow_preview=False,
                                         label="Embedded sample: click an image", elem_id="sample-gallery")
                with gr.Column(scale=3):
                    caption = gr.Textbox(label="Caption", elem_id="caption", max_lines=3,
                                         max_length=guards.MAX_CAPTION_CHARS,
                                         placeholder="e.g. two brown dogs playing with a red frisbee")
                    human = gr.Radio(choices=[], label="…or pick one of the image's human captions")
                    models = gr.Dropdown(choices=pool.choices(), value=[pool.allowed[0]], multiselect=True,
                                         label="Models (loaded on first use)")
                    families = gr.CheckboxGroup(choices=probe.FAMILY_CHOICES, value=list(probe.DEFAULT_FAMILIES),
                                                label="Families", elem_id="families")
                    seed = gr.Number(value=0, precision=0, label="Perturbation seed")
                    go = gr.Button("Probe", variant="primary", elem_id="probe-button")
            with gr.Row():
                variants = gr.HighlightedText(label="Paraphrases (P) and flips (F): changed words highlighted by type",
                                              color_map=probe.TYPE_COLORS, show_legend=True, combine_adjacent=True,
                                              elem_id="variants", scale=3)
                gr.Markdown(probe.HARD_NOTE, elem_id="hard-note")
            summary = gr.Markdown(label="Per-model summary", elem_id="probe-summary")
            chart = gr.Plot(label="Similarity of each variant against the caption's (dashed)", elem_id="probe-chart")
            scores = gr.Dataframe(label="Scores", interactive=False, wrap=True)
        with gr.Tab("Leaderboard"):
            board_notes = gr.Markdown(notes, label="Leaderboard notes")
            board_table = gr.Dataframe(value=board, interactive=False, pinned_columns=1,
                                       label="LGIP leaderboard (click a header to sort)")
            board_plot = gr.Image(value=frontier, label="Invariance–sensitivity frontier", type="filepath",
                                  interactive=False, visible=frontier is not None)
            refresh = gr.Button("Reload results")
        with gr.Tab("Run"):
            gr.Markdown("Run the whole benchmark (`lgip evaluate`) for one model and download `results.json`.")
            with gr.Row():
                run_model = gr.Dropdown(choices=pool.choices(), value=pool.allowed[0], label="Model")
                source = gr.Radio(choices=[SAMPLE_SOURCE, HUB_SOURCE], value=SAMPLE_SOURCE, label="Data")
                dataset_id = gr.Textbox(value=default_dataset(), label="Hub dataset id")
                rows = gr.Number(value=500, precision=0, minimum=1, maximum=guards.MAX_HUB_ROWS, label="First N rows")
            start = gr.Button("Run benchmark", variant="primary")
            run_summary = gr.Markdown(label="Run summary")
            run_table = gr.Dataframe(label="This run beside the paper's quoted rows", interactive=False,
                                     pinned_columns=1)
            with gr.Row():
                run_plot = gr.Image(label="Frontier: this run and the paper's quoted models", type="filepath",
                                    interactive=False)
                run_file = gr.File(label="results.json")

        picker.change(pick_sample, picker, [image, human, caption, credit], api_name="sample")
        gallery.select(select_from_gallery, None, picker, api_visibility="private")
        human.change(lambda text: text, human, caption, api_visibility="private")
        image.upload(lambda: "", None, credit, api_visibility="private")  # an upload is not the sample image
        go.click(run_probe, [image, caption, models, seed, families], [variants, summary, chart, scores],
                 api_name="probe")
        refresh.click(show_leaderboard, None, [board_notes, board_table, board_plot], api_name="leaderboard")
        start.click(run_benchmark, [run_model, source, dataset_id, rows], [run_summary, run_table, run_file, run_plot],
                    api_name="run", concurrency_limit=1)
    return demo


def main() -> None:
    extra = [name.strip() for name in os.environ.get(EXTRA_MODELS_ENV, "").split(",") if name.strip()]
    build_demo(extra_models=extra).queue(default_concurrency_limit=CONCURRENCY, max_size=32).launch(
        max_file_size=f"{guards.MAX_UPLOAD_BYTES // 2**20}mb")


if __name__ == "__main__":
    main()
