"""Drawing a built folder's flips for blind judging: the seeded order, the blinded sheet and the key that
unblinds it.

A flip's place in the draw of a seed is the SHA-256 of the seed and its two texts (:func:`rank`), so the
same folder and seed always give the same flips, and a flip keeps its place in any other build that has it:
a rebuild that changes a few flips changes only those in a draw. The sheet shows each flip as text A and
text B, in an order given by another seeded hash (:func:`first_is_original`), without its type: the judge
can tell neither the original from the flip nor which family made it.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from pathlib import Path
from typing import Sequence

from lgip_dataset import schema
from lgip_dataset.errors import DataError
from lgip_dataset.files import hub_io
from lgip_dataset.judging.labels import disputed as is_disputed
from lgip_dataset.judging.store import Store

KEY_FIELDS = ("item", "type", "caption", "variant", "original_is")


def rank(seed: int, caption: str, variant: str) -> str:
    """A flip's place in the draw of ``seed``: the SHA-256 of the seed and its texts."""
    return hashlib.sha256(f"{seed}\n{caption.strip()}\n{variant}".encode()).hexdigest()


def first_is_original(seed: int, caption: str, variant: str) -> bool:
    """Whether the sheet of ``seed`` shows the caption as text A (else the flip is text A)."""
    digest = hashlib.sha256(f"order\n{seed}\n{caption.strip()}\n{variant}".encode()).digest()
    return digest[0] % 2 == 0


