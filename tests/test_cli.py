"""The ``lgip`` console script itself: ``--version``, argument errors before torch, per-command help."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lgip_dataset import __version__
from lgip_metric.cli import main as lgip

REPO = Path(__file__).resolve().parents[1]

# Runs the CLI in a fresh interpreter and reports whether torch (or open_clip) got imported.
PROBE = """
import sys
from lgip_metric.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as done:
    code = done.code
print("imported:", sorted(m for m in ("torch", "open_clip", "transformers") if m in sys.modules))
sys.exit(code)
"""


def run_fresh(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env, cwd=REPO)


def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        lgip(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"lgip {__version__}"


@pytest.mark.parametrize("command", ["score", "evaluate"])
@pytest.mark.parametrize("args, message", [
    (["--model", "clip-vit-b61"], "argument --model: unknown model 'clip-vit-b61'; did you mean: clip-vit-b16"),
    (["--model", "random:tiny-clip", "--precision", "fp8"], "argument --precision: invalid choice: 'fp8'"),
])
def test_bad_model_and_precision_are_reported_before_torch_is_imported(command, args, message, tmp_path):
    done = run_fresh(command, *args, "--out", str(tmp_path / "out"))
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith(f"lgip {command}: error:")
    assert "imported: []" in done.stdout  # neither torch nor open_clip nor transformers was paid for


def test_a_valid_model_name_passes_the_early_check_without_torch(tmp_path):
    done = run_fresh("evaluate", "--model", "ViT-B-32/openai", "--precision", "fp8", "--out", str(tmp_path))
    assert "argument --model" not in done.stderr and "invalid choice: 'fp8'" in done.stderr
    assert "imported: []" in done.stdout


def test_evaluate_out_has_its_own_help(capsys):
    helps = {}
    for command in ("score", "evaluate"):
        with pytest.raises(SystemExit):
            lgip([command, "--help"])
        helps[command] = " ".join(capsys.readouterr().out.split())
    assert "--out OUT output folder for scores.parquet and provenance.json" in helps["score"]
    assert "--out OUT output folder for scores.parquet, provenance.json, results.json and report/" in helps["evaluate"]


def test_open_clip_names_without_importing_open_clip_are_its_list_models():
    """In a fresh interpreter (other tests register extra configs with open_clip in this one)."""
    code = ("import sys, json\n"
            "from lgip_metric.models import registry\n"
            "names = registry._open_clip_names()\n"
            "assert 'open_clip' not in sys.modules\n"
            "import open_clip\n"
            "print(json.dumps(names == sorted(open_clip.list_models())))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "true"
