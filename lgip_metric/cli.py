"""The ``lgip`` console script: one parser, one module per subcommand.

Each subcommand module defines ``add_arguments(parser)`` and ``run(args) -> int``; its one-line
help lives in ``COMMANDS``. The text-side subcommands live in ``lgip_dataset.commands``, the
model-side ones in ``lgip_metric.commands`` (which call :mod:`lgip_metric.api`). Modules are
imported only when their subcommand runs, so ``lgip perturb`` never pays for importing torch.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from lgip_dataset import __version__
from lgip_dataset.errors import LGIPError

COMMANDS = {
    "perturb": ("lgip_dataset.commands.perturb", "Print the paraphrases and flips of one caption."),
    "build": ("lgip_dataset.commands.build", "Build a Hub-layout LGIP dataset folder from COCO."),
    "export": ("lgip_dataset.commands.export", "Write a build's flips for another harness (CLIP_benchmark's SugarCrepe)."),
    "judge": ("lgip_dataset.commands.judge", "Blind judging of flips: draw sheets, merge labels into a store, report."),
    "score": ("lgip_metric.commands.score", "Score every (image, text) row of a dataset with a model."),
    "evaluate": ("lgip_metric.commands.evaluate", "Score a model and compute the LGIP statistics."),
    "report": ("lgip_metric.commands.report", "Tables, frontier plot and qualitative page from results."),
    "audit": ("lgip_metric.commands.audit", "Audit a probe set's negatives for text artifacts (text-only learners)."),
    "analyze": ("lgip_metric.commands.analyze", "Correlate per-row gaps and invariance errors with caption features."),
    "push-results": ("lgip_metric.commands.push_results", "Write a results file's metrics into a model card's model-index."),
}


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    """The ``lgip`` parser, with the arguments of the subcommands named in ``argv`` registered."""
    parser = argparse.ArgumentParser(
        prog="lgip",
        description="Language-Guided Invariance Probing of vision-language models.",
    )
    parser.add_argument("--version", action="version", version=f"lgip {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module_name, help_line) in COMMANDS.items():
        sub = subparsers.add_parser(name, help=help_line, description=help_line)
        sub.set_defaults(_module=module_name)
        if name in _requested(argv):
            importlib.import_module(module_name).add_arguments(sub)
    return parser


def _requested(argv: list[str]) -> set[str]:
    """Subcommands whose arguments must be registered (all of them when asked for help)."""
    named = {a for a in argv if a in COMMANDS}
    return named or (set(COMMANDS) if not argv or argv[0] in ("-h", "--help") else set())


# What an interrupted command leaves for its rerun (every command writes its files atomically).
_CACHE_KEPT = "the embeddings cached so far are kept and a rerun reuses them (none with --cache-dir none)"
KEPT_ON_INTERRUPT = {
    "build": "the image shards finished so far (1,000 images each) are kept beside --out, in .<name>.partial, and a "
             "rerun with the same arguments reuses them; the captions are perturbed again",
    "score": _CACHE_KEPT,
    "evaluate": _CACHE_KEPT,
}
NOTHING_KEPT = "no file was left half-written; run the command again"
PIPE_CLOSED = 141  # the exit status of a process stopped by SIGPIPE (128 + 13), as `yes | head` ends


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if hasattr(sys.stdout, "reconfigure"):  # a terminal or pipe that cannot show a character gets its escape
        sys.stdout.reconfigure(errors="backslashreplace")
    args = build_parser(argv).parse_args(argv)
    module = importlib.import_module(args._module)
    try:
        code = int(module.run(args) or 0)
        sys.stdout.flush()  # a closed pipe is met here, not at exit
        return code
    except BrokenPipeError:  # the reader stopped reading (`| head`): stop quietly, as Unix tools do
        _silence_stdout()
        return PIPE_CLOSED
    except LGIPError as err:
        print(f"lgip {args.command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"lgip {args.command}: interrupted; {KEPT_ON_INTERRUPT.get(args.command, NOTHING_KEPT)}", file=sys.stderr)
        return 130


def _silence_stdout() -> None:
    """Point stdout at the null device, so that the interpreter's last flush meets no closed pipe."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a file descriptor (an in-memory stream)
        pass


if __name__ == "__main__":  # python -m lgip_metric.cli COMMAND ...
    sys.exit(main())
