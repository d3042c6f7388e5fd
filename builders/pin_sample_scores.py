"""Write the scores the tests pin: the embedded sample scored in fp32 by the tiny random-weight CLIP.

    python builders/pin_sample_scores.py      # rewrites tests/fixtures/sample_scores_tiny_clip.parquet

``tests/test_pinned_scores.py`` scores the sample again and requires every score within 1e-5 of these and
every decision (caption above variant) the same. Rewrite them only on purpose, when a change is meant
to move the scores, and say so where the change is described.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from lgip_dataset import SAMPLE_DIR
from lgip_metric import api

PINNED = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "sample_scores_tiny_clip.parquet"
MODEL = "random:tiny-clip"


def score_sample():
    """The sample's score table in fp32 by :data:`MODEL` (no cache, no workers)."""
    with tempfile.TemporaryDirectory() as out:
        return api.score(MODEL, out, dataset=SAMPLE_DIR, cache_dir="none", num_workers=0, progress=False,
                         device="cpu").frame


def main() -> None:
    frame = score_sample()
    table = pa.table({"row_id": frame["row_id"].tolist(), "s_original": frame["s_original"].to_numpy(),
                      "s_variant": frame["s_variant"].to_numpy()})
    pq.write_table(table, PINNED, compression="zstd")
    print(f"pinned {table.num_rows:,} rows of {MODEL} on the embedded sample in {PINNED.name}")


if __name__ == "__main__":
    main()
