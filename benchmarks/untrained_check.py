"""Untrained models of two real architectures on a build's flips: a probe whose texts carry no systematic
difference gives any model that cannot see a PR of 0.5 within its interval.

    python benchmarks/untrained_check.py BUILD --images ../shared/coco/val2017_images \
        [--types hard_object,hard_color,hard_count,object,color,count] [--json OUT.json]

Scores the flip rows whose image is in ``--images`` with seeded random weights of CLIP ViT-B/16 (the
registry's ``clip-vit-b16``, OpenAI's BPE tokenizer shipped with open_clip) and of the SigLIP B/16-224
architecture (:func:`lgip_metric.testing.make_untrained_siglip`: transformers' real config, with a
SentencePiece tokenizer trained on the build's captions, since the real one cannot be downloaded
offline), through :func:`lgip_metric.audit.untrained_check` (``lgip audit --untrained``), and prints each
type's PR with its 95% image-bootstrap interval.
"""
from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from lgip_dataset import schema
from lgip_dataset.files import hub_io
from lgip_metric import audit
from lgip_metric.report.tables import markdown
from lgip_metric.testing import make_untrained_siglip
from lgip_dataset.files.atomic import check_output_file
from script_args import existing_folder, run

CLIP = "clip-vit-b16"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=existing_folder, help="a folder written by `lgip build`")
    parser.add_argument("--images", type=existing_folder, required=True, help="folder of the COCO images to score")
    parser.add_argument("--types", default="hard_object,hard_color,hard_count,object,color,count")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.json:
        check_output_file(args.json, "--json")
    rows = audit.flip_rows(audit.from_build(args.folder).frame, types=args.types.split(","))
    with tempfile.TemporaryDirectory(prefix="lgip-untrained-") as tmp:
        captions = hub_io.load_config(args.folder, schema.CAPTIONS)["caption"]
        siglip = make_untrained_siglip(Path(tmp) / "siglip-b16-224-untrained", captions)
        check = audit.untrained_check(rows, [CLIP, siglip], args.images, progress=True)
    names = {CLIP: "CLIP ViT-B/16", siglip: "SigLIP B/16-224"}
    blocks = sorted({block for model in check["models"].values() for block in model["PR"]})
    table = [[block, *(f"{m['PR'][block]['PR']:.3f} [{m['PR'][block]['interval'][0]:.3f}, "
                       f"{m['PR'][block]['interval'][1]:.3f}] ({m['PR'][block]['pairs']})" if block in m["PR"] else "—"
                       for m in check["models"].values())] for block in blocks]
    print(f"{check['pairs']} flips of {check['images_found']} images, seeded random weights")
    print(markdown(["type", *(names[m] for m in check["models"])], table))
    if args.json:
        check["models"] = {names[m]: v for m, v in check["models"].items()}
        args.json.write_text(json.dumps(check, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    run(main)
