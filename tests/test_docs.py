"""Every command the documentation shows runs: the fenced shell and Python blocks of README.md and docs/*.md.

Each page runs in a fresh folder that links the repository's top-level folders (so `lgip_dataset/sample`,
`benchmarks/...` resolve as in a checkout); its blocks run in order, sharing what the earlier ones wrote and,
for Python, their names. `lgip` commands run in this process (no interpreter start per command), `python
SCRIPT` commands in a subprocess. `lgip score` and `lgip evaluate` run on the embedded sample's first rows with
the tiny random-weight model in place of the model the page names (`FOR_THE_TEST`), so the page can show the
model a user runs. A block that needs what the repository does not hold says so in the HTML comment before it,
`<!-- docs-test: skip: REASON -->`, and is skipped with that reason; the README's two commands and the API
example run elsewhere (`RUN_ELSEWHERE`). A command line ending in a comment "exits with status N" must exit so.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers.paths import REPO
from lgip_metric.cli import main as lgip

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SHELL, PYTHON = ("bash", "sh", "shell"), ("python",)
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
SKIP = re.compile(r"<!--\s*docs-test:\s*skip:\s*(.+?)\s*-->")
MARKER = re.compile(r"<!--\s*([\w-]+)\s*-->")
RUN_ELSEWHERE = {"main-command": "CI installs the package with it (.ci/run)",
                 "test-command": "it is the test suite itself, which CI runs (.ci/run)",
                 "api-example": "tests/test_api.py runs it as written and checks what it prints"}
EXPECTED_STATUS = re.compile(r"#.*exits with status (\d+)")
SAMPLE_ROWS = "300"  # the embedded sample's first rows: every kind, several images, seconds on a CPU
SCRIPT_TIMEOUT_S = 300


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    language: str
    code: str
    skip: str | None  # why the test does not run it


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a page, each with the reason it is not run (from the comment line before it)."""
    text = path.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        marker = MARKER.fullmatch(before)
        skip = SKIP.fullmatch(before)
        reason = skip.group(1) if skip else RUN_ELSEWHERE.get(marker.group(1)) if marker else None
        found.append(Block(path.name, text[:match.start()].count("\n") + 1, match.group(1), match.group(2), reason))
    return found


def commands(code: str) -> list[tuple[list[str], int]]:
    """The commands of a shell block (continuation lines joined, comments dropped), each with the exit status
    it must give."""
    out = []
    for line in code.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if words:
            expected = EXPECTED_STATUS.search(line)
            out.append((words, int(expected.group(1)) if expected else 0))
    return out


def for_the_test(args: list[str]) -> list[str]:
    """An `lgip` command as the test runs it: `score`/`evaluate` with the tiny random-weight model (whatever
    `--model`/`--pretrained` the page names) on the sample's first rows, without progress bars; `audit`
    with fewer resamples."""
    command, rest, out = args[0], args[1:], [args[0]]
    while rest:
        word = rest.pop(0)
        if command in ("score", "evaluate") and word in ("--model", "--pretrained"):
            rest.pop(0)  # the page's value
            out += ["--model", "tiny-clip"] if word == "--model" else []
            continue
        out.append(word)
    if command in ("score", "evaluate"):
        out += ["--limit", SAMPLE_ROWS, "--num-workers", "0", "--device", "cpu", "--no-progress"]
    if command in ("evaluate", "audit"):
        out += ["--bootstrap", "100"]
    return out


def run_shell(block: Block, folder: Path) -> None:
    for words, expected in commands(block.code):
        where = f"{block.page}:{block.line}: {shlex.join(words)}"
        if words[0] == "lgip":
            try:
                status = lgip(for_the_test(words[1:]))
            except SystemExit as exit_:  # argparse's refusal
                status = exit_.code
        elif words[0] == "python":
            status = subprocess.run([sys.executable, *words[1:]], cwd=folder, timeout=SCRIPT_TIMEOUT_S,
                                    env={**os.environ, "PYTHONPATH": str(REPO)}).returncode
        else:
            pytest.fail(f"{where}: the docs test runs `lgip` and `python` commands only; mark the block "
                        "<!-- docs-test: skip: REASON --> or write it with those")
        assert status == expected, f"{where}: exit status {status}, expected {expected}"


def checkout_folder(tmp_path: Path) -> Path:
    """A folder that looks like a checkout to a command (the repository's top-level folders linked) and takes
    its outputs."""
    folder = tmp_path / "checkout"
    folder.mkdir()
    for entry in REPO.iterdir():
        if entry.name not in (".git", ".venv", "runs", "build"):
            (folder / entry.name).symlink_to(entry)
    return folder


@pytest.mark.parametrize("path", PAGES, ids=[p.name for p in PAGES])
def test_every_block_of_the_page_runs(path, tmp_path, monkeypatch):
    folder = checkout_folder(tmp_path)
    monkeypatch.chdir(folder)
    names: dict = {}
    ran = []
    for block in blocks(path):
        if block.skip is not None or block.language not in SHELL + PYTHON:
            continue
        if block.language in PYTHON:
            exec(compile(block.code, f"{block.page}:{block.line}", "exec"), names)
        else:
            run_shell(block, folder)
        ran.append(block.line)
    print(f"{path.name}: ran the blocks at lines {ran}")


def test_every_page_runs_something_or_says_why_not():
    """No shell or Python block goes unrun without a stated reason, and every page is linked from README.md."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for path in PAGES:
        code = [b for b in blocks(path) if b.language in SHELL + PYTHON]
        assert all(b.skip is None or b.skip.strip() for b in code), path
        if path.parent.name == "docs" and not path.name.startswith("judged_"):
            assert f"(docs/{path.name})" in readme, f"README.md does not link docs/{path.name}"


def test_a_skip_comment_an_expected_status_and_the_tiny_model_are_read(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("<!-- docs-test: skip: needs COCO -->\n```bash\nlgip build x\n```\n\n```python\nprint(1)\n```\n",
                    encoding="utf-8")
    assert [(b.language, b.skip) for b in blocks(page)] == [("bash", "needs COCO"), ("python", None)]
    assert commands("lgip evaluate --model x   # exits with status 2\n# a comment\nlgip report a \\\n  --out b") == [
        (["lgip", "evaluate", "--model", "x"], 2), (["lgip", "report", "a", "--out", "b"], 0)]
    assert for_the_test(["evaluate", "--model", "clip-vit-b16", "--pretrained", "none", "--out", "r"]) == [
        "evaluate", "--model", "tiny-clip", "--out", "r", "--limit", SAMPLE_ROWS, "--num-workers", "0",
        "--device", "cpu", "--no-progress", "--bootstrap", "100"]
