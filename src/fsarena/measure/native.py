"""Where fsarena's native helpers are: small C programs built by scripts/setup.sh.

They are built from `native/*.c` into the virtual environment's bin directory,
next to the Python interpreter that runs fsarena, so each checkout (and each
venv) has its own, matching its sources.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from fsarena.errors import FsarenaError


def find_native_tool(name: str) -> str | None:
    """The path of the native helper `fsarena-NAME`, or None if it was not built.

    Next to the interpreter first (the venv's own build); else on PATH (fsarena run by
    another interpreter, with the venv's bin directory on PATH). Inside a guest kernel
    the agent runs the host's interpreter (through hostfs or 9p), so it finds the
    host's helpers at the same path.
    """
    path = Path(sys.executable).parent / f"fsarena-{name}"
    if os.access(path, os.X_OK):
        return str(path)
    return shutil.which(f"fsarena-{name}")


def native_tool(name: str) -> str:
    """The path of the native helper `fsarena-NAME`; FsarenaError if it was not built."""
    path = Path(sys.executable).parent / f"fsarena-{name}"
    if not os.access(path, os.X_OK):
        raise FsarenaError(
            f"native helper {path.name} is missing from {path.parent}; "
            "run scripts/setup.sh (it builds native/*.c) or ./fsarena once"
        )
    return str(path)
