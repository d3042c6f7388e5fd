"""fp32 scores stay put: the embedded sample scored by the tiny random-weight CLIP equals, within 1e-5 and
with every decision the same, the scores pinned in ``tests/fixtures`` (``builders/pin_sample_scores.py``).
A faster kernel or a changed batching that moves a score past that fails here, whatever the speed."""
from __future__ import annotations

import sys

import numpy as np
import pyarrow.parquet as pq

from helpers.paths import REPO

sys.path.insert(0, str(REPO / "builders"))
import pin_sample_scores  # noqa: E402


def test_fp32_scores_of_the_sample_equal_the_pinned_ones():
    pinned = pq.read_table(pin_sample_scores.PINNED).to_pandas().set_index("row_id")
    scored = pin_sample_scores.score_sample().set_index("row_id")
    assert list(scored.index) == list(pinned.index) and len(pinned) > 2000
    for column in ("s_original", "s_variant"):
        assert np.abs(scored[column].to_numpy() - pinned[column].to_numpy()).max() <= 1e-5, column
    decided = scored["s_original"].to_numpy() > scored["s_variant"].to_numpy()
    assert np.array_equal(decided, pinned["s_original"].to_numpy() > pinned["s_variant"].to_numpy())
