"""The command line: the only module that prints or exits."""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from fsarena import __version__
from fsarena.errors import FsarenaError
from fsarena.filesystems import PROFILES
from fsarena.launch import Stop, workdir_lock
from fsarena.plan import DEFAULT_SUITE, DEFAULT_WORKDIR, Plan, builtin_suites, make_plan
from fsarena.report import EXPORTERS, render, write
from fsarena.results import latest, load
from fsarena.tasks import TASKS

DEFAULT_RESULTS = "results"


def _fail(message: str, code: int = 2) -> NoReturn:
    # One line, always: a name from a user's file may hold newlines or control characters.
    line = "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)
    click.echo(f"fsarena: error: {line}", err=True)
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
@click.option(
    "--suite", default=DEFAULT_SUITE, show_default=True, help="Suite whose space to check."
)
@click.option("--scale", type=float, default=None, help="Dataset size factor of the run.")
@click.option("--device", default=None, help="A block device to check (nothing is written).")
def check(
    workdir: str, fs_list: str | None, suite: str, scale: float | None, device: str | None
) -> None:
    """Preflight: every requirement of a run, and the command that fixes what is missing."""
    from fsarena.filesystems import resolve
    from fsarena.launch import check_device, check_leftovers, space_needed
    from fsarena.system import preflight
    from fsarena.targets.source import choose_source, mem_available_bytes

    workdir = os.path.abspath(workdir)
    profiles = resolve(fs_list.split(",")) if fs_list else list(PROFILES.values())
    plan = make_plan(suite, [p.name for p in profiles], 1, scale, 0, workdir, device=device)
    data = sum(s.total_bytes for s in plan.dataset_specs().values())
    need = space_needed(plan, choose_source("auto", data, mem_available_bytes()))
    results = preflight(workdir, need, profiles)
    results.append(check_leftovers(workdir))
    if device is not None:
        results.append(check_device(device, workdir))
    for r in results:
        mark = ("--  " if r.info else "ok  ") if r.ok else "FAIL"
        click.echo(f"[{mark}] {r.name}: {r.detail}")
        for line in r.more:
            click.echo(f"         {line}")
        if not r.ok and r.fix:
            click.echo(f"       fix: {r.fix}")
    failed = [r for r in results if not r.ok]
    click.echo(f"\n{len(results) - len(failed)} of {len(results)} checks passed; workdir {workdir}")
    if failed:
        sys.exit(1)


# ---------------------------------------------------------------- list


@main.command("list")
@click.argument(
    "what", type=click.Choice(["filesystems", "tasks", "suites", "machines"]), default="filesystems"
)
def list_(what: str) -> None:
    """List known filesystems (and whether they run here), tasks, suites or machines."""
    if what == "filesystems":
        _list_filesystems()
    elif what == "tasks":
        for name, task in TASKS.items():
            click.echo(f"{name:20} [{task.kind}] {task.describe()}")
    elif what == "machines":
        from fsarena.machines.profiles import builtin_machines

        for name, machine in builtin_machines().items():
            click.echo(f"{name:16} {machine.summary()}  [{machine.article}]")
    else:
        for name, suite in builtin_suites().items():
            click.echo(f"{name:16} {suite.article}: {suite.description}")


def _list_filesystems() -> None:
    """Each filesystem, its mkfs, and every driver: available here (* = default) or why not."""
    from fsarena.drivers import choose, drivers_of

    for profile in PROFILES.values():
        click.echo(f"{profile.name:9} {' '.join(profile.mkfs)}")
        if profile.never:
            click.echo(f"    not runnable: {profile.never}")
            continue
        best = choose(profile.name)
        for found in drivers_of(profile):
            mark = "*" if best.available and found.profile == best.profile else " "
            state = "available" if found.available else f"unavailable: {found.reason}"
            click.echo(f"  {mark} {found.profile.name:16} {found.profile.group:10} {state}")
    click.echo("\n* = the default; pick another with NAME@DRIVER in --fs (e.g. vfat@fuse)")


# ---------------------------------------------------------------- run


# Options that make the plan: a resumed session brings its own.
PLAN_OPTIONS = (
    "suite", "fs_list", "repetitions", "scale", "seed", "workdir", "source",
    "task_timeout", "image_size", "device", "output", "target_ci", "max_repetitions",
    "time_budget", "machine",
)  # fmt: skip


