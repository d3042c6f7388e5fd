"""Publish the LGIP dataset, the metric module and the demo Space to the Hugging Face Hub.

One command, any of the three parts, all under one repo id; the token comes from ``HF_TOKEN``::

    python builders/publish.py --repo-id ORG/lgip --dataset build/lgip-train2017 --metric --space \\
        [--private] [--dry-run]

``--repo-id`` (default ``lgip_dataset.about.REPO_ID``) names the dataset repo ``ORG/lgip`` and the
metric's Space ``ORG/lgip``, so that ``load_dataset("ORG/lgip", "pairs")`` and ``evaluate.load("ORG/lgip")``
resolve, and the demo Space ``ORG/lgip-demo``; ``--dataset-repo``, ``--metric-repo`` and ``--space-repo``
override one part's id (and name the part to publish). Every card uploaded is stamped with these ids.

``--dry-run`` validates everything and lists exactly the files and sizes that would be uploaded,
then stops. Each repo is mirrored: files in the repo that the upload does not contain are deleted
in the same commit, so stale shards never linger beside new ones.

- The dataset folder is uploaded as built (parquet shards, ``lgip_build.json``; staged as links to
  them), its card's ``load_dataset("…")`` lines stamped with the dataset repo id. A folder without
  embedded images, whose images were all skipped, or that does not match its card is refused.
- The metric module is staged as an ``evaluate`` Space: the module script is renamed after the repo
  (``evaluate.load("ORG/NAME")`` fetches ``NAME.py``), with its local imports, card, app and
  requirements, ``REPO_ID`` in its card and ``about.py`` replaced by the repo id; the staged copy
  must load with ``evaluate.load`` before it is uploaded.
- The demo Space is staged as ``space/`` plus the ``lgip_dataset`` and ``lgip_metric`` packages beside
  ``app.py`` (the Space imports them from there), its card's ``datasets:`` the dataset repo id (the
  Run tab's default); results made with random weights are refused.
"""
from __future__ import annotations

import argparse
import os
import re
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

from lgip_dataset.about import REPO_ID  # noqa: E402
from lgip_dataset.errors import LGIPError  # noqa: E402
from lgip_dataset.writing.card import stamp_repo_id  # noqa: E402
from publish_checks import PublishError, check_dataset, check_metric, check_space  # noqa: E402

IGNORE_PATTERNS = ["*__pycache__*", "*.pyc", ".*", "*/.*", "*.tmp", "*.egg-info*"]
METRIC_SCRIPT = "lgip_metric.py"
METRIC_FILES = ("README.md", "app.py", "requirements.txt")
PACKAGES = ("lgip_dataset", "lgip_metric")
STAMPED = ("README.md", "about.py")  # the staged metric files that name the repo id
DEMO_SUFFIX = "-demo"  # the demo Space is ``<repo id>-demo``
REPO_ID_FORM = re.compile(r"[\w.-]+/[\w.-]+")


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


def stage_dataset(folder: Path, repo_id: str, stage: Path) -> None:
    """Stage a built dataset folder as links to its files, with its card stamped with ``repo_id``."""
    for rel in upload_listing(folder):
        (stage / rel).parent.mkdir(parents=True, exist_ok=True)
        if rel != "README.md":
            (stage / rel).symlink_to((folder / rel).resolve())
    card = (folder / "README.md").read_text(encoding="utf-8")
    (stage / "README.md").write_text(stamp_repo_id(card, repo_id), encoding="utf-8")


def plan_dataset(folder: Path, repo_id: str, stage: Path) -> Upload:
    """Validate a built dataset folder and stage it for ``repo_id``."""
    if not folder.is_dir():
        raise PublishError(f"dataset folder {folder} does not exist")
    checks = check_dataset(folder)
    stage_dataset(folder, repo_id, stage)
    return Upload("dataset", f"{folder} (card stamped with {repo_id})", repo_id, "dataset", stage, checks)


def stage_metric(metric_dir: Path, repo_id: str, stage: Path) -> str:
    """Stage the evaluate module as the Space ``repo_id``: ``<repo name>.py``, its local imports, card, app,
    requirements, with ``REPO_ID`` in the card and ``about.py`` replaced by ``repo_id``; return the script's name."""
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
    stamp_metric(stage, repo_id)
    return name


