"""`fsarena report` and `fsarena compare`: saved sessions rendered again, nothing run."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from fsarena.cli.args import PERCENT, format_option, output_options, refuse_existing, reweighed
from fsarena.cli.base import DEFAULT_RESULTS, on_stop
from fsarena.errors import FsarenaError

if TYPE_CHECKING:
    from fsarena.session.file import Session

# The answer is recomputed from a session, so its weights can be changed on reading it.
weigh_option = click.option(
    "--weigh",
    default=None,
    metavar="KIND=W,...",
    help="Recompute the answer with these kinds' weights (databases=1); default: the run's.",
)
workload_option = click.option(
    "--workload", default=None, help="A named workload's weights: database, mail, fileserver, vm."
)


@click.command()
@click.argument("session_path", required=False, type=click.Path(dir_okay=False, path_type=Path))
@format_option("report")
@output_options("Write here (default: stdout); HTML charts go to NAME-charts/ beside it.")
@click.option(
    "--results-dir",
    default=DEFAULT_RESULTS,
    show_default=True,
    help="Where to find the newest session when none is given.",
)
@weigh_option
@workload_option
def report(
    session_path: Path | None,
    fmt: str,
    output: Path | None,
    results_dir: str,
    force: bool,
    weigh: str | None,
    workload: str | None,
) -> None:
    """Render a saved session again, without running anything."""
    from fsarena.session.file import load

    refuse_existing(output, "report file", force)
    on_stop(lambda: "no file half-written: each is written whole, or not at all")
    path = session_path or _newest(Path(results_dir))
    session = reweighed(load(path), weigh, workload)
    from fsarena.report import render, write

    if output is None or str(output) == "-":
        click.echo(render(session, fmt), nl=False)
        return
    try:
        written = write(session, fmt, output, force=force)
    except OSError as exc:
        raise _unwritable(output, exc) from None
    for each in written:
        click.echo(f"written: {each}", err=True)


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
@format_option("compare")
@output_options()
@click.option(
    "--fail-on-regression",
    "fail_pct",
    type=PERCENT,
    default=None,
    help="Gate: exit 1 when some task of NEW is worse than BASE by more than PCT %, "
    "significantly (95 % confidence over every task and filesystem); 4 (inconclusive) "
    "when it tested nothing or could not have seen a PCT % slowdown on some pair; 0 "
    "otherwise. Prints what it could detect, then the list a CI log shows; the full "
    "comparison only with -o.",
    metavar="PCT",
)
@click.option(
    "--junit",
    "junit",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="With the gate: also write its verdict as JUnit XML (one testcase per task and "
    "filesystem) to FILE, for CI.",
    metavar="FILE",
)
@click.option(
    "--baseline",
    type=click.Choice(["store"]),
    default=None,
    help="With the gate: BASE is the newest complete session of NEW's plan on NEW's host "
    "in the results store (then give NEW alone).",
)
@click.option(
    "--store",
    "store_url",
    default=None,
    help="The results store for --baseline store (default: RESULTS_DIR/fsarena.sqlite).",
)
@click.option(
    "--results-dir",
    default=DEFAULT_RESULTS,
    show_default=True,
    help="Whose store --baseline store reads when --store is not given.",
)
@weigh_option
@workload_option
def compare(
    session_paths: tuple[Path, ...],
    labels: tuple[str, ...],
    fmt: str,
    output: Path | None,
    force: bool,
    fail_pct: float | None,
    junit: Path | None,
    baseline: str | None,
    store_url: str | None,
    results_dir: str,
    weigh: str | None,
    workload: str | None,
) -> None:
    """The same tasks across sessions (machines, kernels, mount options), with significance.

    With --fail-on-regression PCT: a regression gate for CI and kernel upgrades,
    `fsarena compare BASE NEW --fail-on-regression 5`, or
    `fsarena compare NEW --baseline store --fail-on-regression 5`.
    """
    from fsarena.report.compare import compare, render
    from fsarena.session.file import load

    paths = list(session_paths)
    if baseline is not None and fail_pct is None:
        raise click.UsageError("--baseline is for the gate: add --fail-on-regression PCT")
    if junit is not None and fail_pct is None:
        raise click.UsageError("--junit writes the gate's verdict: add --fail-on-regression PCT")
    if baseline == "store":
        if len(paths) != 1:
            raise click.UsageError("with --baseline store, give the new session alone")
        paths.insert(0, _store_baseline(paths[0], store_url, results_dir))
    if fail_pct is not None and len(paths) != 2:
        raise click.UsageError(f"the gate compares two sessions, BASE and NEW ({len(paths)} given)")
    refuse_existing(output, "comparison file", force)
    refuse_existing(junit, "JUnit file", force)
    on_stop(lambda: "no file half-written: each is written whole, or not at all")
    sessions = [reweighed(load(p), weigh, workload) for p in paths]
    if fail_pct is not None:
        _gate(sessions, tuple(labels) or ("BASE", "NEW"), fail_pct, fmt, (output, junit), force)
        return
    result = compare(sessions, list(labels) or None)
    _emit(render(result, fmt), output, force)


def _emit(content: str, output: Path | None, force: bool = False) -> None:
    if output is None or str(output) == "-":
        click.echo(content, nl=False)
        return
    write_text(output, content, "comparison file", force)
    click.echo(f"written: {output}", err=True)


def write_text(output: Path, content: str, what: str, force: bool = False) -> None:
    """Write a file the user named, whole, over nothing fsarena may not replace
    (session.outputs), or say in one line why it cannot be written."""
    from fsarena.session.outputs import write_file

    try:
        write_file(output, content, what, force)
    except OSError as exc:
        raise _unwritable(output, exc) from None


def _unwritable(output: Path, exc: OSError) -> FsarenaError:
    return FsarenaError(f"cannot write {output}: {exc.strerror}; give another --output")


def _store_baseline(new: Path, store_url: str | None, results_dir: str) -> Path:
    from fsarena.session.file import load
    from fsarena.store import default_store
    from fsarena.store.db import open_store
    from fsarena.store.query import baseline_path

    url = store_url or default_store(results_dir)
    with open_store(url, create=False) as db:  # a lookup never creates a store
        found = Path(baseline_path(db, load(new)))
    click.echo(f"fsarena: baseline from {url}: {found}", err=True)
    return found


def _gate(
    sessions: list[Session],
    labels: tuple[str, ...],
    pct: float,
    fmt: str,
    outputs: tuple[Path | None, Path | None],
    force: bool,
) -> None:
    """The regression gate: what it tested and could detect, its verdict, its exit code
    (0 pass, 1 regression, INCONCLUSIVE when it cannot vouch for a pass)."""
    from fsarena.analysis.regression import gate, gate_lines
    from fsarena.report import junit
    from fsarena.report.compare import compare, render, settings

    if len(labels) != 2:
        raise click.UsageError(f"give two --label values, BASE and NEW ({len(labels)} given)")
    base, new = sessions
    labelled = list(zip(labels, sessions, strict=True))
    settings.refuse_empty(labelled)
    if same := settings.same_session(labelled):
        raise FsarenaError(
            f"{same}: the gate has nothing to compare; give the session to be checked as NEW"
        )
    plans = [(s.plan.suite, s.plan.scale) for s in sessions]
    if plans[0] != plans[1]:
        raise FsarenaError(
            f"the gate compares one plan run twice, and these differ (suite, scale: "
            f"{labels[0]} {plans[0][0]} {plans[0][1]}, {labels[1]} {plans[1][0]} {plans[1][1]}): "
            "every task would change with the workload; run the same plan, or compare "
            "without --fail-on-regression"
        )
    for warning in settings.warnings(labelled):
        click.echo(f"fsarena: warning: {warning}", err=True)
    result = gate(base, new, pct / 100)
    output, junit_path = outputs
    if output is not None:
        _emit(render(compare(sessions, list(labels)), fmt), output, force)
    if junit_path is not None:
        write_text(junit_path, junit.render(result, (labels[0], labels[1])), "JUnit file", force)
        click.echo(f"written: {junit_path}", err=True)
    click.echo("\n".join(gate_lines(result, (labels[0], labels[1]))))
    sys.exit(result.exit_code)
