"""The engine's unique texts, hashed in Arrow, equal the plain Python computation."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lgip_dataset.errors import DataError
from lgip_metric.scoring.score_inputs import long_pairs, read_alike, unique_texts
from lgip_metric.scoring.texts import TokenIds

# Few letters (so texts repeat and collide after normalisation), with accents, CJK and astral code points.
texts = st.text(alphabet=st.sampled_from("aAbB é\u00c9\u4e2d\U0001f600.\u00df"), max_size=6)
NORMALIZERS = {"identity": lambda x: x, "lower": str.lower, "strip-casefold": lambda x: x.strip().casefold()}


def python_unique_texts(columns: list[list[str]], normalize) -> tuple[list[str], list[np.ndarray]]:
    """Sorted distinct normalised texts and each column's index into them, in plain Python."""
    uniques = sorted({normalize(x) for column in columns for x in column})
    where = {x: i for i, x in enumerate(uniques)}
    return uniques, [np.array([where[normalize(x)] for x in column], np.int64) for column in columns]


def table(**columns) -> pa.Table:
    return pa.table({name: pa.array(values, pa.string()) for name, values in columns.items()})


@given(pairs=st.lists(st.tuples(texts, texts), max_size=30), group=st.lists(st.tuples(texts, texts), max_size=5),
       normalizer=st.sampled_from(sorted(NORMALIZERS)))
def test_unique_texts_equal_python_sorted_sets(pairs, group, normalizer):
    normalize = NORMALIZERS[normalizer]
    rows = table(row_id=[str(i) for i in range(len(pairs))], caption=[c for c, _ in pairs], variant=[v for _, v in pairs])
    groups = table(group_id=[str(i) for i in range(len(group))], caption_a=[a for a, _ in group],
                   caption_b=[b for _, b in group])
    uniques, *codes = unique_texts(rows, normalize, groups)
    want, want_codes = python_unique_texts([rows.column(n).to_pylist() for n in ("caption", "variant")]
                                           + [groups.column(n).to_pylist() for n in ("caption_a", "caption_b")], normalize)
    assert uniques == want
    assert len(codes) == 4 and all(c.dtype == np.int64 and np.array_equal(c, w) for c, w in zip(codes, want_codes))


def test_unique_texts_of_many_chunks_and_a_wider_column():
    """Columns split in several Arrow chunks and of both string widths hash as one."""
    words = [f"text {i % 977}" for i in range(10_000)]
    caption = pa.chunked_array([pa.array(words[:6000]), pa.array(words[6000:])])
    variant = pa.chunked_array([pa.array([w.upper() for w in words], pa.large_string())])
    rows = pa.table({"row_id": [str(i) for i in range(len(words))], "caption": caption, "variant": variant})
    uniques, caption_idx, variant_idx = unique_texts(rows, str.lower)
    assert uniques == sorted(set(words))
    assert np.array_equal(caption_idx, variant_idx) and [uniques[i] for i in caption_idx] == words


@pytest.mark.parametrize("column", ["caption", "variant"])
def test_a_row_without_text_is_named(column):
    values = {"caption": ["a", "b", "c"], "variant": ["x", "y", "z"]}
    values[column][1] = None
    with pytest.raises(DataError, match=r"row 'r1' of the dataset has no caption/variant text"):
        unique_texts(table(row_id=["r0", "r1", "r2"], **values), str)


def test_a_group_without_caption_is_named():
    rows = table(row_id=["r0"], caption=["a"], variant=["b"])
    groups = table(group_id=["g0", "g1"], caption_a=["a", "c"], caption_b=["d", None])
    with pytest.raises(DataError, match=r"group 'g1' of the dataset's groups config has no caption text"):
        unique_texts(rows, str, groups)


class _CharEncoder:
    """A stand-in encoder: lower-cases, one token per character, cut at a context of 8 (and counts its texts)."""

    context = 8

    def __init__(self):
        self.tokenised: list[str] = []

    def settings(self) -> dict:
        return {"text": {"context_length": self.context}}

    def provenance(self) -> dict:  # read_alike must not wait for the weights hash
        raise AssertionError("read_alike asked for the provenance")

    def normalize_text(self, text: str) -> str:
        return text.lower()

    def tokenize(self, texts: list[str]) -> list[list[int]]:
        self.tokenised.extend(texts)
        return [[ord(c) for c in t][: self.context] for t in texts]


@given(pairs=st.lists(st.tuples(st.text("aAb ", max_size=11), st.text("aAb ", max_size=11)), max_size=25),
       kept=st.sets(st.integers(0, 50)))
def test_read_alike_equals_comparing_the_cut_ids_of_long_rows(pairs, kept):
    """Long rows compare their cut ids: those the plan kept (``kept`` text positions) are read, not tokenised;
    every other distinct text is tokenised once, and only texts of long rows are."""
    rows = table(row_id=[str(i) for i in range(len(pairs))], caption=[c for c, _ in pairs], variant=[v for _, v in pairs])
    encoder = _CharEncoder()
    texts, caption_idx, variant_idx = unique_texts(rows, encoder.normalize_text)
    held = np.array(sorted(p for p in kept if p < len(texts)), np.int64)
    ids = [[ord(c) for c in texts[p]][: encoder.context] for p in held]
    tokens = TokenIds(len(texts), held, [(np.array([t for x in ids for t in x], np.int32), np.array([len(x) for x in ids]))])
    candidates = long_pairs(encoder, rows, caption_idx, variant_idx)
    got = read_alike(encoder, texts, caption_idx, variant_idx, candidates, tokens)
    cut = lambda t: t.lower()[: encoder.context]  # noqa: E731
    want = [c.lower() == v.lower() or (min(len(c), len(v)) >= encoder.context and cut(c) == cut(v)) for c, v in pairs]
    assert got.tolist() == want
    long = {texts[p] for r in candidates for p in (caption_idx[r], variant_idx[r])}
    assert sorted(encoder.tokenised) == sorted(long - {texts[p] for p in held})  # each once, none of those kept
    encoder.tokenised.clear()
    assert read_alike(encoder, texts, caption_idx, variant_idx, candidates).tolist() == want  # nothing kept
    assert sorted(encoder.tokenised) == sorted(long)
