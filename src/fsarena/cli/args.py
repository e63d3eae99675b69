"""Command-line arguments as the user typed them: finite numbers, filesystem lists, usage errors.

Every problem with what was typed is one line in fsarena's style, naming the
flag as typed and what to do, exit code 2: click's own usage errors included.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click

from fsarena.errors import FsarenaError


class FiniteNumber(click.ParamType[float]):
    """A float that is a number: nan and inf are refused, not compared with a bound."""

    name = "number"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float) and math.isfinite(value):
            return value
        try:
            number = float(str(value))
        except ValueError:
            self.fail(f"{value!r} is not a number; write it like 0.02 or 3600", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number; write it like 0.02 or 3600", param, ctx)
        return number


NUMBER = FiniteNumber()

# The report formats, for --format: fsarena.report (charts, statistics, templates)
# is imported only by the commands that render; a unit test keeps this equal to
# sorted(fsarena.report.EXPORTERS).
FORMATS = ("csv", "html", "json", "markdown", "text")


def fs_names(text: str | None) -> list[str] | None:
    """--fs as a list of names: None when not given; an empty or repeated name refused."""
    if text is None:
        return None
    names = [name.strip() for name in text.split(",")]
    if not any(names):
        raise FsarenaError(
            f"--fs {text!r} names no filesystem: give a comma-separated list like ext4,xfs, "
            "or leave --fs out for the suite's own"
        )
    if "" in names:
        raise FsarenaError(f"--fs {text!r} has an empty name: write it like ext4,xfs")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise FsarenaError(
            f"--fs names {', '.join(twice)} more than once: name each filesystem once "
            "(more runs of it: --repetitions)"
        )
    return names


def usage_line(exc: click.UsageError) -> str:
    """click's usage error as one line: what is wrong, and where the options are listed."""
    what = exc.format_message().strip().rstrip(".")
    what = what[:1].lower() + what[1:]
    path = exc.ctx.command_path if exc.ctx is not None else "fsarena"
    return f"{what}; `{path} -h` lists the options"


def force_option(f: Any) -> Any:
    """--force: the one way to write over an existing --output file."""
    return click.option("--force", is_flag=True, help="Replace the --output file if it exists.")(f)


def refuse_existing(output: Path | None, what: str, force: bool) -> None:
    """An --output that names an existing file is refused, in one line, unless --force."""
    if output is None or str(output) == "-" or force or not output.exists():
        return
    from fsarena.session.store import refusal

    raise FsarenaError(refusal(output, what))
