"""2x2 group scores (EqBen / Winoground) against an independent loop."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers.groups import loop_scores

from lgip_metric.statistics.groups import group_outcomes, group_scores


def test_group_scores_match_a_loop_with_ties_failing():
    rng = np.random.default_rng(0)
    values = rng.choice([0.1, 0.2, 0.3, 0.4], size=(400, 4))  # many ties on purpose
    types = rng.choice(["color", "spatial", "object"], size=400)
    frame = pd.DataFrame(values, columns=["s_a_ca", "s_a_cb", "s_b_ca", "s_b_cb"]).assign(type=types)
    result = group_scores(frame)
    expected = np.array([loop_scores(tuple(v)) for v in values])
    for k, name in enumerate(("text", "image", "group")):
        assert result[name] == pytest.approx(expected[:, k].mean())
        for type_ in set(types):
            assert result["per_type"][type_][name] == pytest.approx(expected[types == type_, k].mean())
            assert result["per_type"][type_]["groups"] == (types == type_).sum()
    assert result["groups"] == 400
    tie = group_outcomes([0.3], [0.3], [0.1], [0.5])
    assert not tie["text"][0] and tie["image"][0] and not tie["group"][0]
    with pytest.raises(ValueError, match="no scored groups"):
        group_scores(frame.iloc[:0])
