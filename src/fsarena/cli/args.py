"""Command-line arguments as the user typed them: finite numbers, filesystem lists, usage errors.

Every problem with what was typed is one line in fsarena's style, naming the
flag as typed and what to do, exit code 2: click's own usage errors included.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
import click.shell_completion

from fsarena.errors import FsarenaError
from fsarena.report.formats import names

if TYPE_CHECKING:
    from fsarena.session.file import Session

F = TypeVar("F", bound=Callable[..., Any])  # a command function, as click's decorators take it


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


class Percent(FiniteNumber):
    """A finite percentage from 0 to 1000 (the gate's threshold): nan, inf and negative
    values are bad input, never a threshold nothing is above."""

    name = "percent"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        number = super().convert(value, param, ctx)
        if not 0 <= number <= 1000:
            self.fail(f"{value!r} is not a percentage from 0 to 1000, like 5", param, ctx)
        return number


PERCENT = Percent()

# The report's formats, for --format: the one table of them (fsarena.report.formats,
# light: the renderers load only in the commands that render).
FORMATS = names("report")


def format_option(command: str, **kwargs: Any) -> Callable[[F], F]:
    """--format: the choices of `command` (report.formats.names), text by default."""
    settings: dict[str, Any] = {"default": "text", "show_default": True, **kwargs}
    return click.option("--format", "fmt", type=click.Choice(names(command)), **settings)


def fs_names(text: str | None, flag: str = "--fs") -> list[str] | None:
    """--fs (or another comma-separated list of names, such as tune's --options) as a
    list: None when not given; an empty or repeated name refused, naming the flag."""
    if text is None:
        return None
    names = [name.strip() for name in text.split(",")]
    what = "filesystem" if flag == "--fs" else "name"
    if not any(names):
        example = "like ext4,xfs, or leave --fs out for the suite's own" if flag == "--fs" else (
            "of names, or leave it out for all of them"
        )  # fmt: skip
        raise FsarenaError(
            f"{flag} {text!r} names no {what}: give a comma-separated list {example}"
        )
    if "" in names:
        like = "ext4,xfs" if flag == "--fs" else "NAME,NAME"
        raise FsarenaError(f"{flag} {text!r} has an empty name: write it like {like}")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        more = " (more runs of it: --repetitions)" if flag == "--fs" else ""
        raise FsarenaError(
            f"{flag} names {', '.join(twice)} more than once: name each {what} once{more}"
        )
    return names


def complete_filesystems(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[click.shell_completion.CompletionItem]:
    """Shell completion of --fs: every filesystem and NAME@DRIVER, after the last comma."""
    from fsarena.filesystems.profiles import PROFILES

    del ctx, param
    done, _, last = incomplete.rpartition(",")
    prefix = f"{done}," if done else ""
    names = [p.name for p in PROFILES.values() if not p.never]
    names += [f"{p.name}@{d}" for p in PROFILES.values() for d in p.drivers if d != "kernel"]
    return [click.shell_completion.CompletionItem(prefix + n) for n in names if n.startswith(last)]


def complete_suites(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[click.shell_completion.CompletionItem]:
    """Shell completion of --suite: the built-in suites, then .toml files as paths."""
    from fsarena.plan.suite import builtin_suites

    del ctx, param
    found = [
        click.shell_completion.CompletionItem(name)
        for name in builtin_suites()
        if name.startswith(incomplete)
    ]
    return found or [click.shell_completion.CompletionItem(incomplete, type="file")]


def usage_line(exc: click.UsageError) -> str:
    """click's usage error as one line: what is wrong, and where the options are listed."""
    what = exc.format_message().strip().rstrip(".")
    what = what[:1].lower() + what[1:]
    path = exc.ctx.command_path if exc.ctx is not None else "fsarena"
    return f"{what}; `{path} -h` lists the options"


def force_option(f: F) -> F:
    """--force: the one way to write over an existing --output file."""
    return click.option("--force", is_flag=True, help="Replace the --output file if it exists.")(f)


def output_options(help: str = "Write here (default: stdout).") -> Callable[[F], F]:
    """--output FILE (-o) and --force, the one way to write over it: every command that
    writes a file the user names."""

    def decorate(f: F) -> F:
        path = click.Path(dir_okay=False, path_type=Path)
        return click.option("--output", "-o", type=path, default=None, help=help)(force_option(f))

    return decorate


def refuse_existing(output: Path | None, what: str, force: bool) -> None:
    """An --output that names a file fsarena may not replace is refused, in one line, unless
    --force: nothing there, an empty file, or a report fsarena wrote is fine
    (session.outputs)."""
    if output is None or str(output) == "-" or force:
        return
    from fsarena.session.outputs import replaceable

    if not replaceable(output):
        from fsarena.session.file import refusal

        raise FsarenaError(refusal(output, what))


def weights(weigh: str | None, workload: str | None) -> dict[str, float] | None:
    """--weigh KIND=W,... and --workload NAME as kind weights; None when neither is given."""
    from fsarena.analysis.answer import PROFILES

    if weigh is None and workload is None:
        return None
    found: dict[str, float] = {}
    if workload is not None:
        if workload not in PROFILES:
            raise FsarenaError(
                f"--workload {workload!r} is not a named workload: use one of "
                f"{', '.join(sorted(PROFILES))}, or --weigh KIND=W,..."
            )
        found.update(PROFILES[workload])
    found.update(_weighed(weigh))
    if not any(w > 0 for w in found.values()):
        raise FsarenaError("--weigh gives every kind weight 0: weigh at least one kind above 0")
    return found


def _weighed(weigh: str | None) -> dict[str, float]:
    """--weigh KIND=W,... as typed: each kind once, a known kind, a number >= 0."""
    from fsarena.kinds import KINDS

    found: dict[str, float] = {}
    for item in (weigh or "").split(","):
        if not item.strip():
            continue
        kind, _, value = item.partition("=")
        kind = kind.strip()
        if kind not in KINDS:
            raise FsarenaError(
                f"--weigh {item!r}: {kind!r} is not a kind of work; kinds: {', '.join(KINDS)}"
            )
        if kind in found:
            raise FsarenaError(f"--weigh names {kind} twice: give each kind once, like {kind}=1")
        try:
            weight = float(value)
        except ValueError:
            weight = math.nan
        if not math.isfinite(weight) or weight < 0:
            raise FsarenaError(
                f"--weigh {item!r}: write KIND=W with W a number >= 0, like databases=1"
            )
        found[kind] = weight
    return found


def require_measured(
    given: dict[str, float] | None, weigh: str | None, measured: set[str], what: str
) -> None:
    """Weights that could weigh nothing are refused: a kind named with --weigh that `what`
    (the plan, the session) never measures, or weights none of whose kinds it measures."""
    if given is None:
        return
    from fsarena.kinds import KINDS

    has = ", ".join(k for k in KINDS if k in measured) or "none"
    unmeasured = [k for k, w in _weighed(weigh).items() if w > 0 and k not in measured]
    if unmeasured:
        raise FsarenaError(
            f"--weigh {','.join(unmeasured)}: {what} measures no such work; the kinds it "
            f"measures: {has}"
        )
    if not any(w > 0 and k in measured for k, w in given.items()):
        raise FsarenaError(
            f"the weights given weigh no kind {what} measures (it measures: {has}); weigh "
            "one of those with --weigh KIND=W"
        )


def reweighed(session: Session, weigh: str | None, workload: str | None) -> Session:
    """The session with the answer's weights given on reading it (report, compare)."""
    given = weights(weigh, workload)
    if given is None:
        return session
    measured = {info.kind for info in session.plan.task_info.values() if info.kind}
    require_measured(given, weigh, measured, "the session")
    plan = session.plan.model_copy(update={"weights": given})
    return session.model_copy(update={"plan": plan})
