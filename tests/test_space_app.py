"""The Space end to end: ``build_demo()`` served on localhost, every tab driven through gradio_client.

Offline, with the registry's tiny random-weight open_clip model on the allow-list. The Probe
tab's scores are checked against the scoring engine's (a different code path), its per-caption
statistics against ``lgip_metric.stats``, and every bad input must come back as a clear message
with the server still answering afterwards.
"""
from __future__ import annotations

import importlib.metadata
import re
import shutil

import datasets
import gradio as gr
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from gradio_client import Client, handle_file
from PIL import Image

from lgip_dataset import schema
from lgip_dataset.files.hub_io import load_config
from lgip_dataset.perturb import Perturber
from lgip_dataset.perturb.registry import CORE, HARD
from lgip_metric import stats
from lgip_metric.statistics import reference
from lgip_metric.scoring.engine import score_dataset
from lgip_metric.results.record import load_results
from helpers.space import SPACE_DIR, TINY, import_space_app, space  # noqa: F401  (fixture)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def client(space):  # noqa: F811
    return Client(space.url, verbose=False)


@pytest.fixture(scope="module")
def sample_image(space, tmp_path_factory):  # noqa: F811
    """The sample's first image as its original JPEG file, with its first human caption."""
    image = load_config(space.sample_dir, schema.IMAGES).cast_column("image", datasets.Image(decode=False))[0]
    captions = load_config(space.sample_dir, schema.CAPTIONS)
    path = tmp_path_factory.mktemp("upload") / image["file_name"]
    path.write_bytes(image["image"]["bytes"])
    caption = captions[captions["image_id"].index(image["image_id"])]["caption"]
    return {"path": path, "image_id": image["image_id"], "caption": caption}


@pytest.fixture(scope="module")
def run_output(client):
    """The Run tab once: the tiny model on the embedded sample."""
    summary, table, results_file, frontier = client.predict(TINY, "embedded sample", "org/lgip", 10, api_name="/run")
    return {"summary": summary, "table": frame(table), "results": load_results(results_file), "frontier": frontier}


def frame(value: dict) -> pd.DataFrame:
    return pd.DataFrame(value["data"], columns=value["headers"])


def probe(client, image, caption, models=(TINY,), seed=0, families=("core", "hard")):
    return client.predict(handle_file(str(image)) if image else None, caption, list(models), seed, list(families),
                          api_name="/probe")


# ------------------------------------------------------------------------------------------ tabs


def test_app_imports_without_launching():
    app = import_space_app()
    assert callable(app.build_demo) and app.CONCURRENCY >= 1
    gpu = app.gpu
    assert gpu(len) is len and gpu(duration=5)(len) is len  # no `spaces` package here: a no-op


def test_sample_picker_loads_image_and_captions(client, sample_image):
    image, human, caption, credit = client.predict(sample_image["image_id"], api_name="/sample")
    assert Image.open(image).size == Image.open(sample_image["path"]).size
    assert caption == sample_image["caption"] == human["value"]
    assert sample_image["caption"] in [value for _, value in human["choices"]]
    assert "License" in credit and f"{sample_image['image_id']:012d}.jpg" in credit


