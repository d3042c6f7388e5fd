"""LGIP: Language-Guided Invariance Probing of vision-language models."""
import re
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent
VERSION = re.search(r'^VERSION = "([^"]+)"', (HERE / "lgip_dataset" / "about.py").read_text(encoding="utf-8"), re.M)[1]

setup(
    name="lgip",
    version=VERSION,
    description=(
        "Probe how CLIP-style vision-language models react to caption wording: "
        "paraphrase invariance and object/color/count flip sensitivity."
    ),
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=["lgip_dataset", "lgip_dataset.*", "lgip_metric", "lgip_metric.*"]),
    include_package_data=True,
    package_data={
        "lgip_dataset": ["lexicons/*.json", "lexicons/*.json.gz", "reference/*.json", "reference/*.jsonl.gz",
                         "sample/**/*", "sample/*"],
        "lgip_metric": ["*.md", "*.txt", "data/*"],
    },
    install_requires=[
        "datasets>=3.0",
        "evaluate>=0.4.3",
        "huggingface_hub>=0.24",
        "transformers>=4.48",
        "torch>=2.4",
        "torchvision>=0.19",
        "open_clip_torch>=3,<4",
        "sentencepiece>=0.2",
        "protobuf>=4",
        "gradio>=5",
        "inflect>=7",
        "lemminflect>=0.2.3",
        "wordfreq>=3.1,<4",  # lgip_dataset.perturb.grammaticality: misspelt words in human captions
        "numpy>=2.0",  # lgip_metric.stats uses np.bitwise_count
        "pyarrow>=15",
        "pandas>=2",
        "pillow>=10",
        "pyyaml>=6",
        "scipy>=1.11",
        "statsmodels>=0.14",
        "scikit-learn>=1.3",  # lgip_dataset.selection.adversary: the learned text-only adversary
        "matplotlib>=3.8",
        "tqdm>=4.66",
    ],
    extras_require={
        "dev": [
            "pytest>=8",
            "pytest-timeout>=2.3",
            "hypothesis>=6.100",
            "selenium>=4.20",
            "clip_benchmark>=1.6",  # tests/test_export_sugarcrepe.py: CLIP_benchmark reads `lgip export`'s files
        ],
        # benchmarks/bench_peer.py runs CLIP_benchmark beside LGIP
        "peer": ["clip_benchmark>=1.6"],
    },
    entry_points={"console_scripts": ["lgip=lgip_metric.cli:main"]},
)
