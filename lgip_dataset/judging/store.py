"""The label store: every blind label of every judged flip, one JSON Lines record per flip, keyed by its texts.

A record is ``{"caption", "variant", "type", "labels": [{"judge", "label", "reason", "sheet"}, ...]}``;
the labels keep the order they were first given in (a judge who labels the flip again replaces their own).
``type`` is the flip's type, or the list of its types when it was drawn as several (``hard_color`` and
``color`` can make the same texts; the judge sees only the texts, so one record holds their labels and the
report counts it under each type); in memory a record holds them as ``types``, a list. Records are written
sorted by (type, caption, variant), one per line with every character that ends a line escaped (U+0085,
U+2028, U+2029 as well as ``\\n``), read back before the file is replaced, so one set of labels is one file,
byte for byte, and a store is never left unreadable; ``.jsonl.gz`` is gzip-compressed with no time stamp.
Keyed by the two texts, a label holds in any build that makes the same flip (``lgip build --judged``).
Writers hold :func:`store_lock` while they read, change and write a store, so two merges never lose a label.
"""
from __future__ import annotations

import gzip
import io
import json
import os
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from lgip_dataset.errors import DataError
from lgip_dataset.files.atomic import atomic_path, check_output_file, write_failure
from lgip_dataset.files.locks import FolderBusy, lock_folder
from lgip_dataset.judging.labels import LABELS

SUFFIXES = (".jsonl", ".jsonl.gz")
SHIPPED_STORE = Path(__file__).resolve().parents[1] / "reference" / "judged_flips.jsonl.gz"
RECORD_KEYS = ("caption", "variant", "type", "labels")
LABEL_KEYS = ("judge", "label", "reason", "sheet")

Store = dict[tuple[str, str], dict]  # (caption, variant) -> record
LOCK_WAIT = 120  # seconds a merge waits for another writer of the same store's folder
LINE_ENDS = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}  # line ends json.dumps leaves unescaped


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
    except (OSError, EOFError, UnicodeDecodeError, gzip.BadGzipFile, zlib.error) as err:
        raise DataError(f"{option} {path}: cannot read it as {'gzip-compressed ' if path.name.endswith('.gz') else ''}"
                        f"UTF-8 JSON Lines ({err})") from None
    return _parse(text, str(path))


def _parse(text: str, where: str) -> Store:
    """The records of a store's text; DataError naming ``where`` and the line of the first bad record."""
    store: Store = {}
    lines: dict[tuple[str, str], int] = {}
    for number, line in enumerate(text.split("\n"), 1):  # "\n" only: str.splitlines also splits at U+2028
        if not line.strip():
            continue
        record = _record(f"{where}:{number}", line)
        key = (record["caption"], record["variant"])
        if key in store:
            raise DataError(f"{where}:{number}: the flip {key[1]!r} of {key[0]!r} has a record already (line "
                            f"{lines[key]}); a store holds one record per flip")
        store[key], lines[key] = record, number
    return store


def _record(where: str, line: str) -> dict:
    """One store line as a record; DataError naming ``where`` (file:line) and what is expected."""
    expected = (f"expected a JSON object with {', '.join(RECORD_KEYS)} (type: a string or a list of them; labels: "
                f"a non-empty list of objects with {', '.join(LABEL_KEYS)})")
    try:
        record = json.loads(line)
    except json.JSONDecodeError as err:
        raise DataError(f"{where}: not JSON ({err.msg}); {expected}") from None
    if not isinstance(record, dict) or not all(isinstance(record.get(k), str) for k in RECORD_KEYS[:2]) \
            or not isinstance(record.get("labels"), list) or not record["labels"]:
        raise DataError(f"{where}: {expected}")
    types = [record.get("type")] if isinstance(record.get("type"), str) else record.get("type")
    if not isinstance(types, list) or not types or not all(isinstance(t, str) and t for t in types) \
            or len(set(types)) < len(types):
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
    return {"caption": record["caption"], "variant": record["variant"], "types": types,
            "labels": [{k: e[k] for k in LABEL_KEYS} for e in record["labels"]]}


def store_text(store: Store) -> str:
    """The store's JSON Lines text: a record per line sorted by (type, caption, variant), every line end in
    a text escaped; DataError when a record would not read back as it is (nothing is written then)."""
    records = sorted(store.values(), key=lambda r: (r["types"][0], r["caption"], r["variant"]))
    text = "".join(json.dumps({"caption": r["caption"], "variant": r["variant"],
                               "type": r["types"][0] if len(r["types"]) == 1 else r["types"], "labels": r["labels"]},
                              ensure_ascii=False).translate(LINE_ENDS) + "\n" for r in records)
    try:
        same = _parse(text, "record") == store
    except DataError as err:
        raise DataError(f"the store to write would not read back ({err}); nothing was written") from None
    if not same:
        raise DataError("the store to write would not read back as it is; nothing was written")
    return text


def write_store(path: str | Path, store: Store) -> None:
    """Write ``store`` to ``path`` atomically (:func:`store_text`); DataError naming the file when the write
    fails (a full disk: the old store is left as it was)."""
    path = check_store_name(path, "--store")
    data = store_text(store).encode()
    if path.name.endswith(".gz"):
        buffer = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0) as handle:
            handle.write(data)
        data = buffer.getvalue()
    try:
        with atomic_path(path) as tmp:
            tmp.write_bytes(data)
    except OSError as err:
        raise DataError(write_failure(path, "--store", err)) from None


@contextmanager
def store_lock(path: str | Path) -> Iterator[None]:
    """Hold the lock of the store at ``path`` (an OS lock on its folder, made when missing) for a read, a change
    and a write: a second writer of the same store waits for it (up to :data:`LOCK_WAIT` s, then DataError)."""
    path = check_store_name(path, "--store")
    check_output_file(path, "--store")
    folder = path.resolve().parent
    folder.mkdir(parents=True, exist_ok=True)
    try:
        handle = lock_folder(folder, wait=LOCK_WAIT)
    except FolderBusy:
        raise DataError(f"--store {path}: another process has held its folder for {LOCK_WAIT} s (another `lgip judge "
                        "merge`, or a run writing there); let it finish, then merge again") from None
    try:
        yield
    finally:
        os.close(handle)


def merge(store: Store, key: list[dict], labels_by_judge: dict[str, dict[int, tuple[str, str]]], sheet: str) -> int:
    """Add to ``store`` (in place) each judge's labels of the sheet whose ``key`` is given (judge name ->
    item -> (label, reason), :func:`~lgip_dataset.judging.labels.read_labels`), each label noted with ``sheet``;
    a judge who labelled a flip before has that label replaced; a flip drawn as another type than the store
    holds it has that type added. Returns the labels added or replaced."""
    given = 0
    for entry in key:
        record = store.setdefault((entry["caption"], entry["variant"]), {
            "caption": entry["caption"], "variant": entry["variant"], "types": [], "labels": []})
        if entry["type"] not in record["types"]:
            record["types"].append(entry["type"])
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
