"""The dataset card (``README.md``) of a built LGIP folder: YAML ``configs:``/``dataset_info`` + prose.

The YAML is produced by ``datasets``' own ``MetadataConfigs`` and ``DatasetInfosDict`` into a
``huggingface_hub.DatasetCardData``, exactly as ``push_to_hub`` would write it, so that
``load_dataset(folder, config)`` and the Hub read the same configs and features.
"""
from __future__ import annotations

import re
from pathlib import Path

import pyarrow.parquet as pq
from datasets.info import DatasetInfo, DatasetInfosDict
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard, DatasetCardData

from lgip_dataset import schema
from lgip_dataset.about import CITATION as LGIP_CITATION
from lgip_dataset.about import REPO_ID
from lgip_dataset.judging import RULE, validated_choice
from lgip_dataset.perturb.registry import HARD, OPT_IN, variant_types
from lgip_dataset.records import figures, held_out_reference
from lgip_dataset.sources.coco import ImageEntry

COCO_CITATION = """@inproceedings{lin2014coco,
  title     = {Microsoft COCO: Common Objects in Context},
  author    = {Lin, Tsung-Yi and others},
  booktitle = {ECCV},
  year      = {2014}
}"""

USAGE = """```python
from datasets import load_dataset

pairs = load_dataset("{repo}", "pairs", split="test")      # one row per (caption, variant)
captions = load_dataset("{repo}", "captions", split="test")  # one row per caption, variants nested
images = load_dataset("{repo}", "images", split="test")      # one row per image, decoded to PIL
```"""
LOAD_BY_NAME = re.compile(r'load_dataset\("[^"]*"')  # a usage line's repo id, whatever the card was built with


def usage(repo_id: str) -> str:
    """The card's loading lines for the dataset published on the Hub as ``repo_id``."""
    return USAGE.replace("{repo}", repo_id)


def stamp_repo_id(card_text: str, repo_id: str) -> str:
    """``card_text`` with every ``load_dataset("…"`` naming ``repo_id``: ``builders/publish.py`` stamps the id
    a folder is published under into the card it was built with (``lgip build`` writes ``REPO_ID``)."""
    return LOAD_BY_NAME.sub(f'load_dataset("{repo_id}"', card_text)


def declare_configs(card_data: DatasetCardData, configs) -> None:
    """Add the YAML ``configs:`` of a Hub-layout LGIP folder (``<config>/test-*.parquet``) to ``card_data``."""
    MetadataConfigs(
        {
            name: {
                "data_files": [{"split": schema.SPLIT, "path": f"{name}/{schema.SPLIT}-*.parquet"}],
                **({"default": True} if name == schema.DEFAULT_CONFIG else {}),
            }
            for name in configs
        }
    ).to_dataset_card_data(card_data)


def write_minimal_card(folder: Path, configs, note: str) -> None:
    """A card that only declares ``configs`` (and says ``note``): enough for ``load_dataset`` on a folder
    that is not a full build, such as a subset or a test fixture."""
    card_data = DatasetCardData()
    declare_configs(card_data, configs)
    DatasetCard(f"---\n{card_data.to_yaml()}\n---\n{note}\n").save(Path(folder) / "README.md")


ANNOTATIONS_LICENSE = "cc-by-4.0"  # COCO captions, and the variants LGIP derives from them
# Hub license ids of the Flickr licenses COCO lists per image (COCO license names).
FLICKR_LICENSES = {
    "Attribution License": "cc-by-2.0",
    "Attribution-ShareAlike License": "cc-by-sa-2.0",
    "Attribution-NoDerivs License": "cc-by-nd-2.0",
    "Attribution-NonCommercial License": "cc-by-nc-2.0",
    "Attribution-NonCommercial-ShareAlike License": "cc-by-nc-sa-2.0",
    "Attribution-NonCommercial-NoDerivs License": "cc-by-nc-nd-2.0",
}
MIXED_LICENSE_NAME = "cc-by-4.0-annotations-flickr-image-licenses"
COCO_TERMS = "https://cocodataset.org/#termsofuse"
SOURCE_DATASETS = {"coco": ["extended|coco"], "sugarcrepe": ["extended|coco", "extended|other-sugarcrepe"],
                   "imagefolder": ["original"], "dataset": ["original"]}  # a user's own images and captions