def folder_flips(folder: str | Path, config: str = schema.PAIRS) -> list[dict]:
    """The flip rows of a built folder's ``config`` (``pairs``, or ``validated``): caption, variant, type and
    ``judged`` labels (None where none, and in a folder built before labels)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(f"{folder}: no such folder; give a folder written by `lgip build`")
    pairs = hub_io.load_config(folder, config)
    labelled = "judged" in pairs.column_names
    columns = pairs.select_columns(["caption", "variant", "type", "kind", *(["judged"] if labelled else [])])
    columns = columns.with_format("arrow")[:].to_pydict()
    judged = columns["judged"] if labelled else [None] * len(columns["kind"])
    return [{"caption": caption, "variant": variant, "type": type_, "judged": labels}
            for caption, variant, type_, kind, labels in zip(columns["caption"], columns["variant"], columns["type"],
                                                              columns["kind"], judged) if kind == schema.FLIP]


def draw(folder: str | Path, types: Sequence[str], *, n: int | None = None, per_type: bool = False, seed: int = 0,
         exclude_judged: Store | None = None, disputed: Store | None = None, validated_only: bool = False) -> list[dict]:
    """The flips of ``types`` in ``folder`` to judge, in the seeded order (:func:`rank`): the ``n`` first
    (``per_type``: of each type), or every one when ``n`` is None. ``exclude_judged`` leaves out the flips that
    store holds two or more labels of; ``disputed`` takes only the flips whose labels in that store have no
    strict majority (the third judge's sheet); ``validated_only`` only the flips of the folder's ``validated``
    config (a sealed draw from validated flips: judged valid and, for the compositional families, chosen across
    the build). DataError naming what is wrong: a type the folder has no flip of, no labels in the folder for
    ``validated_only``, or fewer flips left than ``n``."""
    if n is not None and n < 1:
        raise DataError(f"--n must be at least 1, got {n}")
    if per_type and n is None:
        raise DataError("--per-type draws --n flips of each type; give --n (or leave --per-type out with --all)")
    if validated_only and Path(folder).is_dir() and not (Path(folder) / schema.VALIDATED).is_dir():
        raise DataError(f"--validated-only: no flip of {folder} carries labels (build it with `lgip build --judged "
                        "STORE` to take its validated flips)")  # a build writes the config only from labels
    flips = folder_flips(folder, schema.VALIDATED if validated_only else schema.PAIRS)
    present = sorted({flip["type"] for flip in flips})
    unknown = [t for t in types if t not in present]
    if not types or unknown:
        raise DataError(f"--types {','.join(types)}: {folder} has no flip of type {', '.join(map(repr, unknown)) or 'none'}; "
                        f"its flip types are {', '.join(present) or 'none'}")
    distinct = {(flip["caption"], flip["variant"]): flip for flip in flips if flip["type"] in types}  # once each
    pool = [flip for key, flip in distinct.items()
            if (exclude_judged is None or len(exclude_judged.get(key, {}).get("labels", ())) < 2)
            and (disputed is None or (key in disputed and is_disputed([e["label"] for e in disputed[key]["labels"]])))]
    pool.sort(key=lambda flip: rank(seed, flip["caption"], flip["variant"]))
    if n is None:
        if not pool:
            raise DataError(f"no flip of {', '.join(types)} in {folder} is left to draw (after the options that leave "
                            "flips out)")
        return [_drawn(flip) for flip in pool]
    groups = [[f for f in pool if f["type"] == t] for t in types] if per_type else [pool]
    for group, what in zip(groups, types if per_type else [", ".join(types)]):
        if len(group) < n:
            raise DataError(f"{folder}: only {len(group)} flip(s) of {what} left to draw; ask for --n {len(group)} or "
                            "fewer")
    drawn = [flip for group in groups for flip in group[:n]]
    return [_drawn(flip) for flip in sorted(drawn, key=lambda flip: rank(seed, flip["caption"], flip["variant"]))]


def _drawn(flip: dict) -> dict:
    return {"caption": flip["caption"], "variant": flip["variant"], "type": flip["type"]}


def split(rows: list[dict], sheets: int) -> list[list[dict]]:
    """``rows`` dealt round robin, in their order, onto ``sheets`` sheets; DataError when a sheet would be empty."""
    if not 1 <= sheets <= len(rows):
        raise DataError(f"--split {sheets}: {len(rows)} flip(s) drawn; split them into 1 to {len(rows)} sheets")
    return [rows[k::sheets] for k in range(sheets)]


def blind_sheet(rows: list[dict], seed: int) -> tuple[str, list[dict]]:
    """The judge's sheet (a Markdown table ``| item | text A | text B |``) and the key that unblinds it
    (per item: its type, caption and flip, and which text is the original)."""
    lines = ["| item | text A | text B |", "|---|---|---|"]
    key = []
    for item, row in enumerate(rows, 1):
        caption, variant = row["caption"], row["variant"]
        first_original = first_is_original(seed, caption, variant)
        a, b = (caption, variant) if first_original else (variant, caption)
        lines.append(f"| {item} | {a.replace('|', '/')} | {b.replace('|', '/')} |")
        key.append({"item": item, "type": row["type"], "caption": caption, "variant": variant,
                    "original_is": "A" if first_original else "B"})
    return "\n".join(lines) + "\n", key


def key_text(key: list[dict]) -> str:
    """The key as its file holds it (a JSON list)."""
    return json.dumps(key, indent=1, ensure_ascii=False) + "\n"


def sheet_name(key: str | Path) -> str:
    """The sheet a key's labels are noted with in a store: the key's file name less ``.json`` / ``.json.gz``."""
    return Path(key).name.removesuffix(".gz").removesuffix(".json")


def read_key(path: str | Path) -> list[dict]:
    """The key of a sheet (what :func:`blind_sheet` returns, as :func:`key_text` writes it); DataError naming
    the file and the first entry that is not an item of it, or that repeats the flip of an earlier item (a
    judge's label file would give that flip two labels). A key whose name ends in ``.gz`` is read gzip-compressed
    (the form the judged rounds keep under docs/judged)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
        key = json.loads((gzip.decompress(raw) if path.name.endswith(".gz") else raw).decode("utf-8"))
    except FileNotFoundError:
        raise DataError(f"--key {path}: no such key file (`lgip judge draw` writes one beside its sheet)") from None
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise DataError(f"--key {path}: cannot read it as JSON ({err}); give the key `lgip judge draw` wrote") from None
    if not isinstance(key, list) or not key:
        raise DataError(f"--key {path}: not a key (a non-empty JSON list of items); give the key `lgip judge draw` wrote")
    for number, entry in enumerate(key, 1):
        if not isinstance(entry, dict) or entry.get("item") != number or entry.get("original_is") not in ("A", "B") \
                or not all(isinstance(entry.get(k), str) for k in KEY_FIELDS[1:4]):
            raise DataError(f"--key {path}: entry {number} is not item {number} with {', '.join(KEY_FIELDS)} "
                            f"(got {json.dumps(entry)[:100]}); give the key `lgip judge draw` wrote")
    first: dict[tuple[str, str], int] = {}
    for entry in key:
        flip = (entry["caption"], entry["variant"])
        if flip in first:
            raise DataError(f"--key {path}: items {first[flip]} and {entry['item']} are the same flip {flip[1]!r} of "
                            f"{flip[0]!r}; a key holds each flip once (give the key `lgip judge draw` wrote)")
        first[flip] = entry["item"]
    return key