def _reject_plan_options(ctx: click.Context) -> None:
    from click.core import ParameterSource

    given = [
        p.opts[0]
        for p in ctx.command.params
        if p.name in PLAN_OPTIONS
        and ctx.get_parameter_source(p.name) is ParameterSource.COMMANDLINE
    ]
    if given:
        raise FsarenaError(
            f"--resume takes the plan from the session; drop {', '.join(given)} "
            "(or start a new run without --resume)"
        )


def _new_or_resumed(ctx: click.Context, opts: dict[str, Any]) -> tuple[Plan, Path, Any]:
    """The plan and session path of a new run, or those of the session to resume."""
    from fsarena.plan import parse_size
    from fsarena.resume import plan_of, resumable

    if opts["resume_path"] is not None:
        _reject_plan_options(ctx)
        recorded = resumable(opts["resume_path"])
        return plan_of(recorded, opts["resume_path"]), opts["resume_path"], recorded
    plan = _with_drivers(
        make_plan(
            opts["suite"],
            opts["fs_list"].split(",") if opts["fs_list"] else None,
            opts["repetitions"],
            opts["scale"],
            opts["seed"],
            os.path.abspath(opts["workdir"]),
            source=opts["source"],
            task_timeout_s=opts["task_timeout"],
            image_size_bytes=parse_size(opts["image_size"]) if opts["image_size"] else None,
            device=opts["device"],
            target_ci_pct=opts["target_ci"],
            max_repetitions=opts["max_repetitions"],
            time_budget_s=opts["time_budget"],
            machine=opts["machine"],
        )
    )
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    default = Path(opts["results_dir"], f"fsarena-{stamp}-{plan.suite}.json")
    return plan, Path(opts["output"]) if opts["output"] else default, None


def _with_drivers(plan: Plan) -> Plan:
    """Each filesystem through its best driver here (or the one named), guests' references added."""
    from fsarena.drivers import plan_names

    return plan.model_copy(update={"filesystems": plan_names(plan.filesystems, plan.table())})


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
    "--machine",
    default=None,
    help="Emulate a machine's memory, CPU and disk limits: a built-in "
    "(`fsarena list machines`), a [machines.NAME] of the suite, or a .toml file.",
)
@click.option(
    "--image-size",
    default=None,
    help="Size of each loop image, e.g. 300M (default: room for the datasets); "
    "never below what mkfs accepts.",
)
@click.option(
    "--device",
    default=None,
    help="A real block device to use instead of loop images: everything on it is destroyed.",
)
@click.option(
    "--destroy-data",
    "destroy",
    default=None,
    metavar="DEVICE",
    help="The confirmation --device needs: the same device named again.",
)
@click.option("--dry-run", is_flag=True, help="Print the complete plan; touch nothing.")
@click.option(
    "--resume",
    "resume_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Continue an interrupted session file without redoing what it measured.",
)
@click.option(
    "--format", "fmt", type=click.Choice(sorted(EXPORTERS)), default="text", show_default=True
)
@click.pass_context
def run(ctx: click.Context, /, **opts: Any) -> None:
    """Run a comparison: every task on every filesystem, repeated, saved after each measurement."""
    from fsarena.launch import describe, prepare, require_ready

    plan, path, recorded = _new_or_resumed(ctx, opts)
    launch = prepare(plan, [str(path.parent)], opts["destroy"])
    if opts["dry_run"]:
        for line in describe(launch, Path(opts["results_dir"])):
            click.echo(line)
        return
    if os.geteuid() != 0:
        raise FsarenaError("fsarena run needs root (mkfs, mount, losetup): run it with sudo")
    require_ready(launch)
    session = _session_for(launch, path, recorded)
    _execute(launch, session, path, opts["quiet"])
    click.echo(render(session, opts["fmt"]), nl=False)
    click.echo(f"\nsession saved: {path}", err=True)
    html_path = path.with_suffix(".html")
    write(session, "html", html_path)
    click.echo(f"HTML report: {html_path}", err=True)
    _import_into_default_store(path, opts["results_dir"])
    if any(r.status == "failed" for r in session.runs):
        sys.exit(1)


