"""The command line: the only module that prints or exits."""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

import click

from fsarena import __version__
from fsarena.errors import FsarenaError
from fsarena.filesystems import PROFILES, probe
from fsarena.plan import DEFAULT_SUITE, DEFAULT_WORKDIR, Plan, builtin_suites, make_plan
from fsarena.report import EXPORTERS, render, write
from fsarena.results import latest, load
from fsarena.tasks import TASKS

DEFAULT_RESULTS = "results"


def _fail(message: str, code: int = 2) -> NoReturn:
    click.echo(f"fsarena: error: {message}", err=True)
    sys.exit(code)


class _Group(click.Group):
    """Turns FsarenaError into one line and exit code 2; anything else keeps its traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except FsarenaError as exc:
            _fail(str(exc))


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="fsarena")
def main() -> None:
    """Compare Linux filesystems with real-world tasks, measured honestly."""


# ---------------------------------------------------------------- check


@main.command()
@click.option("--workdir", default=DEFAULT_WORKDIR, show_default=True, help="Where loop images go.")
@click.option("--fs", "fs_list", default=None, help="Filesystems to check (default: all known).")
def check(workdir: str, fs_list: str | None) -> None:
    """Preflight: every requirement of a run, and the command that fixes what is missing."""
    from fsarena.filesystems import resolve
    from fsarena.system import preflight

    profiles = resolve(fs_list.split(",")) if fs_list else list(PROFILES.values())
    results = preflight(workdir, 0, profiles)
    for r in results:
        mark = "ok  " if r.ok else "FAIL"
        click.echo(f"[{mark}] {r.name}: {r.detail}")
        if not r.ok and r.fix:
            click.echo(f"       fix: {r.fix}")
    failed = [r for r in results if not r.ok]
    click.echo(f"\n{len(results) - len(failed)} of {len(results)} checks passed; workdir {workdir}")
    if failed:
        sys.exit(1)


# ---------------------------------------------------------------- list


@main.command("list")
@click.argument(
    "what", type=click.Choice(["filesystems", "tasks", "suites"]), default="filesystems"
)
def list_(what: str) -> None:
    """List known filesystems (and whether they run here), tasks or suites."""
    if what == "filesystems":
        for profile in PROFILES.values():
            support = probe(profile)
            state = (
                f"available ({profile.driver})"
                if support.available
                else f"unavailable: {support.reason}"
            )
            click.echo(f"{profile.name:8} {' '.join(profile.mkfs):60} {state}")
    elif what == "tasks":
        for name, task in TASKS.items():
            click.echo(f"{name:20} [{task.kind}] {task.describe()}")
    else:
        for name, suite in builtin_suites().items():
            click.echo(f"{name:16} {suite.article}: {suite.description}")


# ---------------------------------------------------------------- run


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@contextlib.contextmanager
def _workdir_lock(workdir: str) -> Iterator[None]:
    """One run per work directory: two would share mount points and images."""
    Path(workdir).mkdir(parents=True, exist_ok=True)
    with open(Path(workdir, "lock"), "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FsarenaError(
                f"another fsarena run is using {workdir}; wait for it or pass another --workdir"
            ) from None
        yield


def _supported(plan: Plan) -> tuple[Plan, list[str]]:
    """Drop filesystems this host cannot run, with the reason, rather than failing later."""
    notes, keep = [], []
    for profile in plan.profiles():
        support = probe(profile)
        if support.available:
            keep.append(profile.name)
        else:
            notes.append(f"{profile.name} skipped: {support.reason}")
    if not keep:
        raise FsarenaError("; ".join(notes) + "; run `fsarena check`")
    return plan.model_copy(update={"filesystems": keep}), notes


@main.command()
@click.option(
    "--suite", default=DEFAULT_SUITE, show_default=True, help="Built-in suite or .toml file."
)
@click.option("--fs", "fs_list", default=None, help="Comma-separated filesystems, e.g. ext4,xfs.")
@click.option(
    "--repetitions", "-n", type=int, default=None, help="Repetitions (default: the suite's)."
)
@click.option(
    "--scale", type=float, default=None, help="Dataset size factor, e.g. 0.02 for a quick run."
)
@click.option(
    "--seed", type=int, default=None, help="Seed of the filesystem order (default: random)."
)
@click.option("--workdir", default=DEFAULT_WORKDIR, show_default=True, help="Where loop images go.")
@click.option(
    "--results-dir", default=DEFAULT_RESULTS, show_default=True, help="Where sessions are saved."
)
@click.option("--output", "-o", default=None, help="Session file path (default: in --results-dir).")
@click.option(
    "--source",
    type=click.Choice(["auto", "tmpfs", "image"]),
    default="auto",
    show_default=True,
    help="Where datasets live while copied in.",
)
@click.option(
    "--task-timeout", type=float, default=3600.0, show_default=True, help="Seconds per task."
)
@click.option(
    "--target-ci",
    type=float,
    default=None,
    help="Adaptive: add repetitions until every task's 95 % CI is within ±PCT % of its mean.",
)
@click.option(
    "--max-repetitions",
    type=int,
    default=None,
    help="Adaptive: at most this many repetitions (default 10).",
)
@click.option(
    "--time-budget",
    type=float,
    default=None,
    help="Adaptive: no new repetition once this many seconds would be exceeded.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress output, only the tables.")
@click.option(
    "--format", "fmt", type=click.Choice(sorted(EXPORTERS)), default="text", show_default=True
)
def run(
    suite: str,
    fs_list: str | None,
    repetitions: int | None,
    scale: float | None,
    seed: int | None,
    workdir: str,
    results_dir: str,
    output: str | None,
    source: str,
    task_timeout: float,
    target_ci: float | None,
    max_repetitions: int | None,
    time_budget: float | None,
    quiet: bool,
    fmt: str,
) -> None:
    """Run a comparison: every task on every filesystem, repeated, saved after each measurement."""
    from fsarena.executor import RealExecutor
    from fsarena.progress import RunProgress
    from fsarena.runner import Runner, new_session
    from fsarena.system import host_facts, tool_versions
    from fsarena.targets.source import choose_source, mem_available_bytes

    workdir = os.path.abspath(workdir)
    plan = make_plan(
        suite,
        fs_list.split(",") if fs_list else None,
        repetitions,
        scale,
        seed,
        workdir,
        source=source,
        task_timeout_s=task_timeout,
        target_ci_pct=target_ci,
        max_repetitions=max_repetitions,
        time_budget_s=time_budget,
    )
    if os.geteuid() != 0:
        raise FsarenaError("fsarena run needs root (mkfs, mount, losetup): run it with sudo")
    plan, skipped = _supported(plan)
    for note in skipped:
        click.echo(f"fsarena: {note}", err=True)
    data_bytes = sum(s.total_bytes for s in plan.dataset_specs().values())
    source_kind = choose_source(plan.source, data_bytes, mem_available_bytes())
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = Path(output) if output else Path(results_dir, f"fsarena-{stamp}-{plan.suite}.json")
    session = new_session(plan, host_facts(workdir), tool_versions(plan.profiles()))
    for note in skipped:
        session.warn("filesystem-skipped", note)
    progress = RunProgress(plan, sys.stderr, "quiet" if quiet else "auto")
    runner = Runner(plan, RealExecutor(), session, path, source_kind, progress)
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        with _workdir_lock(workdir), progress:
            runner.run()
    except KeyboardInterrupt:
        kept = sum(r.status == "ok" for r in session.runs)
        _fail(
            f"interrupted; {kept} measurements kept in {path}; nothing left mounted or attached",
            130,
        )
    finally:
        signal.signal(signal.SIGTERM, previous)
    click.echo(render(session, fmt), nl=False)
    click.echo(f"\nsession saved: {path}", err=True)
    html_path = path.with_suffix(".html")
    write(session, "html", html_path)
    click.echo(f"HTML report: {html_path}", err=True)
    if any(r.status == "failed" for r in session.runs):
        sys.exit(1)


# ---------------------------------------------------------------- report


@main.command()
@click.argument("session_path", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(sorted(EXPORTERS)), default="text", show_default=True
)
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
    path = session_path or latest(Path(results_dir))
    session = load(path)
    if output is None or str(output) == "-":
        click.echo(render(session, fmt), nl=False)
        return
    for written in write(session, fmt, output):
        click.echo(f"written: {written}", err=True)


# ---------------------------------------------------------------- compare


@main.command()
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

    result = cross([load(p) for p in session_paths], list(labels) or None)
    content = RENDERERS[fmt](result)
    if output is None or str(output) == "-":
        click.echo(content, nl=False)
        return
    output.write_text(content)
    click.echo(f"written: {output}", err=True)


# ---------------------------------------------------------------- crashtest


@main.command()
@click.option(
    "--fs", "fs_list", default=None, help="Comma-separated filesystems (default: all known)."
)
@click.option(
    "--states",
    type=click.IntRange(min=1),
    default=None,
    help="Most crash states per filesystem and workload, sampled with the seed beyond "
    "that (default: 300); more states, more coverage, more time.",
)
@click.option(
    "--workload", "workloads", default=None, help="Comma-separated workloads (default: all)."
)
@click.option(
    "--seed", type=int, default=None, help="Seed of the random subsets and sampling (recorded)."
)
@click.option("--workdir", default=DEFAULT_WORKDIR, show_default=True, help="Where work goes.")
@click.option(
    "--results-dir", default=DEFAULT_RESULTS, show_default=True, help="Where sessions are saved."
)
@click.option("--output", "-o", default=None, help="Session file path (default: in --results-dir).")
@click.option(
    "--format", "fmt", type=click.Choice(sorted(EXPORTERS)), default="text", show_default=True
)
def crashtest(
    fs_list: str | None,
    states: int | None,
    workloads: str | None,
    seed: int | None,
    workdir: str,
    results_dir: str,
    output: str | None,
    fmt: str,
) -> None:
    """Power-loss safety: cut the power at hundreds of points, count what survives."""
    from fsarena.crashtest.engine import DEFAULT_STATES, Options
    from fsarena.crashtest.session import run_crashtest
    from fsarena.crashtest.workload import select
    from fsarena.filesystems import resolve
    from fsarena.plan import _fresh_seed

    profiles = resolve(fs_list.split(",")) if fs_list else list(PROFILES.values())
    chosen = select(workloads.split(",") if workloads else None)
    if os.geteuid() != 0:
        raise FsarenaError("fsarena crashtest needs root (mkfs, mount, losetup, FUSE): use sudo")
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = Path(output) if output else Path(results_dir, f"fsarena-{stamp}-crashtest.json")
    options = Options(
        states_cap=states or DEFAULT_STATES,
        seed=seed if seed is not None else _fresh_seed(),
        workloads=tuple(chosen),
        save_to=path.with_suffix("").with_name(path.stem + "-states"),
    )
    workdir = os.path.abspath(workdir)
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        with _workdir_lock(workdir):
            session = run_crashtest(
                profiles,
                options,
                Path(workdir),
                path,
                lambda line: click.echo(f"== {line}", err=True),
            )
    except KeyboardInterrupt:
        _fail(f"interrupted; results so far kept in {path}; nothing left mounted or attached", 130)
    finally:
        signal.signal(signal.SIGTERM, previous)
    click.echo(render(session, fmt), nl=False)
    click.echo(f"\nsession saved: {path}", err=True)
    if any(r.status == "failed" for r in session.runs):
        sys.exit(1)