def _license_fields(images: list[ImageEntry] | None) -> dict:
    """The card's license keys, per the Hub's card spec: a text-only build carries only the CC BY 4.0
    annotations; with embedded images, whose Flickr licenses differ per image, ``license: other``
    with a ``license_name`` and a ``license_link`` (each image's is in its row of the ``images`` config)."""
    if images is None:
        return {"license": ANNOTATIONS_LICENSE}
    return {"license": "other", "license_name": MIXED_LICENSE_NAME, "license_link": COCO_TERMS}


def arrow_bytes(shards: list[Path]) -> int:
    """The size ``datasets`` reports as ``num_bytes`` for these shards: their Arrow tables' bytes
    (what ``Dataset.push_to_hub`` writes), read one shard at a time."""
    return sum(pq.read_table(shard).nbytes for shard in shards)


def _card_data(folder: Path, configs: list[str], images: list[ImageEntry] | None, source: str) -> DatasetCardData:
    infos = {}
    for name in configs:
        shards = sorted((folder / name).glob("*.parquet"))
        rows = sum(pq.ParquetFile(s).metadata.num_rows for s in shards)
        size = arrow_bytes(shards)
        infos[name] = DatasetInfo(
            config_name=name,
            features=schema.FEATURES[name],
            splits=[{"name": schema.SPLIT, "num_bytes": size, "num_examples": rows}],
            download_size=sum(s.stat().st_size for s in shards),
            dataset_size=size,
        )
    card_data = DatasetCardData(
        **_license_fields(images),
        language=["en"],
        pretty_name="LGIP",
        task_categories=["zero-shot-image-classification", "image-feature-extraction", "feature-extraction"],
        tags=["vision-language", "clip", "siglip", "robustness", "paraphrase", "compositionality", "coco"],
        size_categories=[_size_category(infos[schema.DEFAULT_CONFIG].splits[schema.SPLIT].num_examples)],
        source_datasets=SOURCE_DATASETS[source],
        annotations_creators=["crowdsourced", "machine-generated"],
        language_creators=["crowdsourced", "machine-generated"],
        multilinguality=["monolingual"],
    )
    declare_configs(card_data, configs)
    DatasetInfosDict(infos).to_dataset_card_data(card_data)
    return card_data


def _size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return label
    return "1M<n<10M"


def _counts_line(counts: dict) -> str:
    """Images, captions, skips, the paraphrases and flips in all (per type: the variant types table) and the
    groups per type, in one paragraph."""
    groups = counts.get("groups", {})
    return (f"{counts.get('images', 0):,} images; {counts.get('captions', 0):,} captions "
            f"({counts.get('captions_with_paraphrase', 0):,} with a paraphrase, {counts.get('captions_with_flip', 0):,} "
            f"with a flip), {counts.get('skipped', 0):,} skipped; {counts.get('paraphrases', {}).get('total', 0):,} "
            f"paraphrases and {counts.get('flips', {}).get('total', 0):,} flips in all"
            + ("" if not groups else "; groups: " + ", ".join(
                f"{n:,} {'in all' if typ == 'total' else typ}" for typ, n in groups.items())) + ".")


def _types_section(families: dict, counts: dict, imported: dict) -> str:
    """The variant types of the build with their group (the registry's), kind, version and counts:
    one per family (a family's variants carry its name as their type), then the types imported from
    another probe set (``lgip build --from``)."""
    groups = {name: meta["group"] for name, meta in variant_types().items()}
    lines = [
        "A variant's `type` is the name of the family that made it, or of the probe-set subset it was "
        "imported from; `group` is the registry's (core, hard, extended, imported). How each family is "
        f"selected and what it may change: `docs/probes.md` (`--families all` leaves out {' and '.join(OPT_IN)}).",
        "",
        "| type | group | kind | version | variants |",
        "|---|---|---|---|---:|",
    ]
    rows = [(name, meta["kind"], meta["version"]) for name, meta in families.items()]
    for type_, kind, version in rows + [(type_, kind, "source file") for type_, kind in imported.items()]:
        n = counts["paraphrases" if kind == "paraphrase" else "flips"].get(type_, 0)
        group = groups.get(type_, "imported")  # a source file's subset the registry does not list is imported too
        lines.append(f"| {type_} | {group} | {kind} | {version} | {n:,} |")
    return "\n".join(lines)


