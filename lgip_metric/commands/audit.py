"""``lgip audit``: how far text alone goes on a probe set's (caption, negative) pairs.

Reads an ``lgip build`` folder, a SugarCrepe-format folder (``--from sugarcrepe DIR``) or any table of
pairs (``--pairs FILE``: .parquet, .csv or .jsonl with image_id, caption, variant or negative_caption
and optionally type), and prints per type and headline block, on instruments no build uses, the held-out
accuracy of text-only learners of two classes (word, character and context logistic regressions, naive Bayes)
over ``--repeats`` random image partitions drawn at audit time, context typicality and a trigram LM's PR on other images' captions (and
on a caption corpus of other images, ``--lm-corpus``); apart, the build's own in-sample figures; the words the
negatives remove or add most unevenly (:mod:`lgip_metric.audit`); with ``--scaling`` the learners on nested
image subsets. ``--untrained MODELS --images DIR`` adds the PR of those models built with
random weights on the pairs whose images are in DIR. For the extended families (:mod:`lgip_metric.audit.extended`)
``--beside sugarcrepe DIR`` audits the matching SugarCrepe subsets the same way and ``--judged FILE`` adds a
blind judge's labels; both go into an "Extended probes" section. ``--json`` writes every figure with
provenance.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", nargs="?", default=None, metavar="BUILD_DIR",
                        help="an `lgip build` output folder (or use --from / --pairs)")
    parser.add_argument("--from", dest="from_source", nargs=2, metavar=("FORMAT", "DIR"),
                        help="a probe set in another layout: `sugarcrepe DIR` reads DIR/*.json "
                             "({id: {filename, caption, negative_caption}}), each file a type sugarcrepe_<file>")
    parser.add_argument("--pairs", type=Path, default=None, metavar="FILE",
                        help="a table of pairs (.parquet, .csv, .jsonl): image_id, caption, variant (or "
                             "negative_caption) and optionally type, caption_id (one per human caption, the same on all "
                             "its negatives; rows of one caption text on one image are one caption), kind, original, "
                             "replacement")
    parser.add_argument("--config", default="pairs", choices=("pairs", "validated"),
                        help="the build's config to audit: every pair, or the validated rows "
                             "`lgip evaluate --validated` scores (default: %(default)s)")
    parser.add_argument("--types", type=_names, default=None,
                        help="comma-separated flip types to audit (default: every flip type)")
    parser.add_argument("--learners", type=_names, default=None,
                        help="comma-separated held-out learners: word (1-2-gram logistic regression), char (2-4-gram "
                             "logistic regression), nb (naive Bayes on word 1-2-grams), context (logistic regression on "
                             "each changed word paired with each shared word) (default: all four)")
    parser.add_argument("--repeats", type=int, default=5,
                        help="random image partitions the learners are cross-fitted over, drawn at audit time; "
                             "figures are their mean and range (default: %(default)s)")
    parser.add_argument("--lm-corpus", type=Path, default=None, metavar="CAPTIONS",
                        help="a COCO or Karpathy captions file: a trigram LM trained on its captions of images outside "
                             "the audited set scores the pairs too (held out), e.g. the Karpathy test captions for "
                             "a val2017 build")
    parser.add_argument("--scaling", type=_sizes, default=None, metavar="N,N,...",
                        help="also audit the held-out learners on random image subsets of about N captions each "
                             "(nested, seeded), to see whether text alone gains with more data")
    parser.add_argument("--bootstrap", type=int, default=1000,
                        help="image resamples for the 95%% intervals; 0 skips them (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: %(default)s)")
    parser.add_argument("--no-ngram", action="store_true", help="leave out the bigram/trigram LMs' PR")
    parser.add_argument("--untrained", type=_names, default=None, metavar="MODELS",
                        help="comma-separated registry models to score with random weights (e.g. "
                             "clip-vit-b16,siglip-b16-224); needs --images")
    parser.add_argument("--images", type=Path, default=None,
                        help="folder of the pairs' image files (COCO names %%012d.jpg or the input's file_name)")
    parser.add_argument("--device", default=None, help="device of --untrained models (default: CUDA when available)")
    parser.add_argument("--beside", nargs=2, metavar=("FORMAT", "DIR"), default=None,
                        help="audit a peer probe set the same way (`sugarcrepe DIR`) and show its subset matching each "
                             "extended family beside it (replace_rel by hard_relation, swap_att by binding)")
    parser.add_argument("--judged", type=Path, default=None, metavar="FILE",
                        help="judged counts per type (`lgip judge report --json`), shown in the "
                             "extended-probe section (e.g. docs/judged_extended_flips.json)")
    parser.add_argument("--json", type=Path, default=None, metavar="OUT", help="write every figure as JSON")
    parser.add_argument("--markdown", type=Path, default=None, metavar="OUT", help="write the printed tables")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


def _names(value: str) -> tuple[str, ...]:
    names = tuple(v.strip() for v in value.split(",") if v.strip())
    if not names:
        raise argparse.ArgumentTypeError(f"expected comma-separated names, got {value!r}")
    return names


def _sizes(value: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(v) for v in value.split(",") if v.strip())
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"expected comma-separated caption counts >= 1, got {value!r}")
    return tuple(sorted(set(sizes)))


def _source(args: argparse.Namespace):
    """The input the arguments name, loaded and checked (a DataError otherwise)."""
    from lgip_dataset.errors import DataError
    from lgip_dataset.sources import sugarcrepe
    from lgip_metric import audit

    named = [x for x in (args.source, args.from_source, args.pairs) if x is not None]
    if len(named) != 1:
        raise DataError("name exactly one input: an `lgip build` folder, --from sugarcrepe DIR or --pairs FILE"
                        + (f" (got {len(named)})" if named else ""))
    if args.config != "pairs" and args.source is None:
        raise DataError(f"--config {args.config} names a config of an `lgip build` folder; "
                        "--from and --pairs read one table")
    if args.from_source is not None:
        name, folder = args.from_source
        if name != sugarcrepe.FORMAT:
            raise DataError(f"--from {name}: unknown probe-set format; known: {sugarcrepe.FORMAT} "
                            "(or pass any table of pairs with --pairs FILE)")
        return audit.from_sugarcrepe(folder)
    if args.pairs is not None:
        return audit.from_pairs_file(args.pairs)
    return audit.from_build(args.source, args.config)


def _peer(args: argparse.Namespace):
    """The peer probe set that --beside names, loaded and checked (None without the option)."""
    from lgip_dataset.errors import DataError
    from lgip_dataset.sources import sugarcrepe
    from lgip_metric import audit

    if args.beside is None:
        return None
    name, folder = args.beside
    if name != sugarcrepe.FORMAT:
        raise DataError(f"--beside {name}: unknown probe-set format; known: {sugarcrepe.FORMAT}")
    return audit.from_sugarcrepe(folder)


def _check_untrained(args: argparse.Namespace) -> None:
    """--untrained and --images together, the folder present, every model buildable with random weights
    (its architecture, config and tokenizer at hand: built once on the CPU and dropped), before any work."""
    from lgip_dataset.errors import DataError
    from lgip_metric.models import ModelError, load_model, resolve_model

    if args.untrained is None:
        return
    if args.images is None:
        raise DataError("--untrained needs --images DIR, the folder of the pairs' image files")
    if not args.images.is_dir():
        raise DataError(f"--images {args.images}: not a folder")
    for model in args.untrained:
        try:
            load_model(resolve_model(model, pretrained="none"), device="cpu")
        except ModelError as err:
            raise DataError(f"--untrained {model}: {' '.join(str(err).split())}") from None


def run(args: argparse.Namespace) -> int:
    import json

    import sklearn

    from lgip_dataset import __version__
    from lgip_dataset.errors import DataError
    from lgip_dataset.files.atomic import atomic_write_text, check_output_file
    from lgip_metric import audit
    from lgip_dataset.perturb.registry import PEER_TYPES
    from lgip_metric.results.record import git_hash

    args.learners = audit.check_learners(args.learners or audit.LEARNERS)
    if args.repeats < 1:
        raise DataError(f"--repeats must be at least 1 partition, got {args.repeats}")
    if args.bootstrap < 0:
        raise DataError(f"--bootstrap must be a non-negative number of resamples, got {args.bootstrap}")
    if args.images is not None and args.untrained is None:
        raise DataError("--images is only read by --untrained MODELS; add it or drop --images")
    for option, path in (("--json", args.json), ("--markdown", args.markdown)):
        if path is not None:
            check_output_file(path, option)
    from lgip_metric.audit import extended as audit_extended

    source = _source(args)
    rows = audit.flip_rows(source.frame, types=args.types, where=source.name)  # checked before the learners
    peer = _peer(args)
    judged = audit_extended.read_judged(args.judged, rows["type"]) if args.judged is not None else None
    _check_untrained(args)
    corpus = (audit.corpus_captions(args.lm_corpus, rows["image_id"].unique(), source.frame["caption"].unique())
              if args.lm_corpus is not None and not args.no_ngram else None)
    started = time.perf_counter()
    result = audit.audit(source.frame, learners=args.learners, repeats=args.repeats, bootstrap=args.bootstrap,
                         seed=args.seed, ngram=not args.no_ngram, types=args.types, progress=not args.no_progress,
                         where=source.name, corpus=corpus)
    result["in_sample"] = source.in_sample
    if args.scaling:
        result["scaling"] = audit.scaling(rows, args.scaling, learners=args.learners, repeats=args.repeats,
                                          seed=args.seed)
    peer_types = sorted({PEER_TYPES[t] for t in audit_extended.extended_types(result) if t in PEER_TYPES}
                        & set(peer.frame["type"])) if peer is not None else []
    peer_result = audit.audit(peer.frame, learners=args.learners, repeats=args.repeats, bootstrap=args.bootstrap,
                              seed=args.seed,
                              ngram=not args.no_ngram, types=peer_types, progress=not args.no_progress,
                              where=peer.name) if peer_types else None
    extended = audit_extended.rows(result, peer_result, judged)
    result["seconds"] = round(time.perf_counter() - started, 2)
    untrained = None
    if args.untrained:
        started = time.perf_counter()
        untrained = audit.untrained_check(rows, args.untrained, args.images, file_names=source.file_names,
                                          bootstrap=args.bootstrap, seed=args.seed, device=args.device,
                                          progress=not args.no_progress)
        untrained["seconds"] = round(time.perf_counter() - started, 2)
    title = f"# Artifact audit of {source.name} ({source.format})\n\n"
    text = (title + audit.markdown(result, untrained) + audit.scaling_markdown(result.get("scaling"))
            + audit_extended.markdown(extended, list(args.learners)))
    skipped = sum(info["count"] for info in source.skipped.values())
    if skipped:
        text += "\n" + "\n".join(f"skipped {info['count']:,} × {reason} (e.g. {info['examples'][0]})"
                                 for reason, info in source.skipped.items()) + "\n"
    print(text)
    print(f"audit: {result['pairs']:,} pairs over {result['images']:,} images in {result['seconds']:.1f} s"
          + (f"; untrained models in {untrained['seconds']:.1f} s" if untrained else ""))
    if args.markdown:
        atomic_write_text(args.markdown, text, "--markdown")
        print(f"markdown -> {args.markdown}")
    if args.json:
        record = {"format": "lgip-audit", "version": 1, "lgip_version": __version__, "git_hash": git_hash(),
                  "sklearn_version": sklearn.__version__,
                  "input": {"source": source.name, "format": source.format, "sha256": source.sha256,
                            "types": args.types and list(args.types), "skipped": source.skipped},
                  **result, **({"untrained": untrained} if untrained else {}),
                  **({"extended": extended} if extended else {})}
        atomic_write_text(args.json, json.dumps(record, indent=2, allow_nan=False) + "\n", "--json")
        print(f"json -> {args.json}")
    return 0
