"""Reports from results files: tables, frontier plot, qualitative page, comparisons, refusals."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lgip_dataset import schema
from lgip_dataset.errors import DataError
from lgip_metric import stats
from lgip_metric.statistics import reference
from lgip_metric.results import record as results
from lgip_metric.statistics import score_table
from lgip_metric.cli import main as lgip
from lgip_metric.results.provenance import Provenance
from lgip_metric.report import hard as hard_report
from lgip_metric.report import plots, report_from_files, write_report

TYPES = {"template": "paraphrase", "marker": "paraphrase", "object": "flip", "color": "flip", "count": "flip"}


def write_scores(folder: Path, seed: int, flip_shift: float) -> Path:
    """A valid scores.parquet (schema.SCORE_COLUMNS) of 8 images x 2 captions x 5 variants."""
    rng = np.random.default_rng(seed)
    records = []
    for image in range(8):
        for c in range(2):
            caption = f"a brown dog number {c} on the grass"
            s_original = 0.3 + 0.01 * image
            for v, (type_, kind) in enumerate(TYPES.items()):
                variant = f"a photo of {caption}" if kind == "paraphrase" else caption.replace("dog", f"cat{v}")
                shift = flip_shift if kind == "flip" else 0.0
                records.append({
                    "row_id": f"{image}-{c}-{v}", "image_id": 1000 + image, "caption_id": f"{image}-{c}",
                    "variant_id": f"{image}-{c}-{v}", "kind": kind, "type": type_,
                    "caption": caption, "variant": variant, "s_original": s_original,
                    "s_variant": float(s_original - shift + rng.normal(0, 0.02)),
                    "t_sim": float(min(1.0, 0.97 + rng.normal(0, 0.02))),
                })
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "scores.parquet"
    pq.write_table(pa.Table.from_pylist(records).select(list(schema.SCORE_COLUMNS)), path)
    return path


def make_results(folder: Path, name: str, *, seed: int = 0, flip_shift: float = 0.02, random_weights=False,
                 fingerprint: str = "f" * 16, pair_level: bool = False) -> Path:
    """A results.json made the way `lgip evaluate` makes it, over fake scores."""
    scores = write_scores(folder, seed, flip_shift)
    provenance = {"model": name, "model_id": f"open_clip:{name}", "backend": "open_clip", "pretrained": None,
                  "random_weights": random_weights, "paper_row": None,
                  "dataset": {"source": str(folder / "no-such-dataset"), "config": "pairs", "fingerprint": fingerprint,
                              "seed": 0, "lexicon_version": "1"}}
    statistics = score_table.statistics(pd.read_parquet(scores), pair_level=pair_level, bootstrap=200, seed=0)
    return results.write_results(folder / results.RESULTS_FILE,
                                 results.build_results(statistics, Provenance.from_dict(provenance), scores.name))


@pytest.fixture
def two(tmp_path):
    return [make_results(tmp_path / "a", "model-a", flip_shift=0.04),
            make_results(tmp_path / "b", "model-b", seed=1, flip_shift=-0.01, random_weights=True)]


def read_csv(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def test_table1_markdown_and_csv_with_intervals_counts_and_quoted_rows(two, tmp_path):
    paths = report_from_files(two, tmp_path / "report", paper=True)
    loaded = [results.load_results(p) for p in two]
    text = paths["table1.md"].read_text(encoding="utf-8")
    a, b = (r.statistics for r in loaded)
    assert f"| open_clip:model-a | {a['E_inv']:.4f} [{a['intervals']['E_inv'][0]:.4f}, " in text
    assert "open_clip:model-b [random weights]" in text and "meaningless" in text
    assert "| 16 / 16 | 32 / 48 | 8 | measured |" in text  # base pairs, variant rows (para / flip), images
    assert "Averaging: **base_pair**" in text and "fingerprint `ffffffffffffffff`" in text
    assert "| EVA02-CLIP L/14 | 0.005 | 0.030 | 0.896 |" in text and "*paper (quoted)*" in text
    rows = read_csv(paths["table1.csv"])
    assert [r["source"] for r in rows] == ["measured"] * 2 + ["paper (quoted)"] * 9
    assert float(rows[0]["PR"]) == a["PR"] and float(rows[1]["E_sens_low"]) == b["intervals"]["E_sens"][0]
    assert rows[0]["PR_base_pairs"] == "16" and rows[1]["random_weights"] == "True"


def test_table2_per_type_markdown_and_long_csv(two, tmp_path):
    paths = report_from_files(two, tmp_path / "report", paper=True)
    text = paths["table2.md"].read_text(encoding="utf-8")
    a = results.load_results(two[0]).statistics["per_type"]
    assert "object gap (E_sens) ↑" in text and "count PR ↑" in text and "### Paraphrase types" in text
    assert f"{a['color']['PR']:.4f} [{a['color']['intervals']['PR'][0]:.4f}" in text
    assert "| SigLIP base-p16-224 | -0.017 | 0.466 | -0.017 | 0.477 | -0.016 | 0.493 | *paper (quoted)* |" in text
    rows = read_csv(paths["table2.csv"])
    measured = [r for r in rows if r["source"] == "measured"]
    assert len(measured) == 2 * (2 * 1 + 3 * 2)  # 2 models x (2 paraphrase types x E_inv + 3 flip types x 2)
    assert {r["type"] for r in measured} == set(TYPES)
    quoted = [r for r in rows if r["source"] == reference.LABEL]
    assert len(quoted) == 4 * 3 * 2


def test_frontier_png_and_svg(two, tmp_path):
    paths = report_from_files(two, tmp_path / "report", paper=True)
    png, svg = paths["frontier.png"], paths["frontier.svg"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    text = svg.read_text(encoding="utf-8")
    for label in ("open_clip:model-a", "open_clip:model-b [random weights]", "paper (quoted)",
                  "Pareto front (measured, trained weights)", "EVA02-CLIP L/14", "lower is better"):
        assert label in text
    without = report_from_files(two, tmp_path / "plain")["frontier.svg"].read_text(encoding="utf-8")
    assert "paper (quoted)" not in without


def test_frontier_of_the_paper_rows_alone(tmp_path):
    png, svg = plots.frontier([], tmp_path, paper=True)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = svg.read_text(encoding="utf-8")
    assert "paper (quoted)" in text and "Pareto front (measured)" not in text
    with pytest.raises(ValueError, match="at least one results file"):
        plots.frontier([], tmp_path, paper=False)


def test_pareto_front_lower_inv_higher_sens():
    points = [(0.01, 0.02), (0.02, 0.05), (0.015, 0.01), (0.03, 0.05), (0.005, 0.0)]
    assert plots.pareto_front(points) == [4, 0, 1]  # (0.015, 0.01) and (0.03, 0.05) are dominated
    paper = [(r["E_inv"], r["E_sens"]) for r in reference.table1()]
    front = [reference.table1()[i]["model"] for i in plots.pareto_front(paper)]
    assert front == ["EVA02-CLIP L/14", "OpenCLIP ViT-L/14 (LAION-2B)", "OpenCLIP ViT-H/14 (LAION-2B)"]


def test_results_from_different_datasets_are_refused_with_both_files(tmp_path):
    a = make_results(tmp_path / "a", "model-a")
    b = make_results(tmp_path / "b", "model-b", fingerprint="0" * 16)
    with pytest.raises(DataError, match="different datasets") as err:
        report_from_files([a, b], tmp_path / "report")
    assert str(a) in str(err.value) and str(b) in str(err.value) and "0000000000000000" in str(err.value)
    assert not (tmp_path / "report" / "table1.md").exists()


def test_lgip_report_cli_refusal_and_success(tmp_path, capsys):
    a = make_results(tmp_path / "a", "model-a")
    b = make_results(tmp_path / "b", "model-b", fingerprint="0" * 16)
    assert lgip(["report", str(a), str(b), "--out", str(tmp_path / "r")]) == 2
    assert "cannot compare" in capsys.readouterr().err
    assert lgip(["report", str(a.parent), "--out", str(tmp_path / "r"), "--paper-reference"]) == 0
    assert (tmp_path / "r" / "report.md").exists() and (tmp_path / "r" / "frontier.png").exists()


def test_different_averaging_is_refused(tmp_path):
    a = make_results(tmp_path / "a", "model-a")
    b = make_results(tmp_path / "b", "model-b", pair_level=True)
    with pytest.raises(DataError, match="different averaging"):
        report_from_files([a, b], tmp_path / "report")
    assert json.loads(b.read_text())["averaging"] == "pair_level"
    assert "pair_level" in report_from_files([b], tmp_path / "pl")["table1.md"].read_text(encoding="utf-8")


@pytest.mark.parametrize(("content", "message"), [(None, "no such results file"), ("{", "not valid JSON"),
                                                  ('{"format": "other"}', "not an LGIP results file")])
def test_bad_results_files(tmp_path, content, message):
    path = tmp_path / "results.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(DataError, match=message):
        results.load_results(path)


def test_qualitative_page_shows_the_strongest_disagreements(two, tmp_path):
    paths = report_from_files(two, tmp_path / "report")
    page = paths["qualitative.md"].read_text(encoding="utf-8")
    a, b = (pq.read_table(results.load_results(p).scores_path).to_pandas().set_index("row_id") for p in two)
    flips = a[a["kind"] == "flip"]
    gap_a = flips["s_original"] - flips["s_variant"]
    gap_b = b.loc[flips.index, "s_original"] - b.loc[flips.index, "s_variant"]
    discordant = ((gap_a > 0) != (gap_b > 0))
    strongest = (gap_a - gap_b).abs()[discordant].idxmax()
    row = flips.loc[strongest]
    first = page.index("#### ")
    assert "flip: dog → cat" in page[first:first + 80] and f"(image {row['image_id']})" in page[first:first + 120]
    assert f"| ORIG | {row['caption']} | {row['s_original']:.3f} | {b.loc[strongest, 's_original']:.3f} |" in page
    assert page.count("#### ") == min(int(discordant.sum()), 12)
    assert "could not be read" in page  # the fake dataset has no images config: captions only


def test_comparison_tables_match_stats_compare(two, tmp_path):
    paths = report_from_files(two, tmp_path / "report")
    rows = read_csv(paths["comparison.csv"])
    a, b = (pq.read_table(results.load_results(p).scores_path).to_pandas() for p in two)
    expected = stats.compare(a["s_original"], a["s_variant"], b["s_original"], b["s_variant"], a["kind"], a["type"],
                             a["caption_id"], a["image_id"], bootstrap=200, seed=0)
    overall = {r["metric"]: r for r in rows if r["type"] == "all"}
    assert float(overall["PR"]["difference"]) == expected["PR"]["difference"]
    assert [float(overall["E_sens"]["low"]), float(overall["E_sens"]["high"])] == expected["E_sens"]["interval"]
    assert float(overall["PR"]["mcnemar_p"]) == expected["mcnemar"]["p_value"]
    text = paths["comparison.md"].read_text(encoding="utf-8")
    assert "A = open_clip:model-a vs B = open_clip:model-b [random weights] (80 rows)" in text


def test_single_model_report_lists_its_worst_flips(tmp_path):
    only = results.load_results(make_results(tmp_path / "a", "model-a", flip_shift=0.0))
    paths = write_report([only], tmp_path / "report")
    assert "comparison.md" not in paths
    page = paths["qualitative.md"].read_text(encoding="utf-8")
    assert "Flips open_clip:model-a prefers most over the original caption" in page
    assert page.count("✗") >= 1


def _overlap(a, b) -> float:
    return max(0.0, min(a.x1, b.x1) - max(a.x0, b.x0)) * max(0.0, min(a.y1, b.y1) - max(a.y0, b.y0))


def test_frontier_skips_random_weights_and_keeps_labels_apart(two, tmp_path):
    loaded = results.load_comparable(two)
    (png, svg), boxes = plots.frontier_layout(loaded, tmp_path / "both", paper=True)
    text = svg.read_text(encoding="utf-8")
    assert "Pareto front (measured, trained weights)" in text and "Pareto front, paper (quoted)" in text
    quoted = [row["model"] for row in reference.table1()]
    assert set(boxes) == {r.label for r in loaded} | set(quoted)
    for i, a in enumerate(boxes):
        for b in list(boxes)[i + 1:]:
            assert _overlap(boxes[a], boxes[b]) == 0, (a, b)  # e.g. OpenCLIP L/14 and H/14, quoted side by side
    random_only = [r for r in loaded if r.random_weights]
    (_, svg), _ = plots.frontier_layout(random_only, tmp_path / "random", paper=False)
    assert "Pareto front (measured" not in svg.read_text(encoding="utf-8")  # no front through random weights


def test_the_hard_block_stands_beside_table_1_with_both_blind_scorers(tmp_path, monkeypatch):
    """With hard flips in the scores, hard.md/hard.csv show the paper's block and the hard block,
    each followed by the blind bigram and trigram rows, and report.md includes it after Table 1."""
    import pandas as pd

    from lgip_metric.statistics import blind

    monkeypatch.setitem(TYPES, "hard_object", "flip")
    monkeypatch.setitem(TYPES, "hard_color", "flip")
    path = make_results(tmp_path / "a", "model-a", flip_shift=0.04)
    data = json.loads(path.read_text(encoding="utf-8"))
    frame = pd.read_parquet(path.parent / data["scores"])
    data["blind"] = blind.blind_report(frame, bootstrap=0)
    path.write_text(json.dumps(data), encoding="utf-8")
    paths = report_from_files([path], tmp_path / "report")
    records = read_csv(paths["hard.csv"])
    assert [(r["scorer"], r["block"]) for r in records] == [
        (s, b) for b in ("paper flips (Table 1)", "hard flips")
        for s in ("model", "blind: bigram KN LM", "blind: trigram KN LM", hard_report.ADVERSARY)]
    learned = data["blind"]["adversary"]
    assert learned["learner"] == "word" and learned["hard"]["types"] == ["hard_object", "hard_color"]
    adversary_hard = next(r for r in records if r["scorer"] == hard_report.ADVERSARY and r["block"] == "hard flips")
    assert float(adversary_hard["PR"]) == pytest.approx(learned["hard"]["accuracy"])
    assert int(adversary_hard["variant_rows"]) == learned["hard"]["pairs"] == model_rows_of(frame, learned["hard"])
    hard = data["statistics"]["hard"]
    model_hard = next(r for r in records if r["scorer"] == "model" and r["block"] == "hard flips")
    assert float(model_hard["PR"]) == pytest.approx(hard["PR"]) and model_hard["types"] == "hard_object,hard_color"
    trigram_hard = next(r for r in records if r["scorer"] == "blind: trigram KN LM" and r["block"] == "hard flips")
    assert float(trigram_hard["PR"]) == pytest.approx(data["blind"]["trigram"]["blind"]["hard"]["PR"])
    text = paths["hard.md"].read_text(encoding="utf-8")
    assert "## Hard flips beside Table 1" in text and "hard_object PR" in text
    index = paths["report.md"].read_text(encoding="utf-8")
    assert index.index("LGIP Table 1") < index.index("Hard flips beside Table 1")
    blind_md = paths["blind.md"].read_text(encoding="utf-8")
    assert "blind trigram PR" in blind_md and "learned word adversary accuracy (held-out)" in blind_md
    assert f"{hard_report.ADVERSARY} | " in text  # the per hard type table has its row
    assert_summary_blocks(path)
    del data["blind"]["adversary"]  # results written before it: no adversary row or column
    path.write_text(json.dumps(data), encoding="utf-8")
    older = report_from_files([path], tmp_path / "older")
    assert hard_report.ADVERSARY not in older["hard.md"].read_text(encoding="utf-8")
    assert "adversary" not in older["blind.md"].read_text(encoding="utf-8")
    import sys

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "space"))
    monkeypatch.delitem(sys.modules, "lgip_space", raising=False)
    from lgip_space import leaderboard

    loaded = results.load_comparable([path])
    board = leaderboard.table(loaded).set_index("model")
    label = loaded[0].label
    assert board.loc[label, "hard PR"] == pytest.approx(round(hard["PR"], 4))
    assert board.loc[label, "hard PR, blind: trigram KN LM"] == pytest.approx(
        round(data["blind"]["trigram"]["blind"]["hard"]["PR"], 4))
    assert "paper flips PR, blind: bigram KN LM" in board.columns


def summary_sections(text: str) -> dict[str, str]:
    """The printed summary cut at its block headings: {heading: the lines under it}."""
    sections, heading = {}, None
    for line in text.splitlines():
        if not line.startswith(" ") and line.endswith(":"):
            heading = line
            sections[heading] = ""
        elif heading is not None and line.startswith(" "):
            sections[heading] += line + "\n"
    return sections


def assert_summary_blocks(path: Path) -> None:
    """What `lgip evaluate` prints: each block under a heading naming its own types, with its own model and
    text-only figures (the paper's flips' blind figures never under the hard flips' heading), and the line
    that says what a figure near 0.5 means."""
    from lgip_metric.commands.evaluate import summary

    loaded = results.load_results(path)
    data, text = loaded.data, summary(loaded)
    sections = summary_sections(text)
    paper = next(h for h in sections if h.startswith("paper paraphrases and flips"))
    hard = "hard flips (hard_object, hard_color):"
    assert list(sections) == [paper, hard] and "flips: object, color, count" in paper
    for heading, block, types, other in ((paper, "headline", ("object", "color", "count"), ("hard_object", "hard_color")),
                                         (hard, "hard", ("hard_object", "hard_color"), ("object ", "color ", "count "))):
        lines = sections[heading]
        statistics = data["statistics"] if block == "headline" else data["statistics"]["hard"]
        assert f"PR      {statistics['PR']:.4f}" in lines
        for scorer in ("lm", "trigram"):
            blind = data["blind"][scorer]["blind"]
            assert f"{blind[block]['PR']:.4f}" in lines
            assert all(f"{t} {blind['per_type'][t]['PR']:.4f}" in lines for t in types if t in blind["per_type"])
        learned = data["blind"]["adversary"]
        assert f"learned word adversary (held-out accuracy) {learned[block]['accuracy']:.4f}" in lines
        assert not any(f" {t}" in lines for t in other)  # nothing of the other block's types
    assert "near 0.5" in text.splitlines()[-1]


def model_rows_of(frame, block: dict) -> int:
    """The flip rows of a block's types in a score table."""
    return int(((frame["kind"] == "flip") & frame["type"].isin(block["types"])).sum())


def test_no_hard_block_without_hard_flips(two, tmp_path):
    paths = report_from_files(two, tmp_path / "report")
    assert "hard.md" not in paths


def test_thumbnails_are_made_once_per_process_for_the_same_shards(tmp_path, monkeypatch):
    """A sweep's later reports read the thumbnails of images an earlier report showed instead of decoding them again:
    the same bytes as a fresh decode (``decode_image``, 256 px, JPEG quality 85); a dataset whose images config is
    another file (here a copy elsewhere) decodes afresh."""
    import shutil
    from types import SimpleNamespace

    from lgip_dataset import SAMPLE_DIR
    from lgip_dataset.files.images import decode_image
    from lgip_metric.report import qualitative

    monkeypatch.setattr(qualitative, "_MADE", qualitative.OrderedDict())
    ids = pq.read_table(qualitative.hub_io.config_files(SAMPLE_DIR, schema.IMAGES)[0], columns=["image_id"])
    wanted = ids.column("image_id").to_pylist()[:3]
    sample = SimpleNamespace(data={"dataset": {"source": str(SAMPLE_DIR)}})
    first, problem = qualitative._thumbnails(sample, wanted, tmp_path / "one" / "qualitative")
    assert problem is None and sorted(first) == sorted(wanted)
    table = pq.read_table(qualitative.hub_io.config_files(SAMPLE_DIR, schema.IMAGES)[0], columns=["image_id", "image"])
    for row in table.to_pylist()[:3]:
        image = decode_image(row["image"]["bytes"])
        image.thumbnail((qualitative.THUMBNAIL, qualitative.THUMBNAIL))
        fresh = io.BytesIO()
        image.save(fresh, format="JPEG", quality=85)
        assert (tmp_path / "one" / first[row["image_id"]]).read_bytes() == fresh.getvalue()

    decoded = []
    real = qualitative.decode_image
    monkeypatch.setattr(qualitative, "decode_image", lambda data: decoded.append(1) or real(data))
    again, _ = qualitative._thumbnails(sample, wanted, tmp_path / "two" / "qualitative")
    assert decoded == [] and again == first
    assert all((tmp_path / "two" / again[i]).read_bytes() == (tmp_path / "one" / first[i]).read_bytes() for i in wanted)
    copy = shutil.copytree(SAMPLE_DIR, tmp_path / "copy")
    qualitative._thumbnails(SimpleNamespace(data={"dataset": {"source": str(copy)}}), wanted, tmp_path / "three")
    assert len(decoded) == len(wanted)
