"""The figures the pages repeat equal their records (lgip_dataset.records.figures), and the records equal what they
record."""
from __future__ import annotations

import importlib.util
import json

import pandas as pd
import pytest

from helpers.paths import REPO
from lgip_dataset import SAMPLE_DIR
from lgip_dataset.errors import DataError
from lgip_dataset.records import figures

spec = importlib.util.spec_from_file_location("figures_builder", REPO / "builders" / "figures.py")
builder = importlib.util.module_from_spec(spec)
spec.loader.exec_module(builder)

# figures the pages repeated with values that disagreed; each must now be read from its record
MUST_BE_MARKED = {"README.md": ["sample.rows", "sample.hard_flips", "sample_audit.hard.learners_low",
                                "held_out.val2017.hard.word", "held_out.val2017.paper.word", "judged.absurd",
                                "compositional.spatial.word_learner"],
                  "lgip_metric/README.md": ["held_out.val2017.paper.word"],
                  "docs/hard_flips.md": ["held_out.val2017.paper.word"],
                  "docs/probes.md": ["compositional.binding.pairs"]}


@pytest.mark.parametrize("page", builder.pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_marked_figure_of_the_page_equals_its_record(page):
    text = page.read_text(encoding="utf-8")
    known = figures.figures()
    wrong = [(m.group(1), m.group(2), known.get(m.group(1))) for m in figures.MARK.finditer(text)
             if known.get(m.group(1)) != m.group(2)]
    assert not wrong, (f"{page.relative_to(REPO)}: figures that differ from their records (name, page, record): "
                       f"{wrong}; run `python builders/figures.py`")


@pytest.mark.parametrize("page, names", MUST_BE_MARKED.items())
def test_the_figures_pages_disagreed_on_are_read_from_records(page, names):
    marked = {m.group(1) for m in figures.MARK.finditer((REPO / page).read_text(encoding="utf-8"))}
    assert set(names) <= marked, f"{page}: not marked: {sorted(set(names) - marked)}"


def test_render_writes_the_record_and_names_an_unknown_figure():
    page = "a <!-- figure: sample.hard_flips -->999<!-- /figure --> b"
    assert figures.render(page, "p.md", {"sample.hard_flips": "135"}) == page.replace("999", "135")
    with pytest.raises(DataError, match=r"p\.md: no record holds the figure 'nosuch'"):
        figures.render("<!-- figure: nosuch -->1<!-- /figure -->", "p.md", {})


def test_the_check_command_names_a_stale_page_and_fails(tmp_path, monkeypatch, capsys):
    page = tmp_path / "page.md"
    page.write_text("<!-- figure: sample.images -->7<!-- /figure -->\n", encoding="utf-8")
    monkeypatch.setattr(builder, "pages", lambda: [page])
    monkeypatch.setattr(builder, "REPO", tmp_path)
    assert builder.main(["--check"]) == 1
    assert "page.md" in capsys.readouterr().out and "7" in page.read_text()
    assert builder.main([]) == 0
    assert page.read_text() == f"<!-- figure: sample.images -->{figures.figures()['sample.images']}<!-- /figure -->\n"


def test_the_sample_figures_equal_the_sample_itself():
    pairs = pd.read_parquet(SAMPLE_DIR / "pairs")
    known = figures.figures()
    assert known["sample.rows"] == f"{len(pairs):,}"
    assert known["sample.images"] == str(pairs["image_id"].nunique())
    assert known["sample.hard_flips"] == str(int(pairs["type"].str.startswith("hard_").sum()))
    for kind, count in pairs["type"].value_counts().items():
        if f"sample.flips.{kind}" in known:
            assert known[f"sample.flips.{kind}"] == f"{count:,}"


def test_the_sample_audit_record_equals_a_fresh_audit_of_the_sample():
    from lgip_metric import audit

    source = audit.from_build(SAMPLE_DIR)
    fresh = audit.audit(source.frame, where="sample")
    recorded = json.loads(figures.SAMPLE_AUDIT.read_text(encoding="utf-8"))
    assert figures.sample_audit_figures(fresh) == figures.sample_audit_figures(recorded)
    assert recorded["input"]["source"] == "lgip_dataset/sample"  # no path of the machine it was measured on


def test_the_judged_figures_equal_the_counts_and_an_exact_interval():
    from scipy.stats import beta

    reference = figures.held_out_reference.load()
    known = figures.held_out_figures(reference)
    for name in ("judged", "judged_validated"):  # the sealed draws of all hard flips and of the validated ones
        judged = reference[name]
        n, k = judged["drawn"], judged["counts"]["absurd"]
        assert known[f"{name}.absurd"] == f"{k / n:.1%}"
        # Clopper-Pearson: the beta quantiles, with the ends 0 and 1 where no flip (or every flip) has the label
        low = beta.ppf(0.025, k, n - k + 1) if k else 0.0
        high = beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
        assert known[f"{name}.absurd.low"] == f"{low:.1%}" and known[f"{name}.absurd.high"] == f"{high:.1%}"