def _session_for(launch: Any, path: Path, recorded: Any) -> Any:
    """A new session, or the resumed one after checking nothing it depends on changed."""
    from fsarena.resume import check_unchanged
    from fsarena.runner import new_session
    from fsarena.system import host_facts, tool_versions

    plan = launch.plan
    fresh = new_session(plan, host_facts(plan.workdir), tool_versions(plan.profiles()))
    for name, why in launch.unavailable.items():
        click.echo(f"fsarena: {name} skipped: {why}", err=True)
    for note in launch.notes:
        click.echo(f"fsarena: warning: {note}", err=True)
        fresh.warn("plan", note)
    if launch.device is not None:
        click.echo(f"fsarena: destroying all data on {launch.device.describe()}", err=True)
        fresh.target = launch.device.to_dict()
    if recorded is None:
        return fresh
    check_unchanged(recorded, fresh, path)
    kept = len(recorded.runs)
    click.echo(f"fsarena: resuming {path} ({kept} runs recorded)", err=True)
    recorded.warn("resumed", f"resumed at {dt.datetime.now(dt.UTC).isoformat(timespec='seconds')}")
    return recorded


def _execute(launch: Any, session: Any, path: Path, quiet: bool) -> None:
    """The run itself, under the work directory's lock, stopped cleanly by a signal."""
    from fsarena.ledger import Ledger, leftovers
    from fsarena.machines.run import executor_for
    from fsarena.progress import RunProgress
    from fsarena.runner import Runner

    plan = launch.plan
    stop = Stop()
    ledger = Ledger(plan.workdir)
    with workdir_lock(plan.workdir), stop.installed():
        left = leftovers(plan.workdir)
        if left:
            click.echo(
                f"fsarena: warning: an earlier run left {left.describe()}; "
                f"remove it with `fsarena cleanup --workdir {plan.workdir}`",
                err=True,
            )
        ledger.mark_children()
        os.environ["LC_MESSAGES"] = "C"  # tools' errors in English, as faults.py reads them
        progress = RunProgress(plan, sys.stderr, "quiet" if quiet else "auto")

        def say(line: str) -> None:
            if not quiet:
                click.echo(f"fsarena: {line}", err=True)

        try:
            with executor_for(plan, ledger, session, say) as executor:
                runner = Runner(
                    plan, executor, session, path, launch.source_kind, progress,
                    unavailable=launch.unavailable,
                )  # fmt: skip
                with progress:
                    runner.run()
        except KeyboardInterrupt:
            _fail(_interrupted(session, path, stop.name, ledger), stop.exit_code)
        finally:
            _report_leftovers(ledger, plan.workdir)


def _interrupted(session: Any, path: Path, name: str, ledger: Any) -> str:
    kept = sum(r.status == "ok" for r in session.runs)
    left = ", ".join(str(e) for e in ledger.entries())
    state = f"left behind: {left}" if left else "nothing left mounted or attached"
    if not path.exists():  # stopped before the first save (e.g. while probing a machine)
        return f"interrupted by {name} before anything was measured; {state}; start it again"
    return (
        f"interrupted by {name}; {kept} measurements kept in {path}; {state}; "
        f"continue with `fsarena run --resume {path}`"
    )


def _report_leftovers(ledger: Any, workdir: str) -> None:
    entries = ledger.entries()
    if entries:
        click.echo(
            f"fsarena: warning: could not undo {', '.join(str(e) for e in entries)}; "
            f"run `fsarena cleanup --workdir {workdir}`",
            err=True,
        )


# ---------------------------------------------------------------- cleanup


@main.command()
@click.option(
    "--workdir", default=DEFAULT_WORKDIR, show_default=True, help="The run's work directory."
)
def cleanup(workdir: str) -> None:
    """Remove what a killed run (kill -9, power cut) left: mounts, loops, images, processes."""
    from fsarena.ledger import cleanup as undo_all

    workdir = os.path.abspath(workdir)
    if not Path(workdir).is_dir():
        click.echo(f"nothing to clean: {workdir} does not exist")
        return
    if os.geteuid() != 0:
        raise FsarenaError("fsarena cleanup needs root (umount, losetup): run it with sudo")
    try:
        with workdir_lock(workdir):
            report = undo_all(workdir)
    except FsarenaError:
        raise FsarenaError(
            f"a run is using {workdir}; it cleans up after itself (stop it with Ctrl-C)"
        ) from None
    for line in report.done:
        click.echo(f"removed: {line}")
    for line in report.failed:
        click.echo(f"FAILED: {line}", err=True)
    summary = f"{len(report.done)} removed, {len(report.failed)} could not be removed"
    click.echo(summary if report.done or report.failed else f"nothing to clean in {workdir}")
    if report.failed:
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
    stop = Stop()
    try:
        with workdir_lock(workdir), stop.installed():
            session = run_crashtest(
                profiles,
                options,
                Path(workdir),
                path,
                lambda line: click.echo(f"== {line}", err=True),
            )
    except KeyboardInterrupt:
        _fail(
            f"interrupted by {stop.name}; results so far kept in {path}; "
            "nothing left mounted or attached",
            stop.exit_code,
        )
    click.echo(render(session, fmt), nl=False)
    click.echo(f"\nsession saved: {path}", err=True)
    if any(r.status == "failed" for r in session.runs):
        sys.exit(1)


