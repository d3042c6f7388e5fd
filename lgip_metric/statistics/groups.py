"""2x2 group scores (EqBen / Winoground) from ``groups_scores.parquet``.

A group has images A and B whose human captions cA and cB differ by exactly one flipped word.
With s(X, c) the similarity of image X and caption c (a tie fails, ">" is strict)::

    text  = 1[s(A,cA) > s(A,cB) and s(B,cB) > s(B,cA)]   (each image picks its own caption)
    image = 1[s(A,cA) > s(B,cA) and s(B,cB) > s(A,cB)]   (each caption picks its own image)
    group = text and image

Reported overall and per group type as the share of groups, with the number of groups.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

SCORES = ("text", "image", "group")
DESCRIPTION = ("text = 1[s(A,cA) > s(A,cB) and s(B,cB) > s(B,cA)], image = 1[s(A,cA) > s(B,cA) and "
               "s(B,cB) > s(A,cB)], group = both; strict '>' (a tie fails)")


def group_outcomes(s_a_ca, s_a_cb, s_b_ca, s_b_cb) -> dict[str, np.ndarray]:
    """Per group booleans ``text``, ``image`` and ``group`` from the four similarities."""
    s_a_ca, s_a_cb, s_b_ca, s_b_cb = (np.asarray(x, dtype=np.float64) for x in (s_a_ca, s_a_cb, s_b_ca, s_b_cb))
    text = (s_a_ca > s_a_cb) & (s_b_cb > s_b_ca)
    image = (s_a_ca > s_b_ca) & (s_b_cb > s_a_cb)
    return {"text": text, "image": image, "group": text & image}


def _block(outcomes: dict[str, np.ndarray], mask: np.ndarray) -> dict:
    n = int(mask.sum())
    return {**{name: float(values[mask].mean()) for name, values in outcomes.items()}, "groups": n}


def group_scores(frame: pd.DataFrame) -> dict:
    """Text, image and group scores overall and per ``type`` of a ``groups_scores`` table."""
    if not len(frame):
        raise ValueError("no scored groups: the groups config is empty or every group lost an image")
    outcomes = group_outcomes(frame["s_a_ca"], frame["s_a_cb"], frame["s_b_ca"], frame["s_b_cb"])
    types = frame["type"].to_numpy()
    return {
        "definition": DESCRIPTION,
        **_block(outcomes, np.ones(len(frame), dtype=bool)),
        "per_type": {t: _block(outcomes, types == t) for t in dict.fromkeys(types.tolist())},
    }