def test_probe_shows_variants_and_caption_statistics(client, sample_image):
    highlighted, summary, plot, table = probe(client, sample_image["path"], sample_image["caption"])
    result = Perturber(k_same=6, k_diff=6, families="core,hard").perturb(sample_image["caption"], seed=0)
    table = frame(table)
    expected = [v.text for v in result.paraphrases + result.flips]
    assert table["text"].tolist() == expected and len(expected) > 6
    assert set(table["kind"]) == {"paraphrase", "flip"}
    # the swapped word of every flip is highlighted with the flip's type, the hard flips' by default too
    labelled = {(seg["token"].strip(), seg["class_or_confidence"]) for seg in highlighted if seg["class_or_confidence"]}
    for flip in result.flips:
        assert any(flip.replacement in token and label == flip.type for token, label in labelled), flip
    assert {label for _, label in labelled} <= {*CORE, *HARD} and {label for _, label in labelled} & set(HARD)
    # the caption's E_inv, gap and PR are the statistics of its rows
    rows = table.assign(image=1, caption="c")
    expected_stats = stats.lgip_statistics(rows["s(I,c)"], rows["s(I,variant)"], rows["kind"], rows["type"],
                                           rows["caption"], rows["image"], bootstrap=0)
    numbers = re.search(r"\| tiny-clip[^|]*\| (\S+) \| (\S+) \(\d+ para\.\) \| (\S+) \| (\S+) \(", summary).groups()
    assert [float(x) for x in numbers[1:]] == pytest.approx(
        [expected_stats["E_inv"], expected_stats["E_sens"], expected_stats["PR"]], abs=6e-4)
    assert plot["type"] == "matplotlib" and plot["plot"].startswith("data:image/")
    # random weights are labelled in every output
    assert "Random weights" in summary and all("random weights" in m for m in table["model"])


def one_caption_dataset(folder, image: dict, table: pd.DataFrame):
    """An LGIP folder holding one image and the probe's caption and variants, for the scoring engine."""
    from lgip_space.hub_subset import write_folder

    pairs = [{"row_id": f"r{i}", "caption_id": "c", "image_id": image["image_id"], "caption": image["caption"],
              "variant_id": f"r{i}", "kind": row.kind, "type": row.type, "original": None,
              "replacement": None, "span_start": None, "span_end": None, "variant": row.text, "judged": None}
             for i, row in enumerate(table.itertuples())]
    images = [{"image_id": image["image_id"], "image": {"bytes": image["path"].read_bytes(), "path": None},
               "file_name": image["path"].name, "width": 0, "height": 0, "license": "", "license_url": "",
               "flickr_url": "", "converted_from": None}]
    return write_folder(folder, {schema.PAIRS: datasets.Dataset.from_list(pairs, features=schema.PAIR_FEATURES),
                                 schema.IMAGES: datasets.Dataset.from_list(images, features=schema.IMAGE_FEATURES)},
                        "probe parity")


@pytest.mark.parametrize("backend", ["open_clip", "transformers"])
def test_probe_scores_equal_the_scoring_engine(backend, client, space, sample_image, tmp_path):  # noqa: F811
    """The uploaded image and the texts get the similarities the engine gives the same rows."""
    model = TINY if backend == "open_clip" else space.siglip
    _, _, _, table = probe(client, sample_image["path"], sample_image["caption"], models=[model])
    table = frame(table)
    dataset = one_caption_dataset(tmp_path / "data", sample_image, table)
    engine = score_dataset(model, dataset, tmp_path / "scores", progress=False, num_workers=0).scores()
    assert table["s(I,c)"].to_numpy() == pytest.approx(engine.s_original.to_numpy(), abs=1e-4)
    assert table["s(I,variant)"].to_numpy() == pytest.approx(engine.s_variant.to_numpy(), abs=1e-4)


def test_probe_compares_models_of_both_backends(client, space, sample_image):  # noqa: F811
    _, summary, _, table = probe(client, sample_image["path"], "two dogs playing with a red ball",
                                 models=[TINY, space.siglip])
    table = frame(table)
    assert table.model.nunique() == 2 and table.groupby("model").size().nunique() == 1
    assert summary.count("(random weights") == 2


def test_run_tab_scores_the_sample_and_offers_results(run_output, space):  # noqa: F811
    results = run_output["results"]
    assert results.random_weights and "random weights" in results.label
    counts = results.data["provenance"]["counts"]
    pairs = sum(pq.ParquetFile(p).metadata.num_rows for p in (space.sample_dir / schema.PAIRS).glob("*.parquet"))
    assert counts["scored_rows"] == counts["rows"] == pairs
    table = run_output["table"]
    measured = table[table.source == "measured"]
    assert len(measured) == 1 and measured.model.iloc[0] == results.label
    for metric in ("E_inv", "E_sens", "PR"):
        assert measured[metric].iloc[0] == pytest.approx(results.statistics[metric], abs=1e-4)
    assert (table.source.str.startswith(reference.LABEL)).sum() == len(reference.table1())
    assert "Random weights" in run_output["summary"] and "E_inv" in run_output["summary"]
    assert Image.open(run_output["frontier"]).format == "PNG"


