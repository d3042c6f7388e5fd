"""The dataset card (``README.md``) of a built LGIP folder: YAML ``configs:``/``dataset_info`` + prose.

The YAML is produced by ``datasets``' own ``MetadataConfigs`` and ``DatasetInfosDict`` into a
``huggingface_hub.DatasetCardData``, exactly as ``push_to_hub`` would write it, so that
``load_dataset(folder, config)`` and the Hub read the same configs and features.
"""
from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
from datasets.info import DatasetInfo, DatasetInfosDict
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard, DatasetCardData

from lgip_dataset import schema
from lgip_dataset.coco import ImageEntry
from lgip_dataset.about import CITATION as LGIP_CITATION
from lgip_dataset.perturb.registry import HARD, OPT_IN, variant_types

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
SOURCE_DATASETS = {"coco": ["extended|coco"], "sugarcrepe": ["extended|coco", "extended|other-sugarcrepe"]}


def _license_fields(images: list[ImageEntry] | None) -> dict:
    """The card's license keys, per the Hub's card spec: a text-only build carries only the CC BY 4.0
    annotations; with embedded images, whose Flickr licenses differ per image, ``license: other``
    with a ``license_name`` and a ``license_link`` (the License section lists every image's)."""
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


def _counts_table(counts: dict) -> str:
    lines = ["| what | count |", "|---|---:|"]
    for key in ("images", "captions", "captions_with_paraphrase", "captions_with_flip", "skipped"):
        lines.append(f"| {key.replace('_', ' ')} | {counts.get(key, 0):,} |")
    for plural in ("paraphrases", "flips", "groups"):
        for typ, n in counts.get(plural, {}).items():
            label = f"{plural} (all)" if typ == "total" else f"{plural}: {typ}"
            lines.append(f"| {label} | {n:,} |")
    return "\n".join(lines)


def _types_section(families: dict, counts: dict, imported: dict) -> str:
    """The variant types of the build with their group (the registry's), kind, version and counts:
    one per family (a family's variants carry its name as their type), then the types imported from
    another probe set (``lgip build --from``)."""
    groups = {name: meta["group"] for name, meta in variant_types().items()}
    lines = [
        "A variant's `type` is the name of the family that made it, or of the probe-set subset it was "
        "imported from; `group` is the registry's (core, hard, extended, imported). "
        "Core families (template, marker, object, color, count) are selected together with K_same / "
        "K_diff per caption exactly as in a core-only build; every other family is selected on its "
        "own with the cap of its kind (K_same for paraphrase families, K_diff for flip families). "
        "Multi-word flips record the edited region: `span_start`/`span_end` run from the first to the "
        "last edited word, `original` is the caption's text there and `replacement` the variant's. "
        f"`--families all` leaves out {' and '.join(OPT_IN)}, built only when named: too few of their flips "
        "are sound on COCO (on val2017 no role swap is attested both ways, and a photo decides 2 temporal flips).",
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
    """The hard flips' balance and their text-only audit, as the build measured them (None without hard flips)."""
    report = (hard_flips or {}).get("balance")
    if not report or not report.get("per_type"):
        return None

    def accuracy(figures: dict) -> str:
        if figures.get("learner_not_measurable"):
            return f"not measurable ({figures['learner_not_measurable']})"
        low, high = figures["learner_interval"] or (float("nan"), float("nan"))
        return f"{figures['learner_accuracy']:.3f} [{low:.3f}, {high:.3f}]"

    rows = ["| type | flips | images with a site | images with a flip | largest word imbalance (share, words used "
            f">= {report['min_uses']}) | bigram LM: caption / flip likelier | word learner held-out accuracy [95% CI] |",
            "|---|---:|---:|---:|---|---|---|"]
    for type_, f in report["per_type"].items():
        rows.append(f"| {type_} | {f['flips']:,} | {f['images_with_site']:,} | {f['images_with_flip']:,} | "
                    f"{f['largest_word_imbalance']} ({f['largest_imbalance_share_frequent_words']:.1%}) | "
                    f"{f['lm_prefers_caption']:,} / {f['lm_prefers_flip']:,} | {accuracy(f)} |")
    if "hard_set" in report:
        rows.append(f"| **hard set** | {sum(f['flips'] for t, f in report['per_type'].items() if t in HARD):,} | | | | | "
                    f"{accuracy(report['hard_set'])} |")
    return ("## Hard flips: balanced by construction, audited\n\n"
            "The hard flips" + (" (and the `hard_relation` flips, balanced on their own)" if set(report["per_type"]) - set(HARD)
                                else "") + " are chosen across the whole build, not caption by caption: " + report["rule"] + ". "
            f"Within each hard type every word is removed by the flips as often as it is inserted, to within "
            f"{report['word_tolerance']} in each of the learner's {report['learner_folds']} image folds, so a "
            "text-only model has no word to prefer. The word learner (a logistic regression on the two texts' word "
            "1-2-gram counts) is trained on the chosen flips of the other image folds and tested on each fold's: "
            "0.5 is chance, and below it is no better (the words that balance the whole set lean the other way "
            "in the folds a learner trains on; on a small build that dominates).\n\n" + "\n".join(rows) + "\n\nThe full audit (a character learner, the n-gram LMs, the "
            "words removed or added most unevenly) of this folder or any other probe set: `lgip audit <folder>`.")


def _skips_section(skips: dict, cleaned: dict) -> str:
    lines = (["Input rows left out, each counted with its reason (first examples shown):", "", *_reasons(skips)]
             if skips else ["No input row was skipped."])
    if cleaned:
        lines += ["", "Input kept but cleaned (a caption's original text is its `caption_source` in the `captions` "
                  "config; a converted image's source mode is its `converted_from` in the `images` config):", "",
                  *_reasons(cleaned)]
    return "\n".join(lines)


def _reasons(log: dict) -> list[str]:
    return [f"- **{reason}**: {info['count']:,} (e.g. {'; '.join(info['examples'][:2])})" for reason, info in log.items()]


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
            "in the header), per image in the table above:\n\n" + "\n".join(lines))


