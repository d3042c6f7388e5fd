"""``lgip build``: materialise a Hub-layout LGIP dataset folder from COCO captions (+ images), from a
SugarCrepe-format probe set (``--from sugarcrepe DIR``: its negatives become flips beside LGIP's own), or from
your own images and captions (``--from imagefolder DIR``: a ``datasets`` ImageFolder; ``--from dataset DIR``: a
local ``datasets`` dataset)."""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from lgip_dataset.commands import at_least_one
from lgip_dataset.perturb.registry import OPT_IN


def add_arguments(parser: argparse.ArgumentParser) -> None:
    captions = parser.add_mutually_exclusive_group(required=True)
    captions.add_argument("--captions", type=Path, help="COCO captions JSON (2014/2017) or Karpathy list JSON")
    captions.add_argument("--from", dest="from_source", nargs=2, metavar=("FORMAT", "DIR"), type=str,
                          help="a probe set in another layout: `sugarcrepe DIR` reads DIR/*.json "
                               "({id: {filename, caption, negative_caption}}); each file becomes a flip type "
                               "sugarcrepe_<file>, added to LGIP's own variants of the captions (needs --images); "
                               "`imagefolder DIR`: your own images and captions, a datasets ImageFolder (images "
                               "and a metadata.jsonl/.csv with file_name and a caption column; the images are "
                               "DIR's own, so no --images); `dataset DIR`: a local datasets dataset with an image "
                               "and a caption column (saved with save_to_disk, or data files load_dataset reads)")
    parser.add_argument("--caption-column", default=None, metavar="NAME",
                        help="--from imagefolder or dataset: the column holding the captions, a text or a list of "
                             "texts per row (default: text, else caption)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--images", type=Path, help="folder holding the images named in the captions file "
                                                    "(required but with --no-images or --from imagefolder/dataset)")
    source.add_argument("--no-images", action="store_true", help="text-only build: captions and pairs configs, no images")
    parser.add_argument("--out", type=Path, required=True, help="output folder (created atomically)")
    parser.add_argument("--num-images", type=int, default=None, help="seeded sample of M images (default: all)")
    parser.add_argument("--captions-per-image", type=int, default=None,
                        help="cap on captions per image (default 5; every caption with --from)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the image sample and the variant choice")
    parser.add_argument("--k-same", type=int, default=6, help="paraphrases per caption at most (default 6)")
    parser.add_argument("--k-diff", type=int, default=6, help="flips per caption at most (default 6)")
    parser.add_argument("--families", default=None,
                        help="comma-separated variant families: 'core' (the paper's set, default), 'hard' (the hard flips), 'all' "
                             f"(every family but {' and '.join(OPT_IN)}, built only when named: too few of their flips are sound "
                             "on COCO), or names (see `lgip perturb --help`); extra families get their own cap (K of their kind)")
    parser.add_argument("--groups", action="store_true",
                        help="also mine 2x2 groups (image pairs whose captions differ by one flipped word) "
                             "into the `groups` config")
    parser.add_argument("--license-ids", type=_id_list, default=None,
                        help="keep only images with these COCO license ids, e.g. 4,5 (CC BY, CC BY-SA)")
    parser.add_argument("--image-ids", type=_id_list, default=None,
                        help="keep only these image ids: a comma-separated list or @FILE with one id per line")
    parser.add_argument("--statistics-captions", type=Path, nargs="+", default=(), metavar="CAPTIONS_JSON",
                        help="more COCO/Karpathy captions files for the hard flips' statistics (e.g. the 2017 train "
                             "captions): more captions give more captions a hard flip; each image is counted once")
    parser.add_argument("--judged", action="append", default=[], metavar="FILE",
                        help="a label store (`lgip judge merge`) whose labels the flips get, matched by their texts, into "
                             "the `judged` column and the `validated` config; repeat for more (a judge's label in a later "
                             "store replaces theirs in an earlier one). The package's shipped store is applied first; "
                             "`--judged none` applies no store")
    parser.add_argument("--workers", type=at_least_one, default=None, metavar="N",
                        help="processes that perturb the captions (default and most: one per CPU core; 1: no extra "
                             "process); the output is the same for any N")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing output folder")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def _id_list(value: str) -> tuple[int, ...]:
    """``1,2,3`` or ``@ids.txt`` (one id per line) → a tuple of ids (ASCII digits); argparse reports bad values."""
    if value.startswith("@"):
        try:
            text = Path(value[1:]).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            reason = getattr(err, "strerror", None) or type(err).__name__
            raise argparse.ArgumentTypeError(f"cannot read the id file {value[1:]!r} ({reason}); give a text file "
                                             "with one image id per line") from None
    else:
        text = value.replace(",", "\n")
    ids = text.split()
    bad = next((x for x in ids if not (x.isascii() and x.isdigit())), None)
    if bad is not None or not ids:
        raise argparse.ArgumentTypeError(f"expected whole-number image ids, got {bad if bad is not None else value!r}")
    return tuple(int(x) for x in ids)


