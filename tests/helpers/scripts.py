"""Run a benchmark script in this process, as ``python benchmarks/SCRIPT.py ARGS`` runs it (``runpy``; its
folder first on the path), so a test of its arguments costs no interpreter start."""
from __future__ import annotations

import contextlib
import io
import os
import runpy
import sys

from helpers.paths import REPO

BENCHMARKS = REPO / "benchmarks"


def run_script(script: str, *args: str) -> tuple[int, str, str]:
    """``python benchmarks/SCRIPT ARGS`` in this process: exit status, stdout, stderr. The environment is put
    back afterwards: a script may set variables for itself (bench_metric.py's BLAS threads), which would
    otherwise reach every later subprocess of the test session."""
    out, err = io.StringIO(), io.StringIO()
    argv, path, environ = sys.argv, list(sys.path), dict(os.environ)
    sys.argv, sys.path[:0] = [str(BENCHMARKS / script), *args], [str(BENCHMARKS)]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            runpy.run_path(str(BENCHMARKS / script), run_name="__main__")
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        if not isinstance(done.code, int) and done.code is not None:
            err.write(str(done.code))
    finally:
        sys.argv, sys.path[:] = argv, path
        os.environ.clear()
        os.environ.update(environ)
    return code, out.getvalue(), err.getvalue()