BIAS_RISKS_LIMITATIONS = """- **Source bias.** The captions are COCO's: English only, written by crowd workers about Flickr
  photographs of everyday scenes, mostly from North America and Europe. Results need not carry over
  to other languages, domains or cultures.
- **Machine-generated variants.** Paraphrases and flips come from rules and a lexicon, not from
  people: a flip can be implausible as a sentence, or a paraphrase can shift the meaning slightly
  (the `lgip perturb` agreement checks bound, but do not remove, such errors). A text-only language
  model can tell some flips from their captions without the image; compare against the blind
  baselines `lgip evaluate` reports.
- **People in the images.** COCO images show identifiable people; the captions may contain gendered
  or other social descriptions, and object/count flips may replace words that describe people.
- **Intended use.** Probing the image-text similarity of vision-language models. Not for training
  or for judging people, and the numbers describe models, not the people in the images."""


def _licenses_table(images: list[ImageEntry]) -> str:
    lines = [
        "Each image keeps its Flickr license. Images in this folder:",
        "",
        "| image_id | file | license | source |",
        "|---:|---|---|---|",
    ]
    for e in images:
        license_text = f"[{e.license}]({e.license_url})" if e.license_url else e.license or "unknown"
        lines.append(f"| {e.image_id} | {e.file_name} | {license_text} | {e.flickr_url or ''} |")
    return "\n".join(lines)


def write_card(folder: Path, info: dict, images: list[ImageEntry] | None, config) -> None:
    """Write ``folder/README.md`` for a build described by ``info`` (see ``lgip_build.json``)."""
    counts = info["counts"]
    card_data = _card_data(folder, info["configs"], images, info["source"].get("format", "coco"))
    sections = [
        f"# {config.title}",
        "Language-Guided Invariance Probing (LGIP) pairs each human COCO caption with meaning-preserving "
        "**paraphrases** (template wraps and scene markers) and meaning-changing **semantic flips** "
        "(one object, color or count word substituted), so that a vision-language model's image-text "
        "similarity can be probed for linguistic invariance (E_inv) and semantic sensitivity (E_sens, PR).",
        "## Configs\n\n"
        "- `pairs` (default): one row per (caption, variant): `row_id`, `caption_id`, `image_id`, `caption`, "
        "`variant`, `kind` (`paraphrase` | `flip`), `type`, and for flips the `original` and "
        "`replacement` words with their character span in the caption.\n"
        "- `captions`: one row per human caption with its `paraphrases` and `flips` as lists.\n"
        + ("- `images`: one row per image, stored once, keyed by `image_id`, JPEG bytes embedded.\n" if images is not None
           else "- This is a text-only build: no `images` config; rows reference COCO images by `image_id`.\n")
        + ("- `groups`: 2x2 groups (EqBen/Winoground): two images whose human captions differ by exactly one "
           "flipped word (color, object, count, spatial or temporal), with the two captions and words.\n"
           if schema.GROUPS in info["configs"] else "")
        + ("- `plausibility`: one row per hard flip (`hard_object`, `hard_color`, `hard_count`), keyed by "
           "`variant_id`: the figures its replacement was chosen by (`lm_delta`, `context_fit`, `typicality`, `candidates`, "
           "`context`, `fold`), from COCO caption statistics of the other image folds.\n"
           if schema.PLAUSIBILITY in info["configs"] else "")
        + "\nSplit: `test`. Ids are stable: `c<annotation id>` for captions, `<caption_id>-p<i>` and "
        "`<caption_id>-f<i>` for variants.",
        "## Usage\n\n" + USAGE.replace("{repo}", "<org>/lgip"),
        "## Counts\n\n" + _counts_table(counts),
        "## Variant types\n\n" + _types_section(info["families"], counts, info.get("imported_types", {})),
        "## Build\n\n"
        f"- source captions: `{info['source']['captions']}` (sha256 `{info['source']['captions_sha256'][:16]}…`)\n"
        f"- seed: {info['seed']}; K_same = {info['k_same']}; K_diff = {info['k_diff']}; "
        f"captions per image ≤ {info['captions_per_image'] or 'all'}; images sampled: "
        f"{'all' if info['num_images'] is None else info['num_images']}\n"
        f"- lexicon version: {info['lexicon_version']}; lgip {info['lgip_version']}; "
        f"datasets {info['libraries']['datasets']}; pyarrow {info['libraries']['pyarrow']}"
        + _statistics_line(info.get("hard_flips")),
        *filter(None, (_balance_section(info.get("hard_flips")),)),
        "## Skipped and cleaned input\n\n" + _skips_section(info["skips"], info.get("cleaned", {})),
    ]
    if images is not None:
        sections.append("## Image licenses\n\n" + _licenses_table(images))
    sections += [
        "## Bias, Risks, and Limitations\n\n" + BIAS_RISKS_LIMITATIONS,
        "## License\n\n" + _license_section(images),
        "## Citation\n\n```bibtex\n" + LGIP_CITATION + "\n" + COCO_CITATION + "\n```",
        *config.extra_card_sections,
    ]
    card = DatasetCard(f"---\n{card_data.to_yaml()}\n---\n\n" + "\n\n".join(sections) + "\n")
    card.save(folder / "README.md")
