"""The rooms of ``docs/architecture.md`` hold: no import runs against the stated direction, no module imports
itself through others, the files the walk of one score names exist, no module of lgip_metric is over 450 lines (the
statistics' files under 300), lgip_dataset keeps at most 8 modules beside its sub-packages, and every public name
the documentation gives, or that moved (lgip_metric's in 0.2.0, lgip_dataset's after it), still imports."""
from __future__ import annotations

import ast
import fnmatch
import importlib
import re
import sys
import warnings
from pathlib import Path

import pytest

from lgip_dataset.moved import MOVED as DATASET_MOVED
from lgip_metric.moved import MOVED as METRIC_MOVED
from helpers.paths import REPO

DOC = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
PACKAGES = {"lgip_dataset": REPO / "lgip_dataset", "lgip_metric": REPO / "lgip_metric",
            "lgip_space": REPO / "space" / "lgip_space"}


def rooms() -> list[tuple[int, str, list[str]]]:
    """(order, room, module patterns) of the doc's table."""
    table = DOC.split("## Rooms", 1)[1].split("\n## ", 1)[0]
    found = []
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].isdigit():
            found.append((int(cells[0]), cells[1], re.findall(r"`([\w.*]+)`", cells[2])))
    return found


def room_of(module: str) -> tuple[int, str]:
    """The (order, room) of ``module``: the room naming it, or a package above it. A package that holds
    other rooms' modules (``lgip_metric``) names only itself, so every module of it must be placed."""
    table = rooms()
    every = [pattern for _, _, patterns in table for pattern in patterns]
    for order, room, patterns in table:
        for pattern in patterns:
            holds_others = any(other.startswith(pattern + ".") for other in every)
            if fnmatch.fnmatch(module, pattern) or (not holds_others and fnmatch.fnmatch(module, pattern + ".*")):
                return order, room
    raise AssertionError(f"{module} is in no room of docs/architecture.md; add it to the table")


def modules() -> dict[str, Path]:
    found = {}
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            parts = [package, *path.relative_to(folder).with_suffix("").parts]
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(module: str, path: Path, *, typing: bool = True) -> set[str]:
    """The lgip modules ``module`` imports anywhere in its body (a name imported from a package counts as
    its submodule where there is one); without those under ``if TYPE_CHECKING:`` when not ``typing``."""
    known = modules()
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {id(inner) for node in ast.walk(tree) if isinstance(node, ast.If) and not typing
                   and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
                   for statement in node.body for inner in ast.walk(statement)}
    out = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            out.update(f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names)
    return {name for name in out if name.split(".")[0] in PACKAGES}


def test_the_doc_states_an_order_for_every_room():
    found = rooms()
    assert [order for order, _, _ in found] == sorted(order for order, _, _ in found) and len(found) >= 8
    assert {"scoring", "statistics", "results", "metric"} <= {room for _, room, _ in found}


def test_no_import_runs_against_the_stated_direction():
    against = []
    for module, path in sorted(modules().items()):
        order, room = room_of(module)
        for target in sorted(imports(module, path)):
            target_order, target_room = room_of(target)
            if target_room != room and target_order >= order:
                against.append(f"{module} ({room}) imports {target} ({target_room})")
    assert against == []


def test_no_module_imports_itself_through_others():
    """No circle of imports among the modules of both packages (an import only for type checkers aside)."""
    found = modules()
    graph = {module: imports(module, path, typing=False) - {module} for module, path in found.items()}

    def reached(start: str) -> set[str]:
        seen, todo = set(), list(graph[start])
        while todo:
            if (module := todo.pop()) not in seen:
                seen.add(module)
                todo.extend(graph.get(module, ()))
        return seen

    assert sorted(module for module in graph if module in reached(module)) == []


def test_lgip_dataset_keeps_at_most_8_modules_beside_its_sub_packages():
    top = sorted(path.name for path in PACKAGES["lgip_dataset"].glob("*.py"))
    assert len(top) <= 8, top


def test_the_walk_of_one_score_names_files_that_exist_in_at_most_ten_steps():
    walk = DOC.split("## One score", 1)[1].split("\n## ", 1)[0]
    steps = re.findall(r"^\d+\. ", walk, re.M)
    assert 5 <= len(steps) <= 10
    named = re.findall(r"`([\w/]+\.py)`", walk)
    assert named and [name for name in named if not (REPO / name).is_file()] == []


def test_no_module_of_lgip_metric_is_over_450_lines_and_the_statistics_under_300():
    sizes = {path.relative_to(REPO).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
             for path in PACKAGES["lgip_metric"].rglob("*.py")}
    assert {name: n for name, n in sizes.items() if n > 450} == {}
    statistics = {name: n for name, n in sizes.items() if re.fullmatch(r"lgip_metric/stats(_\w+)?\.py", name)}
    assert len(statistics) >= 5 and {name: n for name, n in statistics.items() if n >= 300} == {}


PAGES = [REPO / "README.md", *(REPO / "docs").glob("*.md"), REPO / "lgip_metric" / "README.md"]
DOCUMENTED = sorted({name for path in PAGES
                     for name in re.findall(r"\blgip_(?:metric|dataset)(?:\.[A-Za-z_]\w*)+(?![\w*])",
                                            path.read_text(encoding="utf-8"))})


@pytest.mark.parametrize("name", DOCUMENTED)
def test_every_documented_name_imports(name):
    parts = name.split(".")
    for split in range(len(parts), 0, -1):  # the longest module prefix, then attributes
        try:
            target = importlib.import_module(".".join(parts[:split]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[split:]:
            target = getattr(target, attribute)
        return
    pytest.fail(f"{name} does not import")


MOVED = {**METRIC_MOVED, **DATASET_MOVED}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_a_module_that_moved_imports_by_its_old_name_as_the_same_module(old):
    sys.modules.pop(old, None)  # as in a process that has not imported it by that name yet
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED[old]) and module.__spec__.name == MOVED[old]
    assert [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)] == [
        f"{old} moved to {MOVED[old]}; import it from there"]


def test_an_old_name_imported_from_its_package_is_the_same_module():
    sys.modules.pop("lgip_dataset.balance", None)
    vars(importlib.import_module("lgip_dataset")).pop("balance", None)
    with pytest.warns(DeprecationWarning, match="lgip_dataset.balance moved to lgip_dataset.selection.balance"):
        from lgip_dataset import balance
        from lgip_dataset.balance import choose
    assert balance is importlib.import_module("lgip_dataset.selection.balance") and choose is balance.choose


def test_the_walk_from_evaluate_model_to_results_json_hashes_the_dataset_once(tmp_path, monkeypatch):
    from lgip_dataset import SAMPLE_DIR
    from lgip_dataset.files import hub_io
    from lgip_metric import api

    hashed, real = [], hub_io.shards_fingerprint
    monkeypatch.setattr(hub_io, "shards_fingerprint", lambda shards: hashed.append(shards) or real(shards))
    results = api.evaluate_model("random:tiny-clip", tmp_path / "run", dataset=SAMPLE_DIR, limit=60, bootstrap=0,
                                 cache_dir="none", num_workers=0, progress=False)
    assert len(hashed) == 1 and results.fingerprint == real(hashed[0])
    assert (tmp_path / "run" / "results.json").is_file()
