"""Labels in a build: the label stores ``lgip build`` applies to its flips (the ``judged`` column of ``pairs``),
and the validated rule that ``lgip build`` (the ``validated`` config) and ``lgip evaluate --validated`` share."""
from __future__ import annotations

from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from lgip_dataset import schema
from lgip_dataset.judging.labels import VALID, judged_record
from lgip_dataset.judging.store import read_store
from lgip_dataset.perturb.registry import variant_types
from lgip_dataset.sources.statistics_captions import file_sha256

RULE_GROUPS = ("core", "hard")  # the groups whose unlabelled flips stand validated by their rules and sampled draws
# Every judge, not most: of the validated compositional flips that later sealed draws judged again (three fresh
# judges each, 2.13.0-2.21.0), those with a dissenting label (2 of 3 valid) were not valid to the fresh majority 8
# times in 26, those all judges called valid 10 times in 508
RULE = ("every paraphrase; a flip every judge labelled valid (of hard_relation, spatial and binding, those "
        "the build chose across its valid flips so that text alone cannot tell them); an unlabelled flip of a core or "
        "hard type (validated by its rules and sampled draws); no other flip (an unlabelled extended or imported one)")


@lru_cache(maxsize=None)
def _group(type_: str) -> str:
    """The registry's group of a type; "imported" for a type it does not list (a probe set's own subset)."""
    return variant_types().get(type_, {}).get("group", "imported")


def validated(kind: str, type_: str, labels: Sequence[str] | None) -> bool:
    """Whether the validated rule keeps a row (:data:`RULE`): ``labels`` are its flip's judges' labels, None (or
    none) for a flip nobody labelled."""
    if kind != schema.FLIP:
        return True
    if labels:
        return all(label == VALID for label in labels)
    return _group(type_) in RULE_GROUPS


def validated_mask(kinds: Sequence[str], types: Sequence[str], labels: Sequence[Sequence[str] | None]) -> np.ndarray:
    """:func:`validated` of every row, as a boolean array (decided once per distinct kind, type and labels)."""
    decided: dict[tuple, bool] = {}
    rows = zip(kinds, types, (None if judged is None else tuple(judged) for judged in labels))
    return np.fromiter((decided[row] if row in decided else decided.setdefault(row, validated(*row)) for row in rows),
                       dtype=bool, count=len(kinds))


class LabelStores:
    """The label stores a build applies, read (and checked) when made: their labels of each flip, joined by
    judge (a judge's label in a later store replaces their label in an earlier one)."""

    def __init__(self, paths: Sequence[str | Path]):
        self.paths = [Path(p) for p in paths]
        self.stores = [read_store(path, "--judged") for path in self.paths]
        self.sha256 = [file_sha256(path) for path in self.paths]
        self.labels: dict[tuple[str, str], list[dict]] = {}
        for store in self.stores:
            for key, record in store.items():
                joined = {entry["judge"]: entry for entry in self.labels.get(key, [])}
                joined.update({entry["judge"]: entry for entry in record["labels"]})
                self.labels[key] = list(joined.values())

    def apply(self, captions: Sequence[str], variants: Sequence[str], kinds: Sequence[str],
              types: Sequence[str]) -> tuple[list[dict | None], dict]:
        """The ``judged`` value of every row (None for a paraphrase and an unlabelled flip), matched by the exact
        texts, and the record of what was applied: per store its file name, SHA-256, records and records matched;
        per flip type with labels its flips, flips judged and flips whose majority is valid."""
        column: list[dict | None] = []
        flips, judged, valid = Counter(), Counter(), Counter()
        for caption, variant, kind, type_ in zip(captions, variants, kinds, types):
            labels = self.labels.get((caption, variant)) if kind == schema.FLIP else None
            record = judged_record(labels) if labels else None
            column.append(record)
            flips[type_] += kind == schema.FLIP
            judged[type_] += record is not None
            valid[type_] += record is not None and record["majority"] == VALID
        made = {(c, v) for c, v, kind in zip(captions, variants, kinds) if kind == schema.FLIP}
        stores = [{"file": path.name, "sha256": sha, "records": len(store), "matched": len(made & store.keys())}
                  for path, sha, store in zip(self.paths, self.sha256, self.stores)]
        per_type = {t: {"flips": flips[t], "judged": judged[t], "valid": valid[t]} for t in sorted(judged) if judged[t]}
        return column, {"stores": stores, "flips_judged": sum(judged.values()), "per_type": per_type}
