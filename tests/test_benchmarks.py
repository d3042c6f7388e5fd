"""The benchmark scripts run end to end on tiny inputs (what they print is checked, never a time)."""
from __future__ import annotations

import subprocess
import sys

from helpers.paths import REPO


def _run(script: str, *args: str) -> str:
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / script), *args], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_bench_scoring_prints_engine_naive_floor_and_drift():
    out = _run("bench_scoring.py", "--model", "random:tiny-clip", "--rows", "60", "--naive-rows", "4",
               "--num-workers", "0", "--device", "cpu", "--drift", "bf16")
    for label in ("engine", "naive", "floor old", "floor new", "unpacked", "ratios    engine/naive =", "drift     bf16",
                  "packing   on:", "would take", "floor new bf16:"):
        assert label in out
    per_token = {line.split()[1]: float(line.rsplit("= ", 1)[1].split()[0]) for line in out.splitlines()
                 if line.startswith("floor ") and "per token" in line}
    assert per_token["new"] < 0.9 < 1.0 <= per_token["old"]  # the packed floor computes fewer tokens than there are
    assert "tokens computed new/old floor = 0." in out


def test_bench_metric_prints_both_paths_and_the_ratio():
    out = _run("bench_metric.py", "--rows", "20000", "--bootstrap", "10", "--repeat", "1")
    assert "lgip_metric.stats, point estimates" in out and "evaluate.load(...).compute" in out
    assert "ratio evaluate.compute / stats" in out


def test_draw_flips_is_seeded_and_refuses_too_many():
    from lgip_dataset import SAMPLE_DIR

    out = _run("draw_flips.py", str(SAMPLE_DIR), "--n", "5", "--seed", "3")
    assert out == _run("draw_flips.py", str(SAMPLE_DIR), "--n", "5", "--seed", "3")
    rows = out.splitlines()[2:]
    assert len(rows) == 5 and out != _run("draw_flips.py", str(SAMPLE_DIR), "--n", "5", "--seed", "4")
    for row in rows:
        _, kind, caption, flip, *_ = row.split(" | ")
        assert kind in ("object", "color", "count") and caption != flip
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "draw_flips.py"), str(SAMPLE_DIR), "--n",
                           "10000000"], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode != 0 and "ask for --n" in done.stderr and "Traceback" not in done.stderr