def _stores(values: list[str]) -> tuple[Path, ...]:
    """The label stores of ``--judged``: the shipped one and those named, or none for ``--judged none``."""
    from lgip_dataset.errors import DataError
    from lgip_dataset.judging import check_store_name, default_stores

    if "none" in values:
        if len(values) > 1:
            raise DataError("--judged none applies no label store; leave out the other --judged files or 'none'")
        return ()
    return (*default_stores(), *(check_store_name(value, "--judged") for value in values))


def _source(args: argparse.Namespace, extracted: Path) -> tuple[str, Path, dict]:
    """(source format, captions file or source folder, extra BuildConfig fields) of the arguments; ``extracted`` is
    the folder a ``--from dataset`` build writes its images into."""
    from lgip_dataset.errors import DataError
    from lgip_dataset.sources import imagefolder, saved_dataset, sugarcrepe

    name, folder = args.from_source or ("coco", args.captions)
    own = {imagefolder.FORMAT: Path(folder), saved_dataset.FORMAT: extracted}  # where their images are read
    if args.caption_column is not None and name not in own:
        raise DataError(f"--caption-column names a column of your own captions (--from {' or '.join(own)}); leave it "
                        "out for a captions file or a SugarCrepe folder")
    if name in own:
        if args.images is not None:
            raise DataError(f"--from {name} reads the images from {folder} itself; leave out --images")
        return name, Path(folder), {"images": None if args.no_images else own[name], "caption_column": args.caption_column,
                                    "title": imagefolder.TITLE, "extra_card_sections": [imagefolder.card_section]}
    if args.images is None and not args.no_images:
        raise DataError("one of --images FOLDER or --no-images is needed (the folder of the images the captions name, "
                        "or a text-only build)")
    images = {"images": None if args.no_images else args.images}
    if name == "coco":
        return name, args.captions, images
    if name != sugarcrepe.FORMAT:
        raise DataError(f"--from {name}: unknown probe-set format; known: {sugarcrepe.FORMAT}, and for your own images "
                        f"and captions {' and '.join(own)}")
    return name, Path(folder), {**images, "title": sugarcrepe.TITLE, "extra_card_sections": [sugarcrepe.CARD_SECTION]}


def run(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="lgip-images-") as extracted:  # where --from dataset writes its images
        return _build(args, Path(extracted))


def _build(args: argparse.Namespace, extracted: Path) -> int:
    from lgip_dataset.perturb.registry import resolve_families
    from lgip_dataset.writing.materialize import BuildConfig, build
    from lgip_dataset.writing.parallel import default_workers

    source, captions, card = _source(args, extracted)
    cap = args.captions_per_image if args.captions_per_image is not None else (5 if source == "coco" else None)
    config = BuildConfig(
        captions=captions,
        source=source,
        out=args.out,
        num_images=args.num_images,
        captions_per_image=cap,
        seed=args.seed,
        k_same=args.k_same,
        k_diff=args.k_diff,
        license_ids=args.license_ids,
        image_ids=args.image_ids,
        families=resolve_families(args.families, what="--families") if args.families is not None else None,
        groups=args.groups,
        statistics_captions=tuple(args.statistics_captions),
        judged=_stores(args.judged),
        **card,
    )
    start = time.perf_counter()
    workers = min(args.workers or default_workers(), default_workers())
    if args.workers is not None and args.workers > workers:
        print(f"--workers {args.workers}: capped at the {workers} CPU core(s) this process may use (more processes "
              "only compete for them); the output is the same")
    summary = build(config, overwrite=args.overwrite, progress=not args.quiet, workers=workers)
    elapsed = time.perf_counter() - start
    print(f"built {summary.out} in {elapsed:.1f} s")
    print(json.dumps(summary.counts, indent=2))
    for store in summary.judged["stores"]:
        print(f"labels: {store['file']}: {store['matched']:,} of its {store['records']:,} flips found in this build")
    if summary.judged["flips_judged"]:
        print(f"labels: {summary.judged['flips_judged']:,} flips judged; {summary.judged['validated_rows']:,} rows in the "
              "validated config")
    for line in [*summary.skips.lines(), *summary.cleaned.lines("cleaned")]:
        print(line)
    return 0
