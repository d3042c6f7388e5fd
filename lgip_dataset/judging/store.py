"""The label store: every blind label of every judged flip, one JSON Lines record per flip, keyed by its texts.

A record is ``{"caption", "variant", "type", "labels": [{"judge", "label", "reason", "sheet"}, ...]}``;
the labels keep the order they were first given in (a judge who labels the flip again replaces their own).
Records are written sorted by (type, caption, variant), so one set of labels is one file, byte for byte;
``.jsonl.gz`` is gzip-compressed with no time stamp. Keyed by the two texts, a label holds in any build
that makes the same flip (``lgip build --judged``).
"""
from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

from lgip_dataset.atomic import atomic_path
from lgip_dataset.errors import DataError
from lgip_dataset.judging.labels import LABELS

SUFFIXES = (".jsonl", ".jsonl.gz")
SHIPPED_STORE = Path(__file__).resolve().parents[1] / "reference" / "judged_flips.jsonl.gz"
RECORD_KEYS = ("caption", "variant", "type", "labels")
LABEL_KEYS = ("judge", "label", "reason", "sheet")

Store = dict[tuple[str, str], dict]  # (caption, variant) -> record


def default_stores() -> tuple[Path, ...]:
    """The stores a build applies unless told otherwise: the package's shipped store, where it is installed."""
    return (SHIPPED_STORE,) if SHIPPED_STORE.is_file() else ()


def check_store_name(path: str | Path, option: str) -> Path:
    """``path`` when it names a ``.jsonl`` or ``.jsonl.gz`` file; DataError naming ``option`` otherwise."""
    path = Path(path)
    if not path.name.endswith(SUFFIXES) or path.is_dir():
        raise DataError(f"{option} {path}: a label store is a .jsonl or .jsonl.gz file; name one")
    return path


def read_store(path: str | Path, option: str = "--store") -> Store:
    """The records of the store at ``path`` keyed by (caption, variant); DataError naming the file (and line)
    when it is missing, unreadable or holds a record that is not of the layout above."""
    path = check_store_name(path, option)
    try:
        raw = path.read_bytes()
        text = (gzip.decompress(raw) if path.name.endswith(".gz") else raw).decode("utf-8")
    except FileNotFoundError:
        raise DataError(f"{option} {path}: no such label store (`lgip judge merge` writes one)") from None
    except (OSError, EOFError, UnicodeDecodeError, gzip.BadGzipFile) as err:
        raise DataError(f"{option} {path}: cannot read it as {'gzip-compressed ' if path.name.endswith('.gz') else ''}"
                        f"UTF-8 JSON Lines ({err})") from None
    store: Store = {}
    lines: dict[tuple[str, str], int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        record = _record(f"{path}:{number}", line)
        key = (record["caption"], record["variant"])
        if key in store:
            raise DataError(f"{path}:{number}: the flip {key[1]!r} of {key[0]!r} has a record already (line "
                            f"{lines[key]}); a store holds one record per flip")
        store[key], lines[key] = record, number
    return store


def _record(where: str, line: str) -> dict:
    """One store line as a record; DataError naming ``where`` (file:line) and what is expected."""
    expected = (f"expected a JSON object with {', '.join(RECORD_KEYS)} (labels: a non-empty list of objects "
                f"with {', '.join(LABEL_KEYS)})")
    try:
        record = json.loads(line)
    except json.JSONDecodeError as err:
        raise DataError(f"{where}: not JSON ({err.msg}); {expected}") from None
    if not isinstance(record, dict) or not all(isinstance(record.get(k), str) for k in RECORD_KEYS[:3]) \
            or not isinstance(record.get("labels"), list) or not record["labels"]:
        raise DataError(f"{where}: {expected}")
    judges = set()
    for entry in record["labels"]:
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in LABEL_KEYS) or not entry["judge"]:
            raise DataError(f"{where}: label {json.dumps(entry)[:80]} is not an object with {', '.join(LABEL_KEYS)} "
                            "(strings, the judge's name not empty)")
        if entry["label"] not in LABELS:
            raise DataError(f"{where}: label {entry['label']!r} is none of {', '.join(LABELS)}")
        if entry["judge"] in judges:
            raise DataError(f"{where}: judge {entry['judge']!r} labels this flip twice; keep one label per judge")
        judges.add(entry["judge"])
    return {k: record[k] for k in RECORD_KEYS[:3]} | {"labels": [{k: e[k] for k in LABEL_KEYS} for e in record["labels"]]}


def write_store(path: str | Path, store: Store) -> None:
    """Write ``store`` to ``path`` atomically, one record per line sorted by (type, caption, variant)."""
    path = check_store_name(path, "--store")
    records = sorted(store.values(), key=lambda r: (r["type"], r["caption"], r["variant"]))
    data = "".join(json.dumps({k: r[k] for k in RECORD_KEYS}, ensure_ascii=False) + "\n" for r in records).encode()
    if path.name.endswith(".gz"):
        buffer = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0) as handle:
            handle.write(data)
        data = buffer.getvalue()
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def merge(store: Store, key: list[dict], labels_by_judge: dict[str, dict[int, tuple[str, str]]], sheet: str) -> int:
    """Add to ``store`` (in place) each judge's labels of the sheet whose ``key`` is given (judge name ->
    item -> (label, reason), :func:`~lgip_dataset.judging.labels.read_labels`), each label noted with ``sheet``;
    a judge who labelled a flip before has that label replaced. Returns the labels added or replaced."""
    given = 0
    for entry in key:
        record = store.setdefault((entry["caption"], entry["variant"]), {
            "caption": entry["caption"], "variant": entry["variant"], "type": entry["type"], "labels": []})
        for judge, labels in labels_by_judge.items():
            label, reason = labels[entry["item"]]
            new = {"judge": judge, "label": label, "reason": reason, "sheet": sheet}
            same = [k for k, old in enumerate(record["labels"]) if old["judge"] == judge]
            if same:
                record["labels"][same[0]] = new
            else:
                record["labels"].append(new)
            given += 1
    return given
