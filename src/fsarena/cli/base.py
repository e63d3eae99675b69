"""What every command shares: the one-line error and exit, exit codes, default paths."""

from __future__ import annotations

import sys
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


class Group(click.Group):
    """Turns FsarenaError and click's usage errors into one line and exit code 2;
    anything else keeps its traceback."""

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
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:  # a command's options: `fsarena run --scale abc`
            fail(usage_line(exc))
        except FsarenaError as exc:
            fail(str(exc))


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