@pytest.mark.parametrize("built_by", ["0.2.0", "0.1.0"])
def test_run_tab_reads_the_first_rows_of_a_hub_dataset(client, space, monkeypatch, built_by):  # noqa: F811
    from lgip_space import hub_subset

    def local_hub(dataset_id, *args, **kwargs):
        assert dataset_id == "test-org/lgip"
        loaded = hub_subset.datasets.load_dataset(str(space.sample_dir), *args, **kwargs)
        added = [name for name in schema.ADDED_FIELDS if name in (loaded.column_names or ())]
        return loaded.remove_columns(added) if built_by == "0.1.0" else loaded  # 0.1.0 had no such columns

    monkeypatch.setattr(hub_subset, "load_dataset", local_hub)
    summary, table, results_file, _ = client.predict(TINY, "Hub dataset (first N rows)", "test-org/lgip", 40,
                                                     api_name="/run")
    results = load_results(results_file)
    assert results.data["provenance"]["counts"]["rows"] == 40
    assert "the first 40 rows of test-org/lgip" in summary
    assert "test-org--lgip-first40" in results.data["dataset"]["source"]


def test_leaderboard_shows_quoted_rows_then_shipped_results(client, space, run_output):  # noqa: F811
    notes, table, plot = client.predict(api_name="/leaderboard")
    table = frame(table)
    assert "No measured results" in notes and Image.open(plot).format == "PNG"
    assert len(table) == len(reference.table1()) and table.source.str.contains("quoted").all()
    clip = table[table.model == "CLIP ViT-B/16 (OpenAI)"].iloc[0]
    assert (clip.E_inv, clip.E_sens, clip.PR, clip["object PR"]) == (0.008, 0.024, 0.866, 0.955)

    shutil.copy(run_output["results"].path, space.results_dir / "tiny.json")
    notes, table, plot = client.predict(api_name="/leaderboard")
    table = frame(table)
    measured = table[table.source == "measured"]
    assert len(measured) == 1 and "random weights" in measured.model.iloc[0]
    assert "1 measured model" in notes and "random weights" in notes
    assert Image.open(plot).format == "PNG"
    (space.results_dir / "tiny.json").unlink()


# ------------------------------------------------------------------------------------------ bad input


@pytest.fixture(scope="module")
def huge_png(tmp_path_factory):
    """A 20,000 x 20,000 image (400 megapixels) that is only ~50 KB as a 1-bit PNG."""
    path = tmp_path_factory.mktemp("bomb") / "huge.png"
    Image.new("1", (20_000, 20_000)).save(path)
    return path


@pytest.fixture(scope="module")
def thin_png(tmp_path_factory):
    """A 1 x 20,000 image: a few hundred bytes that a model's resize would blow up to gigabytes."""
    path = tmp_path_factory.mktemp("thin") / "thin.png"
    Image.new("L", (1, 20_000)).save(path)
    return path


@pytest.fixture(scope="module")
def eps_file(tmp_path_factory):
    """An EPS drawing: Pillow would hand it to Ghostscript."""
    path = tmp_path_factory.mktemp("eps") / "drawing.png"
    Image.new("RGB", (16, 12), "red").save(path, format="EPS")
    return path


@pytest.fixture(scope="module")
def large_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("large") / "large.jpg"
    path.write_bytes(b"\xff" * (11 * 2**20))
    return path


@pytest.fixture(scope="module")
def text_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("text") / "notes.png"  # an image name does not make it an image
    path.write_text("this is not an image\n")
    return path


