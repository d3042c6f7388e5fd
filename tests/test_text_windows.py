"""Texts planned window by window of images: the texts the join holds for a partner stay bounded as a set
grows (planned all at once, a caption waits for its last variant across the whole set, and the held
embeddings grew the scale check's peak memory by about 50 MB per 1,000 images at d = 1024), and one window
plans exactly as before."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from lgip_dataset import SAMPLE_DIR
from lgip_metric.models import load_model
from lgip_metric.scoring.distributed import Context
from lgip_metric.scoring.join import ScoreJoin
from lgip_metric.scoring.score_inputs import unique_texts
from lgip_metric.scoring.texts import image_windows, plan_batches, window_spans

SAMPLE_PAIRS = next((SAMPLE_DIR / "pairs").glob("*.parquet"))


@pytest.fixture(scope="module")
def encoder():
    return load_model("random:ViT-B-32", device="cpu")  # a causal text tower: the tree-packed plan


def replicated(copies: int, shared: str | None = None) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """The sample's pairs ``copies`` times over as other images (each copy's texts end in their own words),
    as the engine indexes them: unique texts, and per row its image, caption and variant positions. With
    ``shared``, each caption has one more row whose variant is that text, the same for every image."""
    pairs = pq.read_table(SAMPLE_PAIRS, columns=["image_id", "caption", "variant"]).to_pandas()
    if shared:
        extra = pairs.drop_duplicates("caption").assign(variant=shared)
        pairs = pd.concat([pairs, extra], ignore_index=True).sort_values("image_id", kind="stable")
    frames = [pairs.assign(image=pairs["image_id"].rank(method="dense").astype(int) - 1 + copy * pairs["image_id"].nunique(),
                           caption=pairs["caption"] + f" near site {copy}",
                           variant=pairs["variant"].where(pairs["variant"] == shared, pairs["variant"] + f" near site {copy}"))
              for copy in range(copies)]
    rows = pa.Table.from_pandas(pd.concat(frames, ignore_index=True), preserve_index=False)
    texts, caption_idx, variant_idx = unique_texts(rows, lambda text: text)
    return texts, rows.column("image").to_numpy(), caption_idx, variant_idx


def most_held(encoder, copies: int, images_per_window: int | None, shared: str | None = None) -> tuple[int, int]:
    """The most text embeddings the engine's join holds at once over the engine's plan (last batch first),
    and the number of images."""
    texts, images, caption_idx, variant_idx = replicated(copies, shared)
    columns = {"s_original": (images, caption_idx), "s_variant": (images, variant_idx)}
    windows = image_windows(len(texts), columns.values(), images_per_window) if images_per_window else None
    plan, _ = plan_batches(encoder, texts, np.arange(len(texts)), 64, Context(), False, 0, windows)
    join = ScoreJoin(torch.randn(int(images.max()) + 1, 4), len(texts), columns, (caption_idx, variant_idx))
    most = 0
    for item in plan[::-1]:
        batch = np.concatenate(item)
        join.add(batch, torch.randn(len(batch), 4))
        most = max(most, join.held())
    assert join.held() == 0 and not np.isnan(join.values["text"]).any()  # every row scored, nothing left held
    return most, int(images.max()) + 1


def test_planning_by_window_bounds_what_the_join_holds_and_all_at_once_does_not(encoder):
    small, images_small = most_held(encoder, 1, 25)
    large, images_large = most_held(encoder, 6, 25)
    assert images_large == 6 * images_small == 300
    assert large <= 1.25 * small  # bounded by a window, whatever the set's size
    once_small, _ = most_held(encoder, 1, None)
    once_large, _ = most_held(encoder, 6, None)
    assert once_large >= 4 * once_small and once_large > 3 * large  # the regression this guards against


def test_a_variant_of_every_image_is_held_once_not_a_caption_per_image(encoder):
    """A short caption's variant can be another image's too: it comes with the first window the engine runs
    that names it, so the captions of the other windows never wait for it."""
    small, _ = most_held(encoder, 1, 25, shared="A photo.")
    large, _ = most_held(encoder, 6, 25, shared="A photo.")
    assert large <= 1.25 * small


def test_one_window_plans_exactly_as_no_windows(encoder):
    texts, images, caption_idx, variant_idx = replicated(2)
    columns = [(images, caption_idx), (images, variant_idx)]
    everything = plan_batches(encoder, texts, np.arange(len(texts)), 64, Context(), False, 0)[0]
    one = plan_batches(encoder, texts, np.arange(len(texts)), 64, Context(), False, 0,
                       image_windows(len(texts), columns, 10_000))[0]
    assert [[p.tolist() for p in batch] for batch in one] == [[p.tolist() for p in batch] for batch in everything]


def test_a_text_goes_to_the_last_window_that_names_it_and_spans_keep_their_order():
    windows = image_windows(6, [(np.array([0, 3, 7, 9]), np.array([1, 2, 2, 4])), (np.array([5]), np.array([0]))], 4)
    assert windows.tolist() == [1, 0, 1, 0, 2, 0]  # text 2 is named in windows 0 and 1; texts 3 and 5 by no row
    spans = window_spans(np.array([0, 1, 2, 3, 4, 5]), windows)
    assert [s.tolist() for s in spans] == [[1, 3, 5], [0, 2], [4]]
    assert [s.tolist() for s in window_spans(np.array([4, 0]), None)] == [[4, 0]]
