"""Helpers of the reliability tests: tiny COCO inputs written on the spot, the CLI run in-process with
its output captured, and the same CLI in a subprocess that ``kill -9``s itself at a chosen point."""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from helpers.paths import REPO

CAPTIONS = [
    "A brown dog laying on the ground.",
    "Two people standing in a room.",
    "A red bus parked next to a white car.",
    "A man holding a hot dog near a stop sign.",
    "Three cats sleeping on an orange couch.",
]
COLORS = ("red", "green", "blue", "gray", "yellow", "purple")


def jpeg(color: str = "red", size: tuple[int, int] = (32, 24)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="JPEG")
    return buffer.getvalue()


def png16_gray(value: int = 32768, size: tuple[int, int] = (16, 12)) -> bytes:
    """A 16-bit grayscale PNG whose every pixel is ``value`` (0..65535)."""
    buffer = io.BytesIO()
    Image.fromarray(np.full(size[::-1], value, dtype=np.uint16)).save(buffer, format="PNG")
    return buffer.getvalue()


def write_coco(folder: Path, n_images: int = 4, *, images: list[dict] | None = None,
               annotations: list[dict] | None = None, files: dict[str, bytes] | None = None) -> tuple[Path, Path]:
    """An official-format captions file and an images folder in ``folder``; the defaults are ``n_images``
    JPEGs with five captions each, and ``images``/``annotations``/``files`` replace or add to them."""
    image_dir = folder / "images"
    image_dir.mkdir(parents=True, exist_ok=True)
    default_images = [{"id": i, "file_name": f"{i:012d}.jpg", "license": 4} for i in range(1, n_images + 1)]
    default_files = {f"{i:012d}.jpg": jpeg(COLORS[i % len(COLORS)]) for i in range(1, n_images + 1)}
    for name, data in {**default_files, **(files or {})}.items():
        (image_dir / name).write_bytes(data)
    default_annotations = coco_annotations(n_images)
    document = {
        "images": default_images if images is None else images,
        "annotations": default_annotations if annotations is None else annotations,
        "licenses": [{"id": 4, "name": "Attribution License", "url": "http://creativecommons.org/licenses/by/2.0/"}],
    }
    path = folder / "captions.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path, image_dir


def coco_annotations(n_images: int = 4) -> list[dict]:
    """Five captions (ids ``100 * image + j``) for each of images 1..n_images."""
    return [{"id": 100 * i + j, "image_id": i, "caption": text}
            for i in range(1, n_images + 1) for j, text in enumerate(CAPTIONS)]


@dataclass
class Outcome:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def run_cli(*argv: str) -> Outcome:
    """``lgip ARGV`` in this process; argparse's exit becomes the exit code, output is captured."""
    from lgip_metric import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main([str(a) for a in argv])
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else 1
    return Outcome(code, out.getvalue(), err.getvalue())


def folder_hashes(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` by relative path."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


KILLER = """
import os, signal, sys
point, argv = int(sys.argv[1]), sys.argv[2:]
real, seen = os.replace, [0]
def replace(src, dst, *args, **kwargs):
    seen[0] += 1
    if seen[0] == point:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(src, dst, *args, **kwargs)
os.replace = replace
from lgip_metric import cli
sys.exit(cli.main(argv))
"""


def run_killed(point: int, *argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``lgip ARGV`` in a subprocess that sends itself SIGKILL just before its ``point``-th ``os.replace``
    (each atomic write ends in one), so a kill -9 lands at a reproducible place; with fewer replaces the
    run completes."""
    full_env = {**os.environ, **(env or {}), "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, "-c", KILLER, str(point), *map(str, argv)], cwd=REPO, env=full_env,
                          capture_output=True, text=True, timeout=600)


@contextlib.contextmanager
def counting_replaces():
    """Count the ``os.replace`` calls made in this process meanwhile (``[n]``): the kill points of the run."""
    real, calls = os.replace, [0]

    def replace(*args, **kwargs):
        calls[0] += 1
        return real(*args, **kwargs)

    os.replace = replace
    try:
        yield calls
    finally:
        os.replace = real


def flip_pairs(n_images: int, per_image: int = 5, type_: str = "color", first_image: int = 1) -> list[dict]:
    """Color flips of varied captions, ``per_image`` on each of ``n_images`` images (ids from ``first_image``)."""
    nouns = ("dog", "cat", "bus", "car", "horse", "kite", "train")
    records = []
    for image in range(first_image, first_image + n_images):
        for k in range(per_image):
            noun = nouns[(image + k) % len(nouns)]
            caption = f"A red {noun} near {k + 1} people on the street."
            records.append({"image_id": image, "caption": caption, "variant": caption.replace("red", "blue"),
                            "type": type_})
    return records


def write_pairs(path: Path, records: list[dict]) -> Path:
    """``records`` as a pairs table (.csv, .jsonl or .parquet by ``path``'s suffix) for ``lgip audit --pairs``."""
    import pandas as pd

    frame = pd.DataFrame.from_records(records)
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    elif path.suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True, force_ascii=True)
    else:
        frame.to_parquet(path)
    return path


def run_lgip(*argv, env: dict | None = None, stdout=subprocess.PIPE, input_bytes: bytes | None = None):
    """``lgip ARGV`` in a subprocess (arguments may be bytes, as a shell passes them); bytes out."""
    full_env = {**os.environ, **(env or {}), "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    command = [sys.executable.encode(), b"-m", b"lgip_metric.cli",
               *(a if isinstance(a, bytes) else str(a).encode() for a in argv)]
    return subprocess.run(command, cwd=REPO, env=full_env, stdout=stdout, stderr=subprocess.PIPE, input=input_bytes,
                          timeout=600)
