"""The man page, written from the CLI's own command tree (click), so it cannot drift from --help.

Every build writes it into the wheel's share/man/man1 (scripts/hatch_build.py), so an
installed fsarena has `man fsarena`; `scripts/gen_docs.py` writes the same page to
docs/fsarena.1 and tests/unit/test_docs.py checks the file is current. Deterministic:
no date, no build identity, only the package's version (`fsarena.__version__`, known
before fsarena is installed), so the same code always gives the same page.
"""

from __future__ import annotations

from collections.abc import Iterator

import click

from fsarena import __version__

SEE_ALSO = (
    "README.md and docs/*.md in the source tree: the suites, filesystems, methodology, "
    "statistics, machines, aging, power-loss safety, the results store and fleets, safety."
)


def _escape(text: str) -> str:
    """Text as roff reads it literally: backslashes, hyphens, and a leading dot or quote."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(
        f"\\&{line}" if line.startswith((".", "'")) else line for line in text.splitlines()
    )


def _paragraphs(help_text: str) -> list[str]:
    """click's help as roff: paragraphs filled, a \\b block kept line by line."""
    out: list[str] = []
    for block in help_text.strip().split("\n\n"):
        lines = block.splitlines()
        if lines and lines[0].strip() == "\b":
            out += [".PP", ".nf", _escape("\n".join(x.strip() for x in lines[1:])), ".fi"]
        else:
            out += [".PP", _escape(" ".join(x.strip() for x in lines))]
    return out


def commands(group: click.Group, ctx: click.Context) -> Iterator[tuple[click.Context, str]]:
    """Every command under the group, depth first, with its context and full name."""
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        sub = click.Context(command, info_name=name, parent=ctx)
        yield sub, sub.command_path
        if isinstance(command, click.Group):
            yield from commands(command, sub)


def _options(ctx: click.Context) -> list[str]:
    out: list[str] = []
    for param in ctx.command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None:
            continue
        names, text = record
        out += [".TP", f"\\fB{_escape(names)}\\fR", _escape(text) if text else ""]
    return out


def render(main: click.Group) -> str:
    """The whole page, in roff (man(7))."""
    ctx = click.Context(main, info_name="fsarena", **main.context_settings)
    lines = [
        f'.TH FSARENA 1 "" "fsarena {__version__}" "User Commands"',
        ".SH NAME",
        f"fsarena \\- {_escape(main.get_short_help_str(200).rstrip('.'))}",
        ".SH SYNOPSIS",
        ".B fsarena",
        "[\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]...",
        ".SH DESCRIPTION",
        *_paragraphs(main.help or ""),
        ".SH OPTIONS",
        *_options(ctx),
        ".SH COMMANDS",
    ]
    for sub, path in commands(main, ctx):
        usage = " ".join(sub.command.collect_usage_pieces(sub))
        lines += [f'.SS "{_escape(path)}"', f".B {_escape(path)}", _escape(usage)]
        lines += _paragraphs(sub.command.help or "")
        lines += _options(sub)
    lines += [
        ".SH SHELL COMPLETION",
        ".PP",
        'bash: \\fBeval "$(_FSARENA_COMPLETE=bash_source fsarena)"\\fR in ~/.bashrc;',
        'zsh: \\fBeval "$(_FSARENA_COMPLETE=zsh_source fsarena)"\\fR in ~/.zshrc.',
        ".SH SEE ALSO",
        ".PP",
        _escape(SEE_ALSO),
    ]
    return "\n".join(line for line in lines if line != "") + "\n"
