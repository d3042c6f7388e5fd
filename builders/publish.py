"""Publish the LGIP dataset, the metric module and the demo Space to the Hugging Face Hub.

One command, any of the three parts (each needs its repo id); the token comes from ``HF_TOKEN``::

    python builders/publish.py --dataset build/lgip-train2017 --dataset-repo ORG/lgip \\
        --metric-repo ORG/lgip --space-repo ORG/lgip-demo [--private] [--dry-run]

``--dry-run`` validates everything and lists exactly the files and sizes that would be uploaded,
then stops. Each repo is mirrored: files in the repo that the upload does not contain are deleted
in the same commit, so stale shards never linger beside new ones.

- The dataset folder is uploaded as built (parquet shards, card, ``lgip_build.json``). A folder
  without embedded images, whose images were all skipped, or that does not match its card is refused.
- The metric module is staged as an ``evaluate`` Space: the module script is renamed after the repo
  (``evaluate.load("ORG/NAME")`` fetches ``NAME.py``), with its local imports, card, app and
  requirements; the staged copy must load with ``evaluate.load`` before it is uploaded.
- The demo Space is staged as ``space/`` plus the ``lgip_dataset`` and ``lgip_metric`` packages beside
  ``app.py`` (the Space imports them from there); results made with random weights are refused.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from huggingface_hub import HfApi, SpaceCard  # noqa: E402
from huggingface_hub.utils import filter_repo_objects  # noqa: E402
from huggingface_hub.utils._paths import DEFAULT_IGNORE_PATTERNS  # noqa: E402

from lgip_dataset.errors import LGIPError  # noqa: E402
from publish_checks import PublishError, check_dataset, check_metric, check_space  # noqa: E402

IGNORE_PATTERNS = ["*__pycache__*", "*.pyc", ".*", "*/.*", "*.tmp", "*.egg-info*"]
METRIC_SCRIPT = "lgip_metric.py"
METRIC_FILES = ("README.md", "app.py", "requirements.txt")
PACKAGES = ("lgip_dataset", "lgip_metric")


@dataclass
class Upload:
    """One repo's upload: what, where, from which folder, and the exact files it sends."""

    what: str
    source: str
    repo_id: str
    repo_type: str
    folder: Path
    checks: list[str]

    @property
    def files(self) -> list[tuple[str, int]]:
        """``(path in repo, bytes)`` of every file ``upload_folder`` sends, in its order."""
        return [(rel, (self.folder / rel).stat().st_size) for rel in upload_listing(self.folder)]


def upload_listing(folder: Path) -> list[str]:
    """The relative paths ``HfApi.upload_folder(folder, ignore_patterns=IGNORE_PATTERNS)`` uploads."""
    paths = sorted(p.relative_to(folder).as_posix() for p in folder.glob("**/*") if p.is_file())
    return list(filter_repo_objects(paths, ignore_patterns=IGNORE_PATTERNS + DEFAULT_IGNORE_PATTERNS))


def _copy_tree(source: Path, target: Path) -> None:
    """Copy the files of ``source`` that an upload would send into ``target``."""
    for rel in upload_listing(source):
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / rel, target / rel)


def plan_dataset(folder: Path, repo_id: str) -> Upload:
    """Validate a built dataset folder; it is uploaded in place."""
    if not folder.is_dir():
        raise PublishError(f"dataset folder {folder} does not exist")
    return Upload("dataset", str(folder), repo_id, "dataset", folder, check_dataset(folder))


def plan_metric(metric_dir: Path, repo_id: str, stage: Path) -> Upload:
    """Stage the evaluate module as a Space: ``<repo name>.py``, its local imports, card, app, requirements."""
    from evaluate.loading import get_imports

    script = metric_dir / METRIC_SCRIPT
    if not script.is_file():
        raise PublishError(f"{script} does not exist")
    name = f"{repo_id.split('/')[-1]}.py"
    stage.mkdir(parents=True)
    shutil.copy2(script, stage / name)
    local = [f"{imported}.py" for kind, imported, *_ in get_imports(str(script)) if kind == "internal"]
    for rel in (*METRIC_FILES, *local):
        if not (metric_dir / rel).is_file():
            raise PublishError(f"the metric module needs {metric_dir / rel}, which does not exist")
        shutil.copy2(metric_dir / rel, stage / rel)
    return Upload("metric", f"{metric_dir} (staged, {METRIC_SCRIPT} as {name})", repo_id, "space", stage,
                  check_metric(stage, name))


