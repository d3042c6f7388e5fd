"""`lgip evaluate` over several models: one run folder each, one leaderboard, `--skip-existing`, failures
reported while the others run, and the small-sample warning `lgip audit` gives."""
from __future__ import annotations

import csv
import json
import shutil

import pandas as pd
import pytest

from helpers.models import other_tiny_model
from lgip_dataset.errors import DataError
from lgip_dataset.selection import measurable
from lgip_metric import sweep
from lgip_metric.cli import main as lgip
from lgip_metric.report.sample_size import few_images_warnings
from lgip_metric.results.record import load_results
from lgip_metric.statistics import reference
from lgip_metric.testing import make_tiny_openclip

LIMIT = "120"  # the first sample rows: a few images, seconds per tiny model


def evaluate(*args: str) -> list[str]:
    return ["evaluate", *args, "--limit", LIMIT, "--bootstrap", "20", "--device", "cpu", "--num-workers", "0",
            "--no-progress"]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Three random-weight models (the registry's tiny CLIP and two local open_clip folders), and one whose
    weights cannot be read."""
    root = tmp_path_factory.mktemp("models")
    broken = make_tiny_openclip(root / "broken")
    (root / "broken" / "open_clip_model.safetensors").write_bytes(b"not weights")
    return {"tiny": "tiny-clip", "other": other_tiny_model(root / "other"),
            "third": make_tiny_openclip(root / "third"), "broken": broken, "root": root}


@pytest.fixture(scope="module")
def swept(models, tmp_path_factory):
    """One sweep of the three models: two by --model, one from --models-file (with a comment line)."""
    root = tmp_path_factory.mktemp("sweep")
    listed = root / "models.txt"
    listed.write_text(f"# the third model\n\n{models['third']}\n", encoding="utf-8")
    args = evaluate("--model", f"{models['tiny']},{models['other']}", "--models-file", str(listed),
                    "--out", str(root / "out"), "--cache-dir", str(root / "cache"))
    return {"root": root, "out": root / "out", "args": args, "code": lgip(args)}


def test_a_sweep_writes_one_run_per_model_and_one_leaderboard(swept, models):
    assert swept["code"] == 0
    out = swept["out"]
    folders = {name: out / sweep.model_slug(models[name]) for name in ("tiny", "other", "third")}
    assert sorted(p.name for p in out.iterdir()) == sorted([*(f.name for f in folders.values()),
                                                            "leaderboard.csv", "leaderboard.md"])
    runs = {name: load_results(folder) for name, folder in folders.items()}
    assert all((folder / "report" / "report.md").is_file() for folder in folders.values())

    rows = list(csv.DictReader((out / "leaderboard.csv").open(encoding="utf-8")))
    measured = [row for row in rows if row["source"] == "measured"]
    quoted = [row for row in rows if row["source"] == reference.LABEL]
    assert len(measured) == 3 and len(quoted) == len(reference.table1())
    by_label = {r.label: r for r in runs.values()}
    assert {row["model"] for row in measured} == set(by_label)
    assert [float(row["PR"]) for row in measured] == sorted((float(row["PR"]) for row in measured), reverse=True)
    for row in measured:
        statistics = by_label[row["model"]].statistics
        for metric in ("E_inv", "E_sens", "PR"):
            assert float(row[metric]) == pytest.approx(statistics[metric])
            low, high = statistics["intervals"][metric]
            assert (float(row[f"{metric}_low"]), float(row[f"{metric}_high"])) == pytest.approx((low, high))
        assert float(row["hard PR"]) == pytest.approx(statistics["hard"]["PR"])
    clip = next(row for row in quoted if row["model"] == "CLIP ViT-B/16 (OpenAI)")
    assert (float(clip["PR"]), float(clip["object PR"])) == (0.866, 0.955)

    text = (out / "leaderboard.md").read_text(encoding="utf-8")
    assert "## LGIP leaderboard (3 measured models)" in text and f"*{reference.LABEL}*" in text
    tiny = runs["tiny"].statistics
    assert f"{tiny['PR']:.4f} [{tiny['intervals']['PR'][0]:.4f}, {tiny['intervals']['PR'][1]:.4f}]" in text


def test_skip_existing_reads_complete_runs_and_scores_changed_ones(swept, models, capsys, tmp_path):
    out = swept["out"]
    before = {p: p.read_bytes() for p in out.glob("*/results.json")}
    capsys.readouterr()
    assert lgip([*swept["args"], "--skip-existing"]) == 0
    printed = capsys.readouterr().out
    assert printed.count("(skipped)") == 3 and "(evaluated)" not in printed
    assert {p: p.read_bytes() for p in out.glob("*/results.json")} == before  # nothing scored again
    assert "leaderboard.md" in printed

    folder = out / sweep.model_slug(models["tiny"])
    same = dict(limit=int(LIMIT), bootstrap=20, device="cpu")
    assert sweep.existing_run(models["tiny"], folder, **same).path == folder / "results.json"
    assert sweep.existing_run(models["tiny"], folder, **{**same, "seed": 1}) is None  # other options
    assert sweep.existing_run(models["tiny"], folder, **{**same, "limit": 60}) is None
    assert sweep.existing_run(models["other"], folder, **same) is None  # another model's run
    copy = shutil.copytree(folder, tmp_path / folder.name)
    (copy / "scores.parquet").write_bytes(b"cut")  # no longer a complete run: scored again
    assert sweep.existing_run(models["tiny"], copy, **same) is None


def test_a_model_that_cannot_load_is_reported_and_the_others_still_run(models, tmp_path, capsys):
    out = tmp_path / "out"
    code = lgip(evaluate("--model", f"{models['broken']},{models['tiny']}", "--out", str(out),
                         "--cache-dir", str(models["root"] / "cache")))
    captured = capsys.readouterr()
    assert code == 1
    assert "1 of 2 models failed" in captured.err and models["broken"] in captured.err.splitlines()[-1]
    assert "could not load" in captured.err
    assert (out / "tiny-clip" / "results.json").is_file()
    rows = list(csv.DictReader((out / "leaderboard.csv").open(encoding="utf-8")))
    assert [row["model"] for row in rows if row["source"] == "measured"] == [
        load_results(out / "tiny-clip").label]


def test_lgip_report_reads_a_sweep_folder(swept, tmp_path, capsys):
    assert lgip(["report", str(swept["out"]), "--out", str(tmp_path / "report")]) == 0
    text = (tmp_path / "report" / "leaderboard.md").read_text(encoding="utf-8")
    assert "(3 measured models)" in text
    tables = [pd.read_csv(folder / "leaderboard.csv") for folder in (tmp_path / "report", swept["out"])]
    pd.testing.assert_frame_equal(*(t.drop(columns="results") for t in tables))
    # each table names the results files from its own folder: the same files, so a moved folder keeps its table
    files = [[(folder / name).resolve() for name in t["results"].dropna()]
             for folder, t in zip((tmp_path / "report", swept["out"]), tables)]
    assert files[0] == files[1] and all(f.is_file() for f in files[0])
    assert lgip(["report", str(tmp_path / "report"), "--out", str(tmp_path / "again")]) == 2
    assert "no such results file" in capsys.readouterr().err  # neither a run nor a folder of runs


def test_an_empty_model_name_is_refused_by_the_parser(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        lgip(["evaluate", "--model", "tiny-clip,,tiny-clip", "--out", str(tmp_path / "out")])
    assert exit_.value.code == 2 and "an empty name in 'tiny-clip,,tiny-clip'" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--model", "tiny-clip,tiny-clip"], "'tiny-clip' is listed twice"),
    (["--models-file", "{root}/absent.txt"], "absent.txt: cannot read it"),
    (["--models-file", "{root}/comments.txt"], "comments.txt: names no model"),
    (["--models-file", "{root}/unknown.txt"], "unknown.txt: 'no-such-model'"),
    ([], "give the model to evaluate"),
])
def test_bad_sweep_input_is_refused_before_any_model_runs(args, message, tmp_path, capsys):
    (tmp_path / "comments.txt").write_text("# nothing\n\n", encoding="utf-8")
    (tmp_path / "unknown.txt").write_text("tiny-clip\nno-such-model\n", encoding="utf-8")
    args = [arg.format(root=tmp_path) for arg in args]
    assert lgip(["evaluate", *args, "--out", str(tmp_path / "out")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_evaluate_warns_about_few_images_as_audit_does(swept, capsys, tmp_path):
    out = tmp_path / "one"
    assert lgip(evaluate("--model", "tiny-clip", "--out", str(out), "--cache-dir", str(swept["root"] / "cache"))) == 0
    err = capsys.readouterr().err
    assert f"warning: open_clip:lgip-tiny-clip [random weights] on {LIMIT} of {LIMIT} rows (--limit {LIMIT}" in err
    assert f"fewer than {measurable.MIN_IMAGES} images" in err and measurable.RULE in err

    before = (out / "results.json").read_bytes()
    assert lgip(evaluate("--model", "tiny-clip", "--out", str(out), "--skip-existing")) == 0  # one model: OUT is its run
    assert f"skipped tiny-clip: {out} holds a complete run" in capsys.readouterr().out
    assert (out / "results.json").read_bytes() == before

    results = load_results(out)
    for images, expected in ((50, measurable.few_images_warning({"paper flips": 50, "hard flips": 50}, "X")),
                             (measurable.WARN_IMAGES, [])):
        data = json.loads(json.dumps(results.data))
        for block in (data["statistics"], data["statistics"]["hard"]):
            for counts in block["counts"].values():
                counts["images"] = images
        warnings = few_images_warnings(type(results)(results.path, data))
        assert len(warnings) == len(expected)  # measurable's own warning, after where the run is
        assert all(w.endswith(e.removeprefix("X: ")) for w, e in zip(warnings, expected))


def test_model_slugs_name_local_folders_by_their_own_name(tmp_path):
    (tmp_path / "my model").mkdir()
    assert sweep.model_slug("hf-hub:timm/ViT-B-16-SigLIP") == "hf-hub-timm-ViT-B-16-SigLIP"
    assert sweep.model_slug(f"local-dir:{tmp_path / 'my model'}") == "local-dir-my-model"
    assert sweep.model_slug(str(tmp_path / "my model")) == "my-model"
    assert sweep.model_slug("random:tiny-clip") == "random-tiny-clip"
    with pytest.raises(DataError, match="would share the run folder"):
        sweep.run_folders(["ViT-B-32/openai", "ViT-B-32:openai"], tmp_path)
