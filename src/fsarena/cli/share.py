"""`fsarena share`: a session as an anonymised, verifiable bundle; `share view`: many merged.

`fsarena share SESSION -o BUNDLE` is short for `fsarena share bundle SESSION -o BUNDLE`,
and `fsarena share --verify BUNDLE` for `fsarena share bundle --verify BUNDLE`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from fsarena.cli.args import format_option, output_options, refuse_existing
from fsarena.errors import FsarenaError
from fsarena.report.formats import BY_SUFFIX, names


class DefaultGroup(click.Group):
    """A group whose first argument, when it names none of its commands, is its default
    command's: `fsarena share SESSION` runs `fsarena share bundle SESSION`."""

    def __init__(self, *args: Any, default: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.default = default

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = [self.default, *args]
        return super().parse_args(ctx, args)


@click.group(
    cls=DefaultGroup,
    default="bundle",
    subcommand_metavar="SESSION [-o BUNDLE] | --verify BUNDLE | view BUNDLES... | COMMAND",
)
def share() -> None:
    """Share results: a session as an anonymised bundle anyone can verify, and the view
    merged from many (`fsarena share SESSION -o BUNDLE`, `fsarena share --verify BUNDLE`,
    `fsarena share view BUNDLES... -o view.html`). docs/sharing.md says what a bundle holds
    and never holds."""


@share.command("bundle")
@click.argument(
    "session_path",
    required=False,
    metavar="SESSION",
    type=click.Path(dir_okay=False, path_type=Path),
)
@output_options("The bundle file (default: SESSION's name with .bundle.json, beside it).")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the bundle, byte for byte what would leave this machine, and write nothing.",
)
@click.option(
    "--verify",
    "verify_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Check that a bundle's contents match its digest (exit 0), instead of making one.",
)
def share_bundle(
    session_path: Path | None,
    output: Path | None,
    dry_run: bool,
    verify_path: Path | None,
    force: bool,
) -> None:
    """Make a session's bundle: every result, no host name, machine id, user, path or serial."""
    if verify_path is not None:
        if session_path is not None or output is not None or dry_run:
            raise click.UsageError("--verify checks a bundle: give it alone")
        _verify(verify_path)
        return
    if session_path is None:
        raise click.UsageError("give the session file to share (or --verify BUNDLE)")
    from fsarena.session.file import load
    from fsarena.share.bundle import SUFFIX, make, write
    from fsarena.share.identity import salt

    path = output or session_path.with_name(session_path.stem + SUFFIX)
    if not dry_run:
        refuse_existing(path, "bundle", force)
    text = make(load(session_path), salt())
    if dry_run:
        click.echo(text, nl=False)
        click.echo(
            f"fsarena: dry run: the above is all {path} would hold; nothing written", err=True
        )
        return
    write(path, text, force)
    click.echo(f"written: {path}", err=True)


def _verify(path: Path) -> None:
    from fsarena.share.bundle import read

    body = read(path)
    s = body["session"]
    click.echo(
        f"{path}: verifies ({len(body['runs'])} runs of {', '.join(s['filesystems'])}, "
        f"suite {s['suite']}, made by fsarena {s['fsarena']}); a digest shows the contents are "
        "whole, not who made them"
    )


@share.command("view")
@click.argument("bundles", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--baseline",
    default=None,
    help="The filesystem every ratio is to, measured in the same session "
    "(default: the profile table's reference filesystem).",
)
@click.option(
    "--mine",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A session file (or bundle) of yours: where each of its results falls among the others.",
)
@format_option(
    "view",
    default=None,
    show_default=False,
    help="The format (default: from --output's suffix, else text).",
)
@output_options()
def share_view(
    bundles: tuple[Path, ...],
    baseline: str | None,
    mine: Path | None,
    fmt: str | None,
    output: Path | None,
    force: bool,
) -> None:
    """The view merged from bundles (files, directories, git repositories of them): per
    comparison key, the spread of within-host ratios to the baseline, and where yours falls.

    Exit 1 when a bundle was left out (it did not verify, or was not a bundle)."""
    from fsarena.cli.reports import write_text
    from fsarena.filesystems.profiles import REFERENCE_FILESYSTEM
    from fsarena.share.render import render
    from fsarena.share.view import build

    refuse_existing(output, "view file", force)
    by_suffix = BY_SUFFIX.get(output.suffix.lstrip(".")) if output else None
    fmt = fmt or (by_suffix if by_suffix in names("view") else None) or "text"
    view = build(list(bundles), baseline or REFERENCE_FILESYSTEM, _mine(mine) if mine else None)
    content = render(view, fmt)
    if output is None or str(output) == "-":
        click.echo(content, nl=False)
    else:
        write_text(output, content, "view file", force)
        click.echo(f"written: {output}", err=True)
    if view.left_out:
        click.echo(f"fsarena: {len(view.left_out)} left out: {view.left_out[0]}", err=True)
        sys.exit(1)


def _mine(path: Path) -> Any:
    """Your session as the view reads bundles: a bundle file, or a session made one here."""
    import json

    from fsarena.session.file import load
    from fsarena.share.bundle import build, verify
    from fsarena.share.identity import salt
    from fsarena.share.view import Shared

    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise FsarenaError(f"--mine {path}: not a readable session or bundle: {exc}") from None
    if isinstance(data, dict) and "bundle" in data:
        return Shared(str(path), verify(data, str(path)))
    return Shared(str(path), build(load(path), salt()))