def plan_space(space_dir: Path, repo_id: str, stage: Path, dataset_repo: str | None) -> Upload:
    """Stage the demo Space: ``space/`` plus the packages it imports; point it at the dataset repo."""
    if not (space_dir / "app.py").is_file():
        raise PublishError(f"{space_dir} has no app.py")
    _copy_tree(space_dir, stage)
    for package in PACKAGES:
        _copy_tree(REPO / package, stage / package)
    if dataset_repo:
        card = SpaceCard.load(stage / "README.md")
        card.data.datasets = [dataset_repo]
        card.save(stage / "README.md")
    checks = check_space(stage, registry_hub_ids())
    checks += [f"bundled sample: {note}" for note in check_dataset(stage / "lgip_dataset" / "sample")]
    return Upload("space", f"{space_dir} + {' + '.join(PACKAGES)} (staged)", repo_id, "space", stage, checks)


def registry_hub_ids() -> set[str]:
    """The Hub repos that hold the weights of the registry's paper models (the Space card's ``models:``)."""
    import open_clip

    from lgip_metric.models import PAPER_MODELS, REGISTRY
    from lgip_metric.models.registry import OPEN_CLIP

    ids = set()
    for name in PAPER_MODELS:
        spec = REGISTRY[name]
        if spec.backend == OPEN_CLIP:
            ids.add(open_clip.get_pretrained_cfg(spec.identifier, spec.pretrained)["hf_hub"].strip("/"))
        else:
            ids.add(spec.identifier)
    return ids


def describe(upload: Upload) -> str:
    """The dry-run listing of one upload: target, checks passed, files and sizes."""
    files = upload.files
    width = max(len(rel) for rel, _ in files)
    lines = [f"{upload.what}: {upload.source} -> {upload.repo_type} {upload.repo_id}"]
    lines += [f"  ok  {note}" for note in upload.checks]
    lines += [f"  {rel:<{width}}  {_size(size):>10}" for rel, size in files]
    lines.append(f"  {len(files)} files, {_size(sum(size for _, size in files))}")
    return "\n".join(lines)


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def upload(plan: Upload, api: HfApi, *, private: bool) -> str:
    """Create the repo if needed and mirror the folder into it in one commit; return the commit URL."""
    api.create_repo(plan.repo_id, repo_type=plan.repo_type, private=private, exist_ok=True,
                    space_sdk="gradio" if plan.repo_type == "space" else None)
    info = api.upload_folder(
        repo_id=plan.repo_id,
        repo_type=plan.repo_type,
        folder_path=str(plan.folder),
        ignore_patterns=list(IGNORE_PATTERNS),
        delete_patterns="*",
        commit_message=f"Publish the LGIP {plan.what}",
    )
    return str(getattr(info, "commit_url", info))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="publish.py", description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, help="built dataset folder (from `lgip build`)")
    parser.add_argument("--dataset-repo", help="Hub dataset repo id, e.g. ORG/lgip")
    parser.add_argument("--metric-repo", help="Hub Space id of the evaluate module, e.g. ORG/lgip")
    parser.add_argument("--space-repo", help="Hub Space id of the demo, e.g. ORG/lgip-demo")
    parser.add_argument("--metric-dir", type=Path, default=REPO / "lgip_metric", help=argparse.SUPPRESS)
    parser.add_argument("--space-dir", type=Path, default=REPO / "space", help=argparse.SUPPRESS)
    parser.add_argument("--private", action="store_true", help="create new repos as private")
    parser.add_argument("--dry-run", action="store_true", help="validate and list the files; upload nothing")
    return parser


def plan_all(args: argparse.Namespace, stage: Path) -> list[Upload]:
    """Validate and stage every part the arguments name."""
    if bool(args.dataset) != bool(args.dataset_repo):
        raise PublishError("--dataset and --dataset-repo go together")
    plans = []
    if args.dataset:
        plans.append(plan_dataset(args.dataset, args.dataset_repo))
    if args.metric_repo:
        plans.append(plan_metric(args.metric_dir, args.metric_repo, stage / "metric"))
    if args.space_repo:
        plans.append(plan_space(args.space_dir, args.space_repo, stage / "space", args.dataset_repo))
    if not plans:
        raise PublishError("nothing to publish: name at least one of --dataset-repo, --metric-repo, --space-repo")
    return plans


def main(argv: list[str] | None = None, api: HfApi | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        with tempfile.TemporaryDirectory(prefix="lgip-publish-") as stage:
            plans = plan_all(args, Path(stage))
            print("\n\n".join(describe(plan) for plan in plans))
            if args.dry_run:
                print("\ndry run: nothing uploaded")
                return 0
            if api is None:
                if not os.environ.get("HF_TOKEN"):
                    raise PublishError("set HF_TOKEN to a Hub token with write access (or pass --dry-run)")
                api = HfApi(token=os.environ["HF_TOKEN"])
            for plan in plans:
                print(f"{plan.what}: uploaded {upload(plan, api, private=args.private)}")
    except LGIPError as err:
        print(f"publish: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