# ---------------------------------------------------------------- store

_STORE_HELP = "The store: an SQLite file, or postgresql://... for a team."


def _store_option(f: Any) -> Any:
    default = str(Path(DEFAULT_RESULTS, "fsarena.sqlite"))
    return click.option("--store", "url", default=default, show_default=True, help=_STORE_HELP)(f)


@main.group()
def store() -> None:
    """Every session in one results store (SQLite or PostgreSQL), queryable across runs."""


@store.command("import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@_store_option
def store_import(paths: tuple[Path, ...], url: str) -> None:
    """Import session files (or directories of them); a session already there adds nothing."""
    from fsarena.store.db import open_store
    from fsarena.store.ingest import import_session

    files = [f for p in paths for f in (sorted(p.glob("*.json")) if p.is_dir() else [p])]
    with open_store(url) as db:
        done = [import_session(db, f) for f in files]
    for d in done:
        state = f"added ({d.runs} runs)" if d.added else "already in the store"
        click.echo(f"{d.session_id}  {d.path}: {state}")
    click.echo(f"{sum(d.added for d in done)} of {len(done)} sessions added to {url}")


@store.command("list")
@_store_option
def store_list(url: str) -> None:
    """The sessions the store holds, oldest first."""
    from fsarena.store.db import open_store
    from fsarena.store.query import list_sessions

    with open_store(url) as db:
        click.echo(list_sessions(db), nl=False)


@store.command("history")
@click.option("--task", required=True, help="A task, e.g. untar.")
@click.option("--fs", "filesystem", required=True, help="A filesystem, e.g. ext4.")
@click.option("--metric", default="wall_s", show_default=True, help="A raw metric.")
@click.option("--format", "fmt", type=click.Choice(["text", "html"]), default="text")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None)
@_store_option
def store_history(
    task: str, filesystem: str, metric: str, fmt: str, output: Path | None, url: str
) -> None:
    """One task on one filesystem across sessions: kernels, hosts, time."""
    from fsarena.store.chart import history_html
    from fsarena.store.db import open_store
    from fsarena.store.query import history, history_text

    with open_store(url) as db:
        points = history(db, task, filesystem, metric)
    draw = history_html if fmt == "html" else history_text
    text = draw(points, task, filesystem, metric)
    if output is None:
        click.echo(text, nl=False)
        return
    output.write_text(text)
    click.echo(f"written: {output}", err=True)


@store.command("export")
@click.option("--parquet", "directory", required=True, type=click.Path(path_type=Path))
@_store_option
def store_export(directory: Path, url: str) -> None:
    """Write every table to DIR/TABLE.parquet (for DuckDB, pandas)."""
    from fsarena.store.db import open_store
    from fsarena.store.export import export_parquet

    with open_store(url) as db:
        for path in export_parquet(db, directory):
            click.echo(f"written: {path}")


def _import_into_default_store(path: Path, results_dir: str) -> None:
    """After a run: index its session in the default store; a failure only warns."""
    try:
        from fsarena.store import default_store
        from fsarena.store.db import open_store
        from fsarena.store.ingest import import_session

        with open_store(default_store(results_dir)) as db:
            import_session(db, path)
    except Exception as exc:  # the run succeeded; the store is only an index of it
        click.echo(f"fsarena: warning: session not added to the store: {exc}", err=True)


# ---------------------------------------------------------------- fleet


@main.group()
def fleet() -> None:
    """The same comparison on many hosts (Ansible), and the report across them."""


_FLEET_FORMATS = ["text", "markdown", "csv", "json", "html"]


