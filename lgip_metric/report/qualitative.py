"""The qualitative page (the paper's Figure 3): flips where two models disagree most.

For models A and B scored on the same rows, the flips that exactly one of them ranks below the
original caption, largest |gap_A - gap_B| first. For a single model, the flips it prefers most
over the original caption. Thumbnails come from the dataset's ``images`` config when it can be read.
"""
from __future__ import annotations

import io
from collections import OrderedDict
from pathlib import Path

import pandas as pd

from lgip_dataset import schema
from lgip_dataset.errors import LGIPError
from lgip_dataset.files import hub_io
from lgip_dataset.files.image_cells import ImageCells
from lgip_dataset.files.images import ImageError, decode_image
from lgip_metric.report.tables import markdown
from lgip_metric.results.record import Results

THUMBNAIL = 256
SCORE_COLUMNS = ["row_id", "image_id", "type", "caption", "variant", "s_original", "s_variant"]


def flip_scores(result: Results) -> pd.DataFrame:
    """The flip rows of a results file's scores, indexed by row_id."""
    frame = result.read_scores([*SCORE_COLUMNS, "kind"])
    frame = frame[frame["kind"] == schema.FLIP].drop(columns="kind").set_index("row_id")
    return frame.assign(gap=frame["s_original"] - frame["s_variant"])


def disagreements(a: pd.DataFrame, b: pd.DataFrame, top: int) -> pd.DataFrame:
    """Flips exactly one model ranks below the original, largest |gap_A - gap_B| first."""
    both = a.merge(b[["s_original", "s_variant", "gap"]], left_index=True, right_index=True, suffixes=("", "_b"))
    discordant = both[(both["gap"] > 0) != (both["gap_b"] > 0)]
    order = (discordant["gap"] - discordant["gap_b"]).abs().sort_values(ascending=False, kind="stable").index
    return discordant.loc[order[:top]]


def _edit(caption: str, variant: str) -> str:
    """``old → new``: the words where a flip differs from its caption."""
    old, new = caption.rstrip(".").split(), variant.rstrip(".").split()
    same = [x.lower().strip(",;:") == y.lower().strip(",;:") for x, y in zip(old, new)]
    start = same.index(False) if False in same else len(same)
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end].lower() == new[-1 - end].lower():
        end += 1
    return f"{' '.join(old[start:len(old) - end]) or '∅'} → {' '.join(new[start:len(new) - end]) or '∅'}"


_MADE: OrderedDict[tuple, bytes] = OrderedDict()  # JPEG thumbnails made in this process, by (shards, image id)
MADE_KEPT = 512  # about 10 MB: a sweep's later reports read their images' thumbnails back instead of decoding them


def _thumbnail(cells: ImageCells, shards: tuple, position: int, image_id: int) -> bytes:
    """The JPEG thumbnail of the image at ``position`` (ImageError where it cannot be decoded), made once per process
    for the same shards (their folder and :meth:`~lgip_dataset.files.hub_io.DatasetFiles.stamp`) and image."""
    key = (shards, image_id)
    if key in _MADE:
        _MADE.move_to_end(key)
        return _MADE[key]
    image = decode_image((cells.cell(position) or {}).get("bytes"))
    image.thumbnail((THUMBNAIL, THUMBNAIL))
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=85)
    _MADE[key] = out.getvalue()
    while len(_MADE) > MADE_KEPT:
        _MADE.popitem(last=False)
    return _MADE[key]


def _thumbnails(result: Results, image_ids, folder: Path) -> tuple[dict, str | None]:
    """Write JPEG thumbnails of ``image_ids``; (image id -> relative path, or None and the reason)."""
    source = result.data["dataset"].get("source")
    try:
        files = hub_io.DatasetFiles(source)
        images = files.shards(schema.IMAGES)
        cells = ImageCells(images)  # only the wanted rows' bytes are read
        shards = (str(images[0].parent), files.stamp(schema.IMAGES))
        ids = cells.image_ids().tolist()
        wanted = {int(i) for i in image_ids}
        out = {}
        for position in (p for p, i in enumerate(ids) if i in wanted):
            try:
                thumbnail = _thumbnail(cells, shards, position, ids[position])
            except ImageError:  # an unusable image gets no thumbnail; its captions are still shown
                continue
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{ids[position]}.jpg").write_bytes(thumbnail)
            out[ids[position]] = f"{folder.name}/{ids[position]}.jpg"
        return out, None
    except (LGIPError, OSError) as err:
        return {}, f"images of `{source}` could not be read ({err}); captions only"


def _example(row, labels: tuple[str, ...], image: str | None) -> str:
    columns = [(row[f"s_original{suffix}"], row[f"s_variant{suffix}"]) for suffix in ("", "_b")[: len(labels)]]
    lines = [f"#### {row['type']} flip: {_edit(row['caption'], row['variant'])} (image {row['image_id']})", ""]
    if image:
        lines += [f"![image {row['image_id']}]({image})", ""]
    header = ["", "caption", *labels]
    body = [["ORIG", row["caption"], *(f"{c[0]:.3f}" for c in columns)],
            ["FLIP", row["variant"], *(f"{c[1]:.3f}" + (" ✗" if c[1] >= c[0] else "") for c in columns)]]
    return "\n".join(lines) + "\n" + markdown(header, body)


def page(results: list[Results], out_dir: Path, top: int) -> str:
    """Markdown of the qualitative page; thumbnails are written under ``out_dir/qualitative``."""
    first = flip_scores(results[0])
    sections = []
    if len(results) == 1:
        chosen = first.sort_values("gap", kind="stable").head(top)
        sections.append((f"Flips {results[0].label} prefers most over the original caption", (results[0].label,), chosen))
    for other in results[1:]:
        chosen = disagreements(first, flip_scores(other), top)
        title = f"{results[0].label} vs {other.label}: flips the two models order differently"
        sections.append((title, (results[0].label, other.label), chosen))
    images, problem = _thumbnails(results[0], {i for _, _, rows in sections for i in rows["image_id"]},
                                  out_dir / "qualitative")
    text = ["# LGIP qualitative examples", "",
            "Scores are cosine similarities s(I, text); ✗ marks a flip scored at least as high as the original "
            "(a tie is not positive).", ""]
    if problem:
        text += [f"_{problem}_", ""]
    for title, labels, rows in sections:
        text += [f"## {title}", ""]
        if rows.empty:
            text += ["_No such flips._", ""]
        text += [_example(row, labels, images.get(int(row["image_id"]))) for _, row in rows.iterrows()]
    return "\n".join(text)