def _statistics_line(hard_flips: dict | None) -> str:
    """The build section's line on the hard flips' statistics (none without hard flips)."""
    if hard_flips is None:
        return ""
    extra = "".join(f"; `{r['file']}`: {r['captions']:,} captions of {r['images']:,} more images "
                    f"({r['images_already_counted']:,} already counted)" for r in hard_flips["statistics_captions"])
    return (f"\n- hard flips' statistics: `{hard_flips['shipped_counts']}` "
            f"({hard_flips['shipped_source']['captions_counted']:,} captions of {hard_flips['shipped_source']['captions']}) "
            f"and the build's own captions{extra}, cross-fitted over {hard_flips['folds']} image folds")


def _balance_section(hard_flips: dict | None) -> str | None:
    """The hard flips' balance and the build's own (in-sample) learner figures (None without hard flips)."""
    report = (hard_flips or {}).get("balance")
    if not report or not report.get("per_type"):
        return None

    def accuracy(figures: dict) -> str:
        if figures.get("learner_not_measurable"):
            return f"not measurable ({figures['learner_not_measurable']})"
        low, high = figures["learner_interval"] or (float("nan"), float("nan"))
        return f"{figures['learner_accuracy']:.3f} [{low:.3f}, {high:.3f}]"

    def trigram(figures: dict) -> str:
        offsets = figures.get("trigram_offsets") or []
        if not figures.get("trigram_prefers_caption", 0) + figures.get("trigram_prefers_flip", 0):
            return "—"
        return (f"{figures['trigram_prefers_caption']:,} / {figures['trigram_prefers_flip']:,} (offset "
                + ", ".join(f"{o:.2f}" for o in offsets) + ")")

    rows = ["| type | flips | images with a site | images with a flip | balance cells off target (largest miss) | "
            "bigram LM: caption / flip likelier | trigram LM of outside captions: caption / flip likelier past the "
            "offset | in-sample: build's word learner [95% CI] |",
            "|---|---:|---:|---:|---|---|---|---|"]
    for type_, f in report["per_type"].items():
        rows.append(f"| {type_} | {f['flips']:,} | {f['images_with_site']:,} | {f['images_with_flip']:,} | "
                    f"{f['cells_off_target']:,} of {f['balance_cells']:,} ({f['largest_target_miss']:g}) | "
                    f"{f['lm_prefers_caption']:,} / {f['lm_prefers_flip']:,} | {trigram(f)} | {accuracy(f)} |")
    hard_set = report.get("hard_set")
    if hard_set:
        rows.append(f"| **hard set** | {sum(f['flips'] for t, f in report['per_type'].items() if t in HARD):,} | | | | | | "
                    f"{accuracy(hard_set)} |")
        rounds = "; ".join(f"round {k}: {r['chosen']:,} flips, " + ", ".join(f"{t} {a:.3f}" for t, a in r["held_out"].items())
                           for k, r in enumerate(hard_set.get("rounds", [])))
    return ("## Hard flips: balanced against text-only learners, audited on instruments the build never used\n\n"
            "The hard flips" + (" (and the `hard_relation` flips, balanced on their own)" if set(report["per_type"]) - set(HARD)
                                else "") + " are chosen across the whole build, not caption by caption: " + report["rule"] + ". "
            "The figures below are **in-sample**: the build's own word learner on its own random image partitions, "
            "and its own bigram and trigram LMs, the instruments it chose against, so a figure near 0.5 here says "
            "little. The "
            "held-out figures (learners of two classes on partitions drawn at audit time, trigram LMs on other "
            "images' captions) are what `lgip audit <folder>` prints, and the section above gives them for the "
            "reference builds.\n\n" + "\n".join(rows)
            + (f"\n\nAdversarial rounds (in-sample mean held-out accuracy per type): {rounds}." if hard_set else ""))


