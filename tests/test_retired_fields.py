"""A folder built before ``family`` was dropped (a copy of ``type`` in ``pairs`` and in the ``captions``
variant lists) still loads and scores the same: readers ignore the retired field."""
from __future__ import annotations

import shutil

import datasets
import pandas as pd
import pyarrow.parquet as pq

from lgip_dataset import SAMPLE_DIR, schema
from lgip_dataset.files import hub_io
from lgip_metric.scoring.engine import score_dataset

ROWS = 40


def _as_built_before(features: datasets.Features) -> datasets.Features:
    """``features`` with the string ``family`` after each ``kind``, as builds before its removal wrote them."""
    def old(feature):
        if isinstance(feature, datasets.List):
            return datasets.List(old(feature.feature))
        if not isinstance(feature, dict):
            return feature
        out = {}
        for name, f in feature.items():
            out[name] = old(f)
            if name == "kind":
                out["family"] = datasets.Value("string")
        return out
    return datasets.Features(old(dict(features)))


def _with_family(row: dict) -> dict:
    """A variant row as older builds wrote it: ``family`` = ``type``, or the probe set for an imported flip."""
    return {**row, "family": "sugarcrepe" if row["type"].startswith("sugarcrepe_") else row["type"]}


def old_sample(folder):
    """The embedded sample with its ``pairs`` and ``captions`` shards rewritten in the older layout."""
    shutil.copytree(SAMPLE_DIR, folder)
    pairs = [_with_family(r) for r in hub_io.load_config(SAMPLE_DIR, schema.PAIRS).to_list()]
    captions = [{**r, **{k: [_with_family(v) for v in r[k]] for k in ("paraphrases", "flips")}}
                for r in hub_io.load_config(SAMPLE_DIR, schema.CAPTIONS).to_list()]
    for config, rows in ((schema.PAIRS, pairs), (schema.CAPTIONS, captions)):
        (shard,) = (folder / config).glob("*.parquet")
        datasets.Dataset.from_list(rows, features=_as_built_before(schema.FEATURES[config])).to_parquet(str(shard))
    return folder


def test_a_folder_with_the_retired_family_field_loads_and_scores_the_same(tmp_path):
    old = old_sample(tmp_path / "old")
    pairs = hub_io.load_config(old, schema.PAIRS)
    assert pairs.features == _as_built_before(schema.PAIR_FEATURES)  # loaded as written
    assert pairs.remove_columns("family").to_list() == hub_io.load_config(SAMPLE_DIR, schema.PAIRS).to_list()
    captions = hub_io.load_config(old, schema.CAPTIONS)
    assert captions.features == _as_built_before(schema.CAPTION_FEATURES)  # family inside the variant lists
    assert captions.num_rows == hub_io.load_config(SAMPLE_DIR, schema.CAPTIONS).num_rows
    kwargs = dict(cache_dir="none", num_workers=0, progress=False, limit=ROWS)
    before = score_dataset("random:tiny-clip", old, tmp_path / "a", **kwargs)
    after = score_dataset("random:tiny-clip", SAMPLE_DIR, tmp_path / "b", **kwargs)
    assert pq.read_schema(before.scores_path).names == list(schema.SCORE_COLUMNS)  # the score file has no family
    pd.testing.assert_frame_equal(before.scores(), after.scores())