@fleet.command("report")
@click.argument(
    "session_paths", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path)
)
@click.option(
    "--baseline", default=None, help="Each host's reference filesystem (default: the plan's first)."
)
@click.option("--metric", default="wall_s", show_default=True, help="The metric compared.")
@click.option("--format", "fmt", type=click.Choice(_FLEET_FORMATS), default="text")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None)
@click.option(
    "--allow-same-machine", is_flag=True, help="Merge sessions that share a machine-id (tests)."
)
def fleet_report(
    session_paths: tuple[Path, ...],
    baseline: str | None,
    metric: str,
    fmt: str,
    output: Path | None,
    allow_same_machine: bool,
) -> None:
    """Hosts x filesystems: each filesystem's ratio to the baseline on the same host."""
    from fsarena.fleet.merge import build, load_hosts
    from fsarena.fleet.render import FORMATS

    hosts, warnings = load_hosts(list(session_paths), allow_same_machine)
    text = FORMATS[fmt](build(hosts, baseline, metric, warnings))
    if output is None:
        click.echo(text, nl=False)
        return
    output.write_text(text)
    click.echo(f"written: {output}", err=True)


@fleet.command("run")
@click.option("--inventory", "-i", required=True, type=click.Path(path_type=Path))
@click.option("--limit", default=None, help="Ansible host pattern, as ansible-playbook --limit.")
@click.option("--forks", type=int, default=5, show_default=True, help="Hosts driven at once.")
@click.option("--become", is_flag=True, help="Become root on the hosts (Ansible's become).")
@click.option("--suite", default=DEFAULT_SUITE, show_default=True)
@click.option("--fs", "fs_list", default=None, help="Comma-separated filesystems.")
@click.option("--repetitions", "-n", type=int, default=None)
@click.option("--scale", type=float, default=None)
@click.option("--seed", type=int, default=None, help="One seed for every host (default: random).")
@click.option("--task-timeout", type=float, default=None, help="Seconds per task.")
@click.option("--results-dir", default=DEFAULT_RESULTS, show_default=True)
@click.option("--baseline", default=None, help="Reference filesystem (default: the first).")
@click.option("--format", "fmt", type=click.Choice(_FLEET_FORMATS), default="text")
@click.option("--allow-same-machine", is_flag=True, help="Hosts may share a machine-id (tests).")
def fleet_run(**opts: Any) -> None:
    """Run the same plan on every host of an Ansible inventory; fetch and compare the sessions."""
    import random

    from fsarena.fleet.run import FleetRun, execute

    seed = opts["seed"] if opts["seed"] is not None else random.randrange(2**31)
    args = ["--suite", opts["suite"], "--seed", str(seed)]
    for flag, key in (("--fs", "fs_list"), ("-n", "repetitions"), ("--scale", "scale"),
                      ("--task-timeout", "task_timeout")):  # fmt: skip
        if opts[key] is not None:
            args += [flag, str(opts[key])]
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    fetch = Path(opts["results_dir"], f"fleet-{stamp}")
    run = FleetRun(opts["inventory"], args, fetch, f"fsarena, version {__version__}",
                   opts["limit"], opts["forks"], opts["become"])  # fmt: skip
    try:
        execute(run, lambda line: click.echo(f"fsarena: {line}", err=True))
    except KeyboardInterrupt:
        _fail(f"interrupted; every host's run stopped and cleaned up; sessions so far in {fetch}")
    _fleet_summary(run, fetch, opts)


def _fleet_summary(run: Any, fetch: Path, opts: dict[str, Any]) -> None:
    from fsarena.fleet.merge import build, load_hosts
    from fsarena.fleet.render import FORMATS

    click.echo(f"fsarena: fleet wall time {run.wall_s:.1f} s", err=True)
    for name, host in sorted(run.hosts.items()):
        first = f"{host.first_task_s:.1f} s" if host.first_task_s is not None else "never"
        state = f"FAILED: {host.failed}" if host.failed else "ok"
        click.echo(f"fsarena: {name}: first task after {first}; {state}", err=True)
    sessions = sorted(fetch.glob("*.json"))
    for path in sessions:
        _import_into_default_store(path, opts["results_dir"])
    if len(sessions) < 2:
        _fail(f"only {len(sessions)} host sessions fetched into {fetch}: no fleet to compare", 1)
    hosts, warnings = load_hosts(sessions, opts["allow_same_machine"])
    click.echo(FORMATS[opts["fmt"]](build(hosts, opts["baseline"], "wall_s", warnings)), nl=False)
    if any(h.failed for h in run.hosts.values()):
        sys.exit(1)