def _judged_section(judged: dict | None) -> str | None:
    """The flips judged blind, per type (None when no flip of the build carries labels)."""
    if not judged or not judged["flips_judged"]:
        return None
    stores = ", ".join(f"`{s['file']}` (sha256 `{s['sha256'][:16]}…`, {s['matched']:,} of its {s['records']:,} records "
                       "matched)" for s in judged["stores"])
    rows = ["| type | flips | judged | majority valid | share valid |", "|---|---:|---:|---:|---:|"]
    rows += [f"| {t} | {c['flips']:,} | {c['judged']:,} | {c['valid']:,} | {c['valid'] / c['judged']:.1%} |"
             for t, c in judged["per_type"].items()]
    return ("## Blind judgements\n\nFlips labelled by blind judges (`lgip judge`; docs/judging.md), applied from the "
            f"label stores {stores} and matched by their exact texts. A judged flip's `judged` column in `pairs` holds "
            "its labels, their judges and the majority label (a tie counts against valid); the `validated` config holds "
            f"the {judged.get('validated_rows', 0):,} rows `lgip evaluate --validated` scores (a judged flip only when "
            "every judge labelled it valid).\n\n" + "\n".join(rows)
            + _choice_table(judged.get("validated_choice") or {}))


def _choice_table(choice: dict) -> str:
    """The compositional families' valid flips and those the validated config keeps (empty: none chosen)."""
    if not choice:
        return ""
    rows = ["| family | judged valid | in `validated` | build's word learner (in-sample) |", "|---|---:|---:|---:|"]
    rows += [f"| {t} | {c['judged_valid']:,} | {c['flips']:,} | "
             f"{'n/a' if c['learner_accuracy'] is None else format(c['learner_accuracy'], '.3f')} |"
             for t, c in choice.items()]
    return (f"\n\nThe `validated` config keeps, of {validated_choice.describe()}: each direction of a change as "
            "frequent as its reverse, so that a model's preference measures the image, not the wording. The held-out "
            "figures are `lgip audit <folder> --config validated`'s.\n\n" + "\n".join(rows))


def _skips_section(skips: dict, cleaned: dict, not_flipped: dict | None = None) -> str:
    lines = (["Input rows left out, each counted with its reason (first examples shown):", "", *_reasons(skips)]
             if skips else ["No input row was skipped."])
    if cleaned:
        lines += ["", "Input kept but cleaned (a caption's original text is its `caption_source` in the `captions` "
                  "config; a converted image's source mode is its `converted_from` in the `images` config):", "",
                  *_reasons(cleaned)]
    if not_flipped:
        lines += ["", "Words no flip changes, each counted with its reason (no colour flip ever changes a person's "
                  "colour):", "", *_reasons(not_flipped)]
    return "\n".join(lines)


def _reasons(log: dict) -> list[str]:
    return [f"- **{reason}**: {info['count']:,}"
            + (f" (e.g. {'; '.join(info['examples'][:2])})" if info["examples"] else "") for reason, info in log.items()]


def _license_section(images: list[ImageEntry] | None) -> str:
    """Who licenses what: the annotations, the generated variants, and each image's Flickr license."""
    text = ("Captions and annotations: COCO, CC BY 4.0 (" + COCO_TERMS + "). Generated variants: CC BY 4.0.")
    if images is None:
        return text + " This text-only build embeds no image; each COCO image keeps its own Flickr license."
    counts: dict[str, int] = {}
    for entry in images:
        counts[entry.license or "unknown"] = counts.get(entry.license or "unknown", 0) + 1
    lines = [f"- {name} ({FLICKR_LICENSES.get(name, 'see its terms')}): {n:,} image(s)" for name, n in sorted(counts.items())]
    return (text + f" Images: their own Flickr licenses (`license: other`, `license_name: {MIXED_LICENSE_NAME}` "
            "in the header): each row of the `images` config names its image's license (`license`, `license_url`) "
            "and source (`flickr_url`), to credit as the license asks.\n\n" + "\n".join(lines))


