"""Hatch build hook: the man page, generated from the CLI itself when fsarena is built.

Every wheel (and every `pip install`, editable or not) carries
share/man/man1/fsarena.1, written by fsarena.cli.manpage from the click command
tree of the source being built, so `man fsarena` finds it beside the `fsarena`
command (man-db looks in ../share/man of each PATH entry). Only click is needed to
render it (pyproject.toml's build requirements). docs/fsarena.1 is the same page
kept in the source tree for readers of the repository; tests/unit/test_docs.py
fails when it is stale and builds a wheel to check the built page.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def render_man_page(src: Path) -> str:
    """The page from the CLI of the source tree `src` (not whatever fsarena is installed)."""
    sys.path.insert(0, str(src))
    try:
        from fsarena.cli.commands import main
        from fsarena.cli.manpage import render
    finally:
        sys.path.remove(str(src))
    return render(main)


class ManPageHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="fsarena-man-"))
        page = self._dir / "fsarena.1"
        page.write_text(render_man_page(Path(self.root) / "src"))
        build_data.setdefault("shared_data", {})[str(page)] = "share/man/man1/fsarena.1"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)
