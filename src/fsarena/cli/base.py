"""What every command shares: the one-line error and exit, exit codes, default paths."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, NoReturn

import click

from fsarena.cli.args import usage_line
from fsarena.errors import FsarenaError

DEFAULT_RESULTS = "results"
# Exit codes of `fsarena run` (README, `fsarena run --help`): 0 every planned run was
# measured; 1 partial (some failed or were skipped); 2 bad input or an error; 3 nothing
# was measured; 128 + N stopped by signal N (the session is kept, resumable).
EXIT_CODES = {"complete": 0, "partial": 1, "failed": 3}


def fail(message: str, code: int = 2) -> NoReturn:
    # One line, always: a name from a user's file may hold newlines or control characters.
    line = "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)
    click.echo(f"fsarena: error: {line}", err=True)
    sys.exit(code)


# Where a command keeps what a stop signal would leave (on_stop), in the root context.
_STATE = "fsarena.on_stop"


def on_stop(describe: Callable[[], str]) -> None:
    """Say what a stop signal would leave from here on: `describe()` is asked when one comes
    ("3 of 5 sessions imported, each whole"). Commands that change nothing say nothing."""
    click.get_current_context().find_root().meta[_STATE] = describe


def left_in(workdir: str) -> str:
    """What a work directory's ledger still names, as a stop's line says it."""
    import os

    from fsarena.host.ledger import Ledger

    left = ", ".join(str(e) for e in Ledger(os.path.abspath(workdir)).entries())
    return f"left behind: {left}" if left else "nothing left mounted or attached"


def _stopped(ctx: click.Context, name: str) -> str:
    describe = ctx.find_root().meta.get(_STATE)
    return f"interrupted by {name}; {describe() if describe else 'nothing was changed'}"


class Group(click.Group):
    """Turns FsarenaError and click's usage errors into one line and exit code 2, and a stop
    signal (SIGINT, SIGTERM, SIGHUP) in any command into one line and 128 + N; anything
    else keeps its traceback.

    Every command runs with the stop signals handled from its first line (a command
    with steps to undo, such as `run`, installs its own inside): without it, SIGTERM or
    SIGHUP killed the process where it stood, and SIGINT ended in click's "Aborted!".
    """

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.exceptions.NoArgsIsHelpError:
            raise  # bare `fsarena`: click prints the help
        except click.UsageError as exc:  # the group's own options: `fsarena --bogus`
            fail(usage_line(exc))

    def invoke(self, ctx: click.Context) -> Any:
        from fsarena.interrupt import Stop

        stop = Stop()
        with stop.installed():
            try:
                return super().invoke(ctx)
            except click.UsageError as exc:  # a command's options: `fsarena run --scale abc`
                fail(usage_line(exc))
            except FsarenaError as exc:
                fail(str(exc))
            except KeyboardInterrupt:
                fail(_stopped(ctx, stop.name), stop.exit_code)


def alias(command: click.Command, old: str) -> click.Command:
    """`command` under its old name: scripts that type it keep working, while --help, the man
    page and completion teach only the new name (hidden); its own --help names the new one."""
    return click.Command(
        old,
        callback=command.callback,
        params=command.params,
        help=f"Old name of `fsarena {command.name}`. {command.help or ''}",
        hidden=True,
        context_settings=command.context_settings,
    )