def test_draw_flips_keeps_its_sample_when_other_flips_change(monkeypatch):
    """A rebuild that drops or changes some flips changes only those in the draw: every other drawn
    flip keeps its place, so its judgement carries over."""
    import importlib.util

    import datasets

    from lgip_dataset import SAMPLE_DIR

    spec = importlib.util.spec_from_file_location("draw_flips", REPO / "benchmarks" / "draw_flips.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    types = {"object", "color", "count"}
    full = [(r["caption"], r["variant"]) for r in module.draw(SAMPLE_DIR, 6, 3, types)]
    real = datasets.load_dataset

    def rebuilt(*args, **kwargs):  # the first drawn flip and every other undrawn row are gone
        pairs = real(*args, **kwargs)
        return pairs.filter(lambda r, i: (r["caption"], r["variant"]) != full[0]
                            and ((r["caption"], r["variant"]) in full or i % 2 == 0), with_indices=True)
    monkeypatch.setattr(datasets, "load_dataset", rebuilt)
    again = [(r["caption"], r["variant"]) for r in module.draw(SAMPLE_DIR, 6, 3, types)]
    assert again[:5] == full[1:] and again[5] not in full


def test_blind_judging_draws_per_type_and_tallies_a_judged_file(tmp_path):
    """`draw --per-type` gives --n flips of each type in one seeded, blinded sheet; `tally --json` writes the
    counts per type that `lgip audit --judged` reads."""
    import json

    from lgip_dataset import SAMPLE_DIR
    from lgip_metric.audit.extended import read_judged

    sheet, key = tmp_path / "sheet.md", tmp_path / "key.json"
    _run("blind_judging.py", "draw", str(SAMPLE_DIR), "--n", "3", "--types", "object,color", "--per-type",
         "--sheet", str(sheet), "--key", str(key))
    items = json.loads(key.read_text())
    assert sorted(k["type"] for k in items) == ["color"] * 3 + ["object"] * 3
    assert "object" not in sheet.read_text().split("\n", 2)[2]  # no type on the judge's sheet
    labels = tmp_path / "labels.tsv"
    labels.write_text("".join(f"{k['item']}\t{'absurd' if k['item'] == 1 else 'valid'}\tr\n" for k in items))
    out = tmp_path / "judged.json"
    _run("blind_judging.py", "tally", "--key", str(key), "--labels", str(labels), "--json", str(out))
    judged = read_judged(out)
    assert {t: c["drawn"] for t, c in judged.items()} == {"color": 3, "object": 3}
    assert sum(c["valid"] for c in judged.values()) == 5 and sum(c["absurd"] for c in judged.values()) == 1


def _cohen_kappa(first: list[str], second: list[str]) -> float:
    """Cohen's kappa by its definition: (observed - expected agreement) / (1 - expected)."""
    from collections import Counter

    n = len(first)
    observed = sum(a == b for a, b in zip(first, second)) / n
    left, right = Counter(first), Counter(second)
    expected = sum(left[label] * right[label] for label in set(first) | set(second)) / n ** 2
    return (observed - expected) / (1 - expected)


def test_blind_judging_tallies_the_majority_of_several_judges_with_their_agreement(tmp_path):
    """Three judges: the majority label counts (a tie counts against valid), and the agreement table gives each
    pair's Cohen's kappa as its definition does, and Fleiss' kappa."""
    import importlib.util
    import json
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("blind_judging", Path(__file__).parents[1] / "benchmarks/blind_judging.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    votes = [("valid", "valid", "absurd"), ("absurd", "absurd", "valid"), ("valid", "absurd", "not a contradiction"),
             ("valid", "valid", "valid"), ("linguistically invalid", "valid", "linguistically invalid"),
             ("valid", "valid", "valid")]
    key = [{"item": i + 1, "type": "hard_color" if i % 2 else "hard_object", "caption": f"c{i}", "variant": f"v{i}",
            "original_is": "A"} for i in range(len(votes))]
    (tmp_path / "key.json").write_text(json.dumps(key))
    files = []
    for judge in range(3):
        path = tmp_path / f"judge{judge}.tsv"
        path.write_text("".join(f"{i + 1}\t{v[judge]}\twhy {judge}\n" for i, v in enumerate(votes)))
        files += ["--labels", str(path)]
    out = tmp_path / "judged.json"
    printed = _run("blind_judging.py", "tally", "--key", str(tmp_path / "key.json"), *files, "--json", str(out))
    judges = [module.read_labels(Path(files[k]), len(votes)) for k in (1, 3, 5)]
    assert [label for label, _ in module.majority(judges).values()] == [
        "valid", "absurd", "absurd", "valid", "linguistically invalid", "valid"]
    counts = json.loads(out.read_text())["per_type"]
    assert sum(c["valid"] for c in counts.values()) == 3
    first, second = [v[0] for v in votes], [v[1] for v in votes]
    assert f"| 1 and 2 | {4 / 6:.1%} | {_cohen_kappa(first, second):.2f} |" in printed
    assert "Fleiss' kappa over 3 judges" in printed and "Majority of 3 independent blind judges" in printed


def test_bench_scale_prints_peak_rss_growth_and_extrapolation(sample_coco_dir):
    out = _run("bench_scale.py", "--coco", str(sample_coco_dir), "--sizes", "3", "6", "--width", "64")
    assert "peak RSS MB" in out and "MB peak RSS per 1,000 images" in out and "extrapolated to 40,000 images" in out


def test_hard_coverage_prints_coverage_per_pool_and_the_projection(sample_coco_dir):
    captions = sample_coco_dir / "annotations" / "captions_val2017.json"
    out = _run("hard_coverage.py", "--captions", str(captions), "--sample", "40", "--fractions", "0.5", "1")
    rows = [line.split() for line in out.splitlines() if line.split() and line.split()[0].replace(",", "").isdigit()]
    assert len(rows) == 2 and int(rows[0][0].replace(",", "")) < int(rows[1][0].replace(",", ""))
    assert all(0.0 <= float(row[1].rstrip("%")) <= 100.0 for row in rows)
    assert "per doubling of the captions counted" in out and "projected to 616,767 captions" in out
    for bad, says in ((["--captions", "missing.json"], "captions file not found: missing.json"),
                      (["--captions", str(captions), "--sample", "100000"], "ask for fewer")):
        done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "hard_coverage.py"), *bad],
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode != 0 and says in done.stderr and "Traceback" not in done.stderr