BIAS_RISKS_LIMITATIONS = """- **Source bias.** The captions are COCO's: English only, written by crowd workers about Flickr
  photographs of everyday scenes, mostly from North America and Europe. Results need not carry over
  to other languages, domains or cultures.
- **Machine-generated variants.** Paraphrases and flips come from rules and a lexicon, not from people:
  a flip can be implausible, a paraphrase can shift the meaning slightly, and text alone can tell some
  flips from their captions (the held-out figures above)."""
PERSONAL_INFORMATION = """COCO images show identifiable people; the captions may contain gendered or other social
descriptions, and object/count flips may replace words that describe people. The dataset adds no
information about the people beyond COCO's captions."""
RECOMMENDATIONS = """Read a model's PR beside the text-only baselines `lgip evaluate` prints with it{text_alone}, and
compare models only on the same rows: the numbers describe models, not the people in the images."""


def _recommendations() -> str:
    """The recommendations, with how far text alone goes on the paper's and the hard flips, read from the reference
    record (held out: a word learner on fresh image partitions of val2017)."""
    reference = held_out_reference.load()
    known = figures.held_out_figures(reference) if reference else {}
    paper, hard = known.get("held_out.val2017.paper.word"), known.get("held_out.val2017.hard.word")
    text_alone = ("" if not (paper and hard) else
                  f" (on val2017 a word learner that never sees the image picks the caption over the paper's flip "
                  f"{paper} of the time and over a hard flip {hard}, held out)")
    return RECOMMENDATIONS.format(text_alone=text_alone)
USES = """### Direct Use

Score a vision-language model's image-text similarity on every (image, caption, variant) row and
compute E_inv, E_sens and PR with the `lgip` metric (`lgip evaluate --model NAME --dataset <this
dataset>`, or your own harness and `evaluate.load`).

""" + usage(REPO_ID) + """

### Out-of-Scope Use

Training or fine-tuning on the flips (they would stop being a probe), judging or describing the
people in the images, and reading a model's PR without the text-only baselines beside it."""
CURATION_RATIONALE = """Human captions of real photographs, each varied by one controlled edit (its type, words and span
recorded for every row), measure a model's reaction against the image it was shown."""
MORE_INFORMATION = """In the lgip repository: `docs/dataset.md` (loading, building), `docs/probes.md` (the families),
`docs/hard_flips.md` (the hard flips' audit), `docs/judged_validity.md` (judged blind), `docs/metric.md` (statistics)."""


def _configs_section(info: dict, images: list[ImageEntry] | None) -> str:
    """The configs, their rows' fields and the ids."""
    return ("- `pairs` (default): one row per (caption, variant): `row_id`, `caption_id`, `image_id`, `caption`, "
            "`variant`, `kind` (`paraphrase` | `flip`), `type`, and for flips the `original` and "
            "`replacement` words with their character span in the caption.\n"
            "- `captions`: one row per human caption with its `paraphrases` and `flips` as lists.\n"
            + ("- `images`: one row per image, stored once, keyed by `image_id`, JPEG bytes embedded.\n" if images is not None
               else "- This is a text-only build: no `images` config; rows reference COCO images by `image_id`.\n")
            + ("- `groups`: 2x2 groups (EqBen/Winoground): two images whose human captions differ by exactly one "
               "flipped word (color, object, count, spatial or temporal), with the two captions and words.\n"
               if schema.GROUPS in info["configs"] else "")
            + ("- `plausibility`: one row per hard flip (`hard_object`, `hard_color`, `hard_count`), keyed by "
               "`variant_id`: the figures its replacement was chosen by (`lm_delta`, `context_fit`, `typicality`, "
               "`candidates`, `context`, `trigram_delta` where the set's choice balanced it, `fold`), from COCO "
               "caption statistics of the other image folds.\n"
               if schema.PLAUSIBILITY in info["configs"] else "")
            + ("- `validated`: the `pairs` rows `lgip evaluate --validated` scores: " + RULE + ".\n"
               if schema.VALIDATED in info["configs"] else "")
            + "\nSplit: `test`. Ids are stable: `c<annotation id>` for captions, `<caption_id>-p<i>` and "
            "`<caption_id>-f<i>` for variants.")