BAD_PROBES = {
    "non-image upload": ("text_file", "a dog", [TINY], r"Image refused: notes\.png: corrupt or unreadable image"),
    "20,000 x 20,000 image": ("huge_png", "a dog", [TINY], r"Image refused: huge\.png: .*(too large|decompression bomb)"),
    "1 x 20,000 image": ("thin_png", "a dog", [TINY], r"Image refused: thin\.png: image too thin: 1x20000 pixels"),
    "EPS upload": ("eps_file", "a dog", [TINY], r"Image refused: drawing\.png: .*not a recognised image format \(accepted"),
    "11 MB upload": ("large_file", "a dog", [TINY], r"Image refused: large\.jpg is 11\.0 MB; the limit is 10 MB"),
    "no image": (None, "a dog", [TINY], r"Upload an image or pick a sample image first"),
    "empty caption": ("sample", "   ", [TINY], r"Caption refused: caption is empty"),
    "5,000-character caption": ("sample", "a" * 5000, [TINY],
                                r"Caption refused: it is 5,000 characters long; the limit is 300"),
    "model outside the allow-list": ("sample", "a dog", ["evil/model"], r"'evil/model'.*not in the list of choices"),
    "no model": ("sample", "a dog", [], r"Choose at least one model"),
}


@pytest.mark.parametrize("case", BAD_PROBES, ids=list(BAD_PROBES))
def test_bad_probe_input_gets_a_clear_message(case, client, request, sample_image):
    image, caption, models, message = BAD_PROBES[case]
    path = {"sample": sample_image["path"], None: None}.get(image) or (image and request.getfixturevalue(image))
    with pytest.raises(Exception) as raised:
        probe(client, path, caption, models)
    assert re.search(message, str(raised.value)), str(raised.value)
    assert "Traceback" not in str(raised.value)
    assert client.predict(sample_image["image_id"], api_name="/sample")[2]  # still serving


BAD_RUNS = {
    "model outside the allow-list": (("../../etc/passwd", "embedded sample", "org/lgip", 10),
                                     r"not in the list of choices"),
    "bad Hub id": ((TINY, "Hub dataset (first N rows)", "not a repo id", 10), r"Dataset refused: 'not a repo id'"),
    "too many rows": ((TINY, "Hub dataset (first N rows)", "org/lgip", 10**7), r"10000000|Rows refused"),
    "a folder of the server as a Hub id": ((TINY, "Hub dataset (first N rows)", "lgip_dataset/sample", 10),
                                           r"Dataset refused: 'lgip_dataset/sample' names a folder of the server"),
    "a parent folder as a Hub id": ((TINY, "Hub dataset (first N rows)", "space/..", 10),
                                    r"Dataset refused: 'space/\.\.' is not a Hub dataset id"),
}


@pytest.mark.parametrize("case", BAD_RUNS, ids=list(BAD_RUNS))
def test_bad_run_input_gets_a_clear_message(case, client):
    args, message = BAD_RUNS[case]
    with pytest.raises(Exception) as raised:
        client.predict(*args, api_name="/run")
    assert re.search(message, str(raised.value)), str(raised.value)


@pytest.mark.parametrize("seed, expected", [(None, 0), ("", 0), (3, 3), (3.0, 3), ("7", 7), ("abc", None), (1.5, None),
                                            (-1, None), (2**40, None), (float("nan"), None)])
def test_a_seed_is_a_whole_number_or_a_clear_refusal(seed, expected):
    from lgip_space import guards

    if expected is None:
        with pytest.raises(gr.Error, match=r"Seed refused: .* give a whole number"):
            guards.check_seed(seed)
    else:
        assert guards.check_seed(seed) == expected


def test_app_still_probes_after_bad_input(client, sample_image):
    _, summary, _, table = probe(client, sample_image["path"], "a red bus next to two people")
    assert "s(I,c)" in summary and len(frame(table)) > 0


# ------------------------------------------------------------------------------------------ pieces