def stamp_metric(stage: Path, repo_id: str) -> None:
    """Replace ``REPO_ID`` by ``repo_id`` in the staged metric's card and ``about.py``."""
    for rel in STAMPED:
        if (stage / rel).is_file():
            text = (stage / rel).read_text(encoding="utf-8")
            (stage / rel).write_text(text.replace(REPO_ID, repo_id), encoding="utf-8")


def plan_metric(metric_dir: Path, repo_id: str, stage: Path) -> Upload:
    """Stage the evaluate module for ``repo_id`` and check that the staged copy loads."""
    name = stage_metric(metric_dir, repo_id, stage)
    return Upload("metric", f"{metric_dir} (staged, {METRIC_SCRIPT} as {name})", repo_id, "space", stage,
                  check_metric(stage, name, repo_id))


def plan_space(space_dir: Path, repo_id: str, stage: Path, dataset_repo: str) -> Upload:
    """Stage the demo Space: ``space/`` plus the packages it imports; point it at the dataset repo."""
    if not (space_dir / "app.py").is_file():
        raise PublishError(f"{space_dir} has no app.py")
    _copy_tree(space_dir, stage)
    for package in PACKAGES:
        _copy_tree(REPO / package, stage / package)
    if (stage / "README.md").is_file():
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
    parser.add_argument("--repo-id", default=REPO_ID,
                        help=f"Hub id of the dataset repo and of the metric's Space; the demo Space is ID{DEMO_SUFFIX} "
                             f"(default: {REPO_ID})")
    parser.add_argument("--dataset", type=Path, help="publish this built dataset folder (from `lgip build`)")
    parser.add_argument("--metric", action="store_true", help="publish the evaluate module")
    parser.add_argument("--space", action="store_true", help="publish the demo Space")
    parser.add_argument("--dataset-repo", help="the dataset repo id, if not --repo-id (the demo Space points at it)")
    parser.add_argument("--metric-repo", help="publish the evaluate module to this Space id instead of --repo-id")
    parser.add_argument("--space-repo", help=f"publish the demo Space to this id instead of ID{DEMO_SUFFIX}")
    parser.add_argument("--metric-dir", type=Path, default=REPO / "lgip_metric", help=argparse.SUPPRESS)
    parser.add_argument("--space-dir", type=Path, default=REPO / "space", help=argparse.SUPPRESS)
    parser.add_argument("--private", action="store_true", help="create new repos as private")
    parser.add_argument("--dry-run", action="store_true", help="validate and list the files; upload nothing")
    return parser


def repo_ids(args: argparse.Namespace) -> dict[str, str]:
    """The repo id of each part the arguments name (``dataset``, ``metric``, ``space``), and under ``datasets``
    the dataset repo the demo Space points at, published now or not."""
    ids = {"datasets": args.dataset_repo or args.repo_id}
    if args.dataset:
        ids["dataset"] = ids["datasets"]
    if args.metric or args.metric_repo:
        ids["metric"] = args.metric_repo or args.repo_id
    if args.space or args.space_repo:
        ids["space"] = args.space_repo or args.repo_id + DEMO_SUFFIX
    bad = sorted({repo for repo in ids.values() if not REPO_ID_FORM.fullmatch(repo)})
    if bad:
        raise PublishError(f"{', '.join(map(repr, bad))}: a Hub repo id is ORG/NAME (e.g. --repo-id ORG/lgip); without "
                           "the ORG, evaluate.load would look in evaluate-metric/NAME")
    return ids


def plan_all(args: argparse.Namespace, stage: Path) -> list[Upload]:
    """Validate and stage every part the arguments name."""
    ids = repo_ids(args)
    plans = []
    if "dataset" in ids:
        plans.append(plan_dataset(args.dataset, ids["dataset"], stage / "dataset"))
    if "metric" in ids:
        plans.append(plan_metric(args.metric_dir, ids["metric"], stage / "metric"))
    if "space" in ids:
        plans.append(plan_space(args.space_dir, ids["space"], stage / "space", ids["datasets"]))
    if not plans:
        raise PublishError("nothing to publish: name at least one of --dataset DIR, --metric, --space")
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