def _build_record(info: dict) -> str:
    """How this folder was built: source, seed and caps, versions, the hard flips' statistics."""
    return (f"- source captions: `{info['source']['captions']}` (sha256 `{info['source']['captions_sha256'][:16]}…`)\n"
            f"- seed: {info['seed']}; K_same = {info['k_same']}; K_diff = {info['k_diff']}; "
            f"captions per image ≤ {info['captions_per_image'] or 'all'}; images sampled: "
            f"{'all' if info['num_images'] is None else info['num_images']}\n"
            f"- lexicon version: {info['lexicon_version']}; lgip {info['lgip_version']}; "
            f"datasets {info['libraries']['datasets']}; pyarrow {info['libraries']['pyarrow']}"
            + _statistics_line(info.get("hard_flips")))


def write_card(folder: Path, info: dict, images: list[ImageEntry] | None, config) -> None:
    """Write ``folder/README.md`` for a build described by ``info`` (see ``lgip_build.json``), in the sections
    of the Hub's dataset card template."""
    counts = info["counts"]
    card_data = _card_data(folder, info["configs"], images, info["source"].get("format", "coco"))
    sections = [
        f"# {config.title}",
        "Language-Guided Invariance Probing (LGIP) pairs each human COCO caption with meaning-preserving "
        "**paraphrases** (template wraps and scene markers) and meaning-changing **semantic flips** "
        "(one object, color or count word substituted), so that a vision-language model's image-text "
        "similarity can be probed for linguistic invariance (E_inv) and semantic sensitivity (E_sens, PR).",
        "## Dataset Details\n\n### Dataset Description\n\n"
        f"- **Curated by:** the LGIP project, with lgip {info['lgip_version']} (`lgip build`)\n"
        "- **Language(s):** English\n- **License:** " + _license_line(images) + "\n\n"
        "### Dataset Sources\n\n- **Captions and images:** MS COCO (https://cocodataset.org/)\n"
        "- **Paper:** Lee, *Language-Guided Invariance Probing of Vision-Language Models* (see Citation)",
        "## Uses\n\n" + USES,
        "## Dataset Structure\n\n" + _configs_section(info, images)
        + "\n\nCounts: " + _counts_line(counts)
        + "\n\n### Variant types\n\n" + _types_section(info["families"], counts, info.get("imported_types", {})),
        "## Dataset Creation\n\n### Curation Rationale\n\n" + CURATION_RATIONALE
        + "\n\n### Source Data\n\n#### Data Collection and Processing\n\n" + _build_record(info)
        + "\n\n" + _skips_section(info["skips"], info.get("cleaned", {}), info.get("sites_not_flipped"))
        + "\n\n#### Who are the source data producers?\n\nCOCO's crowd workers wrote the captions; Flickr users "
        "took the photographs (each image's license and source: the `images` config).\n\n### Annotations\n\n"
        "#### Annotation process\n\nThe variants are machine-generated by `lgip build` from versioned lexicons and "
        "rules, each flip one substitution (its type, words and span recorded); samples of them were judged blind "
        "by independent judges, type and original hidden (each draw's judges and agreement: "
        "`docs/judged_validity.md`).\n\n#### Personal and Sensitive Information\n\n"
        + PERSONAL_INFORMATION,
        *filter(None, (held_out_reference.card_section(info), _balance_section(info.get("hard_flips")),
                       _judged_section(info.get("judged")))),
        "## Bias, Risks, and Limitations\n\n" + BIAS_RISKS_LIMITATIONS + "\n\n### Recommendations\n\n" + _recommendations(),
        "## License\n\n" + _license_section(images),
        "## Citation\n\n```bibtex\n" + LGIP_CITATION + "\n" + COCO_CITATION + "\n```",
        "## More Information\n\n" + MORE_INFORMATION,
        *(section(info) if callable(section) else section for section in config.extra_card_sections),
    ]
    card = DatasetCard(f"---\n{card_data.to_yaml()}\n---\n\n" + "\n\n".join(sections) + "\n")
    card.save(folder / "README.md")


def _license_line(images: list[ImageEntry] | None) -> str:
    """One line: who licenses what (the License section lists each image's)."""
    return ("captions, annotations and generated variants CC BY 4.0; "
            + ("no image embedded" if images is None else "each image its own Flickr license (see License)"))