def test_model_pool_allows_only_listed_names_and_loads_once():
    import_space_app()
    from lgip_space.models import ModelPool

    pool = ModelPool([TINY])
    assert pool.allowed[0] == TINY and "clip-vit-b16" in pool.allowed
    with pytest.raises(gr.Error, match="not on this Space's allow-list"):
        pool.check(["hf-hub:evil/remote-code"])
    assert pool.get(TINY) is pool.get(TINY)
    assert "random weights" in pool.label(TINY) and pool.label("clip-vit-b16") == "clip-vit-b16"


@pytest.mark.parametrize("caption", ["two dogs playing with a red ball", "hello world", "x"])
def test_probe_caption_statistics_are_the_stats_modules_even_without_flips(caption):
    """Flips, paraphrases only, no variant at all: the Probe's numbers are ``lgip_metric.stats``'s."""
    import_space_app()
    from lgip_space import probe as tab

    result = tab.perturb(caption, seed=0)
    kinds, types = [v.kind for v in tab.variants(result)], [v.type for v in tab.variants(result)]
    scored = tab.Scored("m", 0.3, np.random.default_rng(0).uniform(0.2, 0.4, len(kinds)).round(2))
    metrics = tab.caption_metrics(scored, result)
    flips = np.array(kinds) == "flip"
    hard = np.isin(types, HARD)
    paper = flips & ~hard if (flips & ~hard).any() else flips  # the headline falls back to every flip type
    assert (metrics["paraphrases"], metrics["flips"]) == (len(kinds) - flips.sum(), paper.sum())
    assert metrics["caught"] == int((scored.variants[paper] < 0.3).sum())
    if hard.any():
        assert (metrics["hard"]["flips"], metrics["hard"]["caught"]) == (hard.sum(), int((scored.variants[hard] < 0.3).sum()))
    if not result.flips:
        assert metrics["gap"] is metrics["PR"] is None and metrics["per_type"] == {}
    if not kinds:
        assert metrics["E_inv"] is None
        return
    expected = stats.statistics(stats.summarize([0.3] * len(kinds), scored.variants, kinds, types, [0] * len(kinds),
                                                [0] * len(kinds)), bootstrap=0, require_both_kinds=False)
    assert [metrics["E_inv"], metrics["gap"], metrics["PR"]] == [expected["E_inv"], expected["E_sens"], expected["PR"]]
    assert metrics["E_inv"] == pytest.approx(np.abs(0.3 - scored.variants[~flips]).mean(), abs=1e-12)
    if result.flips:
        assert metrics["gap"] == pytest.approx((0.3 - scored.variants[paper]).mean(), abs=1e-12)
    assert {t: [b["gap"], b["PR"]] for t, b in metrics["per_type"].items()} == {
        t: [b["E_sens"], b["PR"]] for t, b in expected["per_type"].items() if b["kind"] == "flip"}


def test_requirements_pin_every_dependency_of_the_package():
    """The Space installs the package's dependencies (the package itself is uploaded beside app.py)."""
    from packaging.requirements import Requirement

    pins = {Requirement(line).name.lower().replace("_", "-"): Requirement(line)
            for line in (SPACE_DIR / "requirements.txt").read_text().splitlines() if line and not line.startswith("#")}
    assert all(str(req.specifier).startswith("==") for req in pins.values())
    package = {Requirement(r).name.lower().replace("_", "-"): Requirement(r) for r in importlib.metadata.requires("lgip")
               if "extra ==" not in r}
    assert set(package) - {"gradio"} <= set(pins), set(package) - set(pins)  # gradio: the card's sdk_version
    assert "gradio" not in pins
    for name, req in package.items():
        if name in pins:
            assert req.specifier.contains(str(pins[name].specifier).removeprefix("==")), (req, pins[name])


def test_space_card_points_at_the_dataset_and_tested_gradio():
    from huggingface_hub import SpaceCard

    data = SpaceCard.load(SPACE_DIR / "README.md").data
    assert data.sdk == "gradio" and data.sdk_version == gr.__version__ and data.app_file == "app.py"
    assert import_space_app().default_dataset() == data.datasets[0]
