"""The validated rows beside all rows (``lgip evaluate --validated``): per flip type, its rows and the model's
PR (n-way accuracy for the scrambles) on all scored rows and on those the validated rule keeps."""
from __future__ import annotations

import pandas as pd

from lgip_dataset.judging import RULE
from lgip_metric import stats
from lgip_metric.statistics import score_table


def validated_vs_all(all_rows: pd.DataFrame, validated: pd.DataFrame, *, pair_level: bool = False,
                     extra_types=()) -> dict:
    """``{"rule", "rows": {"all", "validated"}, "per_type": {type: {"metric", "rows_all", "rows_validated",
    "all", "validated"}}}`` for every flip type of ``all_rows`` (a score table) and its subset ``validated``,
    point estimates averaged as the run's statistics are (``validated`` is None for a type it has no row of)."""
    options = dict(pair_level=pair_level, extra_types=extra_types, bootstrap=0, require_both_kinds=False)
    blocks = {name: score_table.statistics(frame, **options)["per_type"] if len(frame) else {}
              for name, frame in (("all", all_rows), ("validated", validated))}
    rows = {name: frame.loc[frame["kind"] == stats.FLIP, "type"].value_counts()
            for name, frame in (("all", all_rows), ("validated", validated))}
    per_type = {}
    for type_, block in blocks["all"].items():
        if block["kind"] != stats.FLIP:
            continue
        metric = stats.NWAY if stats.NWAY in block else "PR"
        per_type[type_] = {"metric": metric, "rows_all": int(rows["all"].get(type_, 0)),
                           "rows_validated": int(rows["validated"].get(type_, 0)), "all": block[metric],
                           "validated": blocks["validated"].get(type_, {}).get(metric)}
    return {"rule": RULE, "rows": {"all": len(all_rows), "validated": len(validated)}, "per_type": per_type}
