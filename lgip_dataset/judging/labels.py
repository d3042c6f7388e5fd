"""The four labels a blind judge gives a flip, the majority of several judges, and a judge's label file."""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Sequence

from lgip_dataset.errors import DataError

VALID = "valid"
LABELS = (VALID, "linguistically invalid", "absurd", "not a contradiction")
LINE_FORMAT = "'<item>\\t<label>\\t<reason>'"
SHOWN_MISSING = 10  # the missing items a refusal names


def majority(labels: Sequence[str]) -> str:
    """The label most judges gave; a tie between labels goes to the first label that is not valid in
    :data:`LABELS` order (a flip counts as valid only when most judges say so)."""
    votes = Counter(labels)
    top = max(votes.values())
    winners = [label for label in LABELS if votes[label] == top]
    return next((w for w in winners if w != VALID), winners[0])


def disputed(labels: Sequence[str]) -> bool:
    """Whether no label has a strict majority of ``labels`` (two judges who disagree; three who all differ)."""
    return max(Counter(labels).values()) * 2 <= len(labels)


def judged_record(labels: Sequence[dict]) -> dict:
    """A flip's ``judged`` value in a build: its labels, their judges (in the store's order) and the majority."""
    return {"labels": [entry["label"] for entry in labels], "judges": [entry["judge"] for entry in labels],
            "majority": majority([entry["label"] for entry in labels])}


def read_labels(path: str | Path, items: int, key: str | None = None) -> dict[int, tuple[str, str]]:
    """item -> (label, reason) of one judge's label file: tab-separated lines ``<item>\\t<label>\\t<reason>``
    (the reason may be empty; ``#`` comments and blank lines are skipped), one line for each item 1..``items``.
    DataError naming the file and line of the first bad line (and ``key``, the sheet's key, where the file may
    be of another sheet): not that layout, an item that is not a whole
    number or out of range, an unknown label, an item labelled twice; or naming the first items left unlabelled."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()  # a spreadsheet's export may start with a BOM
    except FileNotFoundError:
        raise DataError(f"{path}: no such label file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise DataError(f"{path}: cannot read it as UTF-8 text ({err}); a label file holds lines {LINE_FORMAT}") from None
    labels: dict[int, tuple[str, str]] = {}
    first_line: dict[int, int] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item, label, reason = _parse(path, number, line, items, _of_key(key))
        if item in labels:
            raise DataError(f"{path}:{number}: item {item} is labelled again (first on line {first_line[item]}); "
                            "give each item one line")
        labels[item], first_line[item] = (label, reason), number
    missing = [item for item in range(1, items + 1) if item not in labels]
    if missing:
        more = f" and {len(missing) - SHOWN_MISSING} more" if len(missing) > SHOWN_MISSING else ""
        raise DataError(f"{path}: no label for item(s) {', '.join(map(str, missing[:SHOWN_MISSING]))}{more}; the sheet "
                        f"has items 1..{items}, each needs a line {LINE_FORMAT}{_of_key(key)}")
    return labels


def _of_key(key: str | None) -> str:
    """The question a refusal adds when the label file may be of another sheet than ``key``'s."""
    return f"; is it the label file of the sheet of {key}?" if key else ""


def _parse(path: Path, number: int, line: str, items: int, of_key: str) -> tuple[int, str, str]:
    """(item, label, reason) of one label line; DataError naming ``path``:``number`` and what is expected."""
    cells = line.split("\t")
    if len(cells) < 2:
        raise DataError(f"{path}:{number}: expected {LINE_FORMAT} (tab-separated), got {line[:80]!r}")
    item_text, label, reason = cells[0].strip(), cells[1].strip().lower(), "\t".join(cells[2:]).strip()
    if not (item_text.isascii() and item_text.isdigit()):
        raise DataError(f"{path}:{number}: item {item_text!r} is not a whole number; expected {LINE_FORMAT}")
    item = int(item_text)
    if not 1 <= item <= items:
        raise DataError(f"{path}:{number}: item {item} is not on the sheet (its items are 1..{items}){of_key}")
    if label not in LABELS:
        raise DataError(f"{path}:{number}: label {cells[1].strip()!r} is none of {', '.join(LABELS)}")
    return item, label, reason
