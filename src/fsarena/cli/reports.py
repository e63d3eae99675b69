"""`fsarena report` and `fsarena compare`: saved sessions rendered again, nothing run."""

from __future__ import annotations

from pathlib import Path

import click

from fsarena.cli.args import FORMATS
from fsarena.cli.base import DEFAULT_RESULTS


@click.command()
@click.argument("session_path", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write here (default: stdout); HTML charts go to NAME-charts/ beside it.",
)
@click.option(
    "--results-dir",
    default=DEFAULT_RESULTS,
    show_default=True,
    help="Where to find the newest session when none is given.",
)
def report(session_path: Path | None, fmt: str, output: Path | None, results_dir: str) -> None:
    """Render a saved session again, without running anything."""
    from fsarena.session.file import load

    path = session_path or _newest(Path(results_dir))
    session = load(path)
    from fsarena.report import render, write

    if output is None or str(output) == "-":
        click.echo(render(session, fmt), nl=False)
        return
    for written in write(session, fmt, output):
        click.echo(f"written: {written}", err=True)


def _newest(directory: Path) -> Path:
    """The newest session worth reporting, said on stderr with what was passed over."""
    from fsarena.session.file import newest

    path, passed = newest(directory)
    over = [p for p, _ in passed if p != path]
    if path in (p for p, _ in passed):  # no session there measured anything
        why = dict(passed)[path]
        click.echo(
            f"fsarena: reporting {path}, the newest session in {directory}: it {why}; "
            "no session there measured anything",
            err=True,
        )
    elif over:
        skipped = "; ".join(f"{p.name}: {why}" for p, why in passed[:3])
        more = f" and {len(over) - 3} more" if len(over) > 3 else ""
        click.echo(
            f"fsarena: reporting {path}, the newest session in {directory} that measured "
            f"something; passed over {len(over)} newer file(s): {skipped}{more}",
            err=True,
        )
    else:
        click.echo(f"fsarena: reporting {path}, the newest session in {directory}", err=True)
    return path


# ---------------------------------------------------------------- compare


@click.command()
@click.argument(
    "session_paths", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path)
)
@click.option(
    "--label",
    "labels",
    multiple=True,
    help="A short name per session, in order (default: s1, s2, ...).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "html"]),
    default="text",
    show_default=True,
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write here (default: stdout).",
)
def compare(
    session_paths: tuple[Path, ...], labels: tuple[str, ...], fmt: str, output: Path | None
) -> None:
    """The same tasks across sessions (machines, kernels, mount options), with significance."""
    from fsarena.report.crosscompare import RENDERERS
    from fsarena.report.crosscompare import compare as cross
    from fsarena.session.file import load

    result = cross([load(p) for p in session_paths], list(labels) or None)
    content = RENDERERS[fmt](result)
    if output is None or str(output) == "-":
        click.echo(content, nl=False)
        return
    output.write_text(content)
    click.echo(f"written: {output}", err=True)
