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

CITATION = """@misc{lgip2025,
  title  = {Language-Guided Invariance Probing of Vision-Language Models},
  year   = {2025},
  note   = {LGIP: paraphrase invariance and semantic-flip sensitivity of CLIP-style models}
}
@inproceedings{lin2014coco,
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


def _card_data(folder: Path, configs: list[str], num_images: int) -> DatasetCardData:
    card_data = DatasetCardData(
        license="cc-by-4.0",
        language=["en"],
        pretty_name="LGIP",
        task_categories=["zero-shot-image-classification", "image-to-text", "text-to-image"],
        tags=["vision-language", "clip", "siglip", "robustness", "paraphrase", "compositionality", "coco"],
        size_categories=[_size_category(num_images)],
    )
    declare_configs(card_data, configs)
    infos = {}
    for name in configs:
        shards = sorted((folder / name).glob("*.parquet"))
        size = sum(s.stat().st_size for s in shards)
        rows = sum(pq.ParquetFile(s).metadata.num_rows for s in shards)
        infos[name] = DatasetInfo(
            config_name=name,
            features=schema.FEATURES[name],
            splits=[{"name": schema.SPLIT, "num_bytes": size, "num_examples": rows}],
            download_size=size,
            dataset_size=size,
        )
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


def _families_section(families: dict, counts: dict) -> str:
    """The variant families of the build with their kind, version and counts per type."""
    lines = [
        "Core families (template, marker, object, color, count) are selected together with K_same / "
        "K_diff per caption exactly as in a core-only build; every other family is selected on its "
        "own with the cap of its kind (K_same for paraphrase families, K_diff for flip families). "
        "Multi-word flips record the edited region: `span_start`/`span_end` run from the first to the "
        "last edited word, `original` is the caption's text there and `replacement` the variant's.",
        "",
        "| family | kind | version | type | variants |",
        "|---|---|---|---|---:|",
    ]
    for name, meta in families.items():  # a family's variants carry its name as their type
        n = counts["paraphrases" if meta["kind"] == "paraphrase" else "flips"].get(name, 0)
        lines.append(f"| {name} | {meta['kind']} | {meta['version']} | {name} | {n:,} |")
    return "\n".join(lines)


def _skips_section(skips: dict) -> str:
    if not skips:
        return "No input row was skipped."
    lines = ["Input rows left out, each counted with its reason (first examples shown):", ""]
    for reason, info in skips.items():
        lines.append(f"- **{reason}**: {info['count']:,} (e.g. {'; '.join(info['examples'][:2])})")
    return "\n".join(lines)


def _licenses_section(images: list[ImageEntry]) -> str:
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
    card_data = _card_data(folder, info["configs"], counts["images"])
    sections = [
        f"# {config.title}",
        "Language-Guided Invariance Probing (LGIP) pairs each human COCO caption with meaning-preserving "
        "**paraphrases** (template wraps and scene markers) and meaning-changing **semantic flips** "
        "(one object, color or count word substituted), so that a vision-language model's image-text "
        "similarity can be probed for linguistic invariance (E_inv) and semantic sensitivity (E_sens, PR).",
        "## Configs\n\n"
        "- `pairs` (default): one row per (caption, variant): `row_id`, `caption_id`, `image_id`, `caption`, "
        "`variant`, `kind` (`paraphrase` | `flip`), `family`, `type`, and for flips the `original` and "
        "`replacement` words with their character span in the caption.\n"
        "- `captions`: one row per human caption with its `paraphrases` and `flips` as lists.\n"
        + ("- `images`: one row per image, stored once, keyed by `image_id`, JPEG bytes embedded.\n" if images is not None
           else "- This is a text-only build: no `images` config; rows reference COCO images by `image_id`.\n")
        + ("- `groups`: 2x2 groups (EqBen/Winoground): two images whose human captions differ by exactly one "
           "flipped word (color, object, count, spatial or temporal), with the two captions and words.\n"
           if schema.GROUPS in info["configs"] else "")
        + ("- `plausibility`: one row per hard flip (`hard_object`, `hard_color`, `hard_count`), keyed by "
           "`variant_id`: the figures its replacement was chosen by (`lm_delta`, `context_fit`, `candidates`, "
           "`context`, `fold`), from COCO caption statistics of the other image folds.\n"
           if schema.PLAUSIBILITY in info["configs"] else "")
        + "\nSplit: `test`. Ids are stable: `c<annotation id>` for captions, `<caption_id>-p<i>` and "
        "`<caption_id>-f<i>` for variants.",
        "## Usage\n\n" + USAGE.replace("{repo}", "<org>/lgip"),
        "## Counts\n\n" + _counts_table(counts),
        "## Variant families\n\n" + _families_section(info["families"], counts),
        "## Build\n\n"
        f"- source captions: `{info['source']['captions']}` (sha256 `{info['source']['captions_sha256'][:16]}…`)\n"
        f"- seed: {info['seed']}; K_same = {info['k_same']}; K_diff = {info['k_diff']}; "
        f"captions per image ≤ {info['captions_per_image']}; images sampled: "
        f"{'all' if info['num_images'] is None else info['num_images']}\n"
        f"- lexicon version: {info['lexicon_version']}; lgip {info['lgip_version']}; "
        f"datasets {info['libraries']['datasets']}; pyarrow {info['libraries']['pyarrow']}",
        "## Skipped input\n\n" + _skips_section(info["skips"]),
    ]
    if images is not None:
        sections.append("## Image licenses\n\n" + _licenses_section(images))
    sections += [
        "## License\n\nCaptions and annotations: COCO, CC BY 4.0. Images: their own Flickr licenses "
        "(see above or the COCO terms of use). Generated variants: CC BY 4.0.",
        "## Citation\n\n```bibtex\n" + CITATION + "\n```",
        *config.extra_card_sections,
    ]
    card = DatasetCard(f"---\n{card_data.to_yaml()}\n---\n\n" + "\n\n".join(sections) + "\n")
    card.save(folder / "README.md")
