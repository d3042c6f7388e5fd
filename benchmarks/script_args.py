"""What the benchmark scripts share to refuse bad arguments with a message, never a traceback: whole-number and
path argparse types (argparse reports a refusal as ``SCRIPT: error: argument --X: ...``, exit 2), and
:func:`run`, which prints an LGIP error the work raises (a model name, a dataset, a device) the same way.

The scripts import it as ``script_args``: Python puts a script's own folder first on its path.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Callable

from lgip_dataset.errors import LGIPError


def whole(low: int) -> Callable[[str], int]:
    """An argparse type: a whole number >= ``low`` ("12k", "abc", "-3" for ``low`` 0 are refused)."""
    def parse(value: str) -> int:
        text = value.strip()
        if not re.fullmatch(r"-?[0-9]+", text):
            raise argparse.ArgumentTypeError(f"expected a whole number >= {low}, got {value!r}")
        if int(text) < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value!r}")
        return int(text)

    parse.__name__ = f"whole number >= {low}"  # what argparse names in its own messages
    return parse


positive = whole(1)
non_negative = whole(0)


def whole_list(low: int) -> Callable[[str], list[int]]:
    """An argparse type: comma-separated whole numbers, each >= ``low`` ("6000,12000")."""
    one = whole(low)

    def parse(value: str) -> list[int]:
        parts = [part for part in value.split(",") if part.strip()]
        if not parts:
            raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers >= {low}, got {value!r}")
        try:
            return [one(part) for part in parts]
        except argparse.ArgumentTypeError as err:
            raise argparse.ArgumentTypeError(f"{err} (in {value!r}; comma-separated whole numbers)") from None

    parse.__name__ = f"comma-separated whole numbers >= {low}"
    return parse


def existing_folder(value: str) -> Path:
    """An argparse type: a folder that exists."""
    path = Path(value)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{value}: no such folder")
    return path


def folder_or_hub_id(value: str) -> str:
    """An argparse type: an existing folder, or a Hub dataset id (``org/name``); a path that is not there is
    refused (``/data/x``, ``./x``, ``~/x``)."""
    if not Path(value).expanduser().exists() and value.startswith(("/", ".", "~")):
        raise argparse.ArgumentTypeError(f"{value}: no such folder (give an LGIP folder or a Hub dataset id)")
    return value


def run(main: Callable[[], object]) -> None:
    """Call ``main()`` and exit with what it returns; an LGIP error (its message names the file or argument) is
    printed as ``SCRIPT: error: MESSAGE`` with exit status 2."""
    try:
        code = main()
    except LGIPError as err:
        print(f"{Path(sys.argv[0]).name}: error: {err}", file=sys.stderr)
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)
