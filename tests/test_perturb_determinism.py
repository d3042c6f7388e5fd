"""Same inputs and seed -> identical output, in any order, in any process; other seeds differ."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lgip_dataset.perturb import LEXICON_VERSION, Perturber

CAPTIONS = [
    "Two dogs playing in the snow.",
    "An orange cat sleeping on a red couch next to three people.",
    "A man riding a horse on a beach.",
    "A white plate with a hot dog, an apple and two oranges.",
    "A woman is talking on a cell phone near a fire hydrant.",
    "Ein Hund läuft über die Straße 🐶",
]
SCRIPT = """
import json, sys
from lgip_dataset.perturb import Perturber
p = Perturber()
print(json.dumps([p.perturb(c, seed=7).to_dict() for c in json.loads(sys.argv[1])], ensure_ascii=False))
"""


def run(captions, seed=0, **kwargs):
    p = Perturber(**kwargs)
    return [p.perturb(c, seed=seed) for c in captions]


def test_same_seed_same_output():
    assert run(CAPTIONS, seed=3) == run(CAPTIONS, seed=3)


def test_order_independent():
    forward = run(CAPTIONS, seed=11)
    backward = run(CAPTIONS[::-1], seed=11)[::-1]
    assert forward == backward
    # and independent of what was perturbed before in the same process
    p = Perturber()
    p.perturb("Three zebras and a giraffe.", seed=11)
    assert [p.perturb(c, seed=11) for c in CAPTIONS] == forward


def test_different_seeds_can_differ():
    outputs = {json.dumps([r.to_dict() for r in run(CAPTIONS, seed=s)]) for s in range(5)}
    assert len(outputs) == 5


def test_byte_identical_in_another_process_with_another_hash_seed():
    """Nothing depends on Python's randomised str hash or on process state."""
    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(repo)}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(CAPTIONS)], env=env, cwd=repo,
                          capture_output=True, check=True)
    assert json.loads(proc.stdout) == [r.to_dict() for r in run(CAPTIONS, seed=7)]


def test_lexicon_version_is_exposed():
    assert LEXICON_VERSION.count(".") == 2
    assert Perturber().lexicon.version == LEXICON_VERSION
