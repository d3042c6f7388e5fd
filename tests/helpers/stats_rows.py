"""Random score tables for the statistics tests: uneven variant counts, ties, shuffled rows."""
from __future__ import annotations

import numpy as np

PARAPHRASE_TYPES = ("template", "marker")
FLIP_TYPES = ("object", "color", "count")
FIELDS = ("original_scores", "variant_scores", "variant_kinds", "variant_types", "caption_ids", "image_ids")



def random_rows(seed: int, n_images: int = 25, flip_types=FLIP_TYPES, int_ids: bool = False) -> dict:
    """Uneven variant counts (0-8 per caption and kind), ~15% ties, shuffled row order.

    Two images share a caption id on purpose: a base pair is (image, caption), not the caption.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for image in range(n_images):
        for caption in range(int(rng.integers(1, 6))):
            caption_id = caption * 1000 + image // 2 if int_ids else f"c{caption}-{image // 2}"
            s_original = round(float(rng.uniform(0.1, 0.4)), 2)
            for kind, types in (("paraphrase", PARAPHRASE_TYPES), ("flip", flip_types)):
                for _ in range(int(rng.integers(0, 9))):
                    type_ = types[int(rng.integers(0, len(types)))]
                    tie = rng.random() < 0.15
                    s_variant = s_original if tie else round(s_original + float(rng.normal(0, 0.05)), 2)
                    rows.append((s_original, s_variant, kind, type_, caption_id, 7 * image + 3))
    rows = [rows[i] for i in rng.permutation(len(rows))]
    out = {name: [r[i] for r in rows] for i, name in enumerate(FIELDS)}
    if not int_ids:
        out["image_ids"] = [f"img{i:04d}" for i in out["image_ids"]]
    return out
