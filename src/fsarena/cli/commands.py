"""The command line: the only module that prints or exits."""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from fsarena import __version__
from fsarena.cli.args import FORMATS, NUMBER, fs_names, usage_line
from fsarena.errors import FsarenaError
from fsarena.filesystems.profiles import PROFILES
from fsarena.plan.core import (
    DEFAULT_SUITE,
    DEFAULT_WORKDIR,
    Plan,
    builtin_suites,
    make_plan,
)
from fsarena.plan.floors import require_proportional
from fsarena.run.launch import Stop, workdir_lock
from fsarena.session.store import load, newest
from fsarena.tasks import TASKS

DEFAULT_RESULTS = "results"
# Exit codes of `fsarena run` (README, `fsarena run --help`): 0 every planned run was
# measured; 1 partial (some failed or were skipped); 2 bad input or an error; 3 nothing
# was measured; 128 + N stopped by signal N (the session is kept, resumable).
EXIT_CODES = {"complete": 0, "partial": 1, "failed": 3}


def _fail(message: str, code: int = 2) -> NoReturn:
    # One line, always: a name from a user's file may hold newlines or control characters.
    line = "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)
    click.echo(f"fsarena: error: {line}", err=True)
    sys.exit(code)


class _Group(click.Group):
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
            _fail(usage_line(exc))

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:  # a command's options: `fsarena run --scale abc`
            _fail(usage_line(exc))
        except FsarenaError as exc:
            _fail(str(exc))


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
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
@click.option("--scale", type=NUMBER, default=None, help="Dataset size factor of the run.")
@click.option("--device", default=None, help="A block device to check (nothing is written).")
def check(
    workdir: str, fs_list: str | None, suite: str, scale: float | None, device: str | None
) -> None:
    """Preflight: every requirement of a run, and the command that fixes what is missing."""
    from fsarena.filesystems.profiles import resolve
    from fsarena.run.launch import check_device, check_leftovers, space_needed
    from fsarena.run.preflight import preflight
    from fsarena.targets.source import choose_source, mem_available_bytes

    workdir = os.path.abspath(workdir)
    names = fs_names(fs_list)
    profiles = resolve(names) if names is not None else list(PROFILES.values())
    plan = make_plan(suite, [p.name for p in profiles], 1, scale, 0, workdir, device=device)
    require_proportional(plan)
    data = sum(s.total_bytes for s in plan.dataset_specs().values())
    need = space_needed(plan, choose_source("auto", data, mem_available_bytes()))
    results = preflight(workdir, need, profiles, boot=True)
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
    checked = [r for r in results if not r.info]  # [--] lines: nothing was checked
    info = (
        f" ({len(results) - len(checked)} [--] lines for information)" if checked != results else ""
    )
    click.echo(
        f"\n{len(checked) - len(failed)} of {len(checked)} checks passed{info}; workdir {workdir}"
    )
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
        from fsarena.plan.machines import builtin_machines

        for name, machine in builtin_machines().items():
            click.echo(f"{name:16} {machine.summary()}  [{machine.article}]")
    else:
        for name, suite in builtin_suites().items():
            click.echo(f"{name:16} {suite.article}: {suite.description}")


def _list_filesystems() -> None:
    """Each filesystem, its mkfs, and every driver: available here (* = default) or why not."""
    from fsarena.filesystems.drivers import choose, drivers_of, unavailable
    from fsarena.guest.kernels import GUESTS

    told: dict[str, str] = {}  # each guest kernel's reason, told once here and referred to below
    for name, kernel in GUESTS.items():
        why = kernel.missing()
        said = f"as {told[why]}" if why in told else why
        told.setdefault(why, name)
        click.echo(f"guest kernel {name:5} " + (f"not available: {said}" if why else "available"))
    click.echo("")
    for profile in PROFILES.values():
        click.echo(f"{profile.name:9} {' '.join(profile.mkfs)}")
        if profile.never:
            click.echo(f"    not runnable: {profile.never}")
            continue
        best = choose(profile.name)
        for found in drivers_of(profile):
            mark = "*" if best.available and found.profile == best.profile else " "
            state = "available" if found.available else unavailable(found)
            click.echo(f"  {mark} {found.profile.name:16} {found.profile.group:10} {state}")
    click.echo("\n* = the default; pick another with NAME@DRIVER in --fs (e.g. vfat@fuse)")


# ---------------------------------------------------------------- run


# Options that make the plan: a resumed session brings its own.
PLAN_OPTIONS = (
    "suite", "fs_list", "repetitions", "scale", "seed", "workdir", "source",
    "task_timeout", "image_size", "device", "output", "target_ci", "max_repetitions",
    "time_budget", "machine", "quick", "warmup", "age", "commands", "prepare", "data",
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
    from fsarena.plan.core import parse_size
    from fsarena.run.resume import plan_of, resumable

    if opts["resume_path"] is not None:
        _reject_plan_options(ctx)
        recorded = resumable(opts["resume_path"])
        return plan_of(recorded, opts["resume_path"]), opts["resume_path"], recorded
    from fsarena.plan.yours import user_suite

    suite = user_suite(opts["suite"], opts["commands"], opts["prepare"], opts["data"])
    plan = _with_drivers(
        make_plan(
            suite,
            fs_names(opts["fs_list"]),
            opts["repetitions"],
            opts["scale"],
            opts["seed"],
            os.path.abspath(opts["workdir"]),
            source=opts["source"],
            task_timeout_s=opts["task_timeout"],
            image_size_bytes=parse_size(opts["image_size"]) if opts["image_size"] else None,
            device=opts["device"],
            machine=opts["machine"],
            **_repetition_mode(opts, _sets_repetitions(suite)),
            age=opts["age"],
        )
    )
    require_proportional(plan)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    default = Path(opts["results_dir"], f"fsarena-{stamp}-{plan.suite}.json")
    return plan, Path(opts["output"]) if opts["output"] else default, None


DEFAULT_BUDGET_S = 600.0  # the default run's time budget: what a user waits for an answer


def _sets_repetitions(suite: Any) -> bool:
    """A user's suite file that states its repetitions means them, as --repetitions does."""
    from fsarena.plan.core import builtin_suites, load_suite

    if isinstance(suite, str):
        if suite in builtin_suites():
            return False
        suite = load_suite(suite)
    return suite.name not in builtin_suites() and "repetitions" in suite.model_fields_set


def _repetition_mode(opts: dict[str, Any], suite_fixed: bool = False) -> dict[str, Any]:
    """Decisive within a budget by default; --quick, --repetitions, --target-ci as they say.

    A built-in suite's repetitions are where a decisive run starts; a suite file of the
    user's that states `repetitions = N` gets exactly N, like --repetitions N.
    """
    fixed = opts["quick"] or opts["repetitions"] is not None or suite_fixed
    if opts["quick"] and (opts["target_ci"] or opts["time_budget"] or opts["max_repetitions"]):
        raise FsarenaError("--quick runs the suite's repetitions once: drop the adaptive options")
    adaptive = opts["target_ci"] is not None
    decisive = not fixed and not adaptive
    budget = opts["time_budget"]
    if decisive and budget is None:
        budget = DEFAULT_BUDGET_S
    return {
        "target_ci_pct": opts["target_ci"],
        "max_repetitions": opts["max_repetitions"],
        "time_budget_s": budget,
        "decisive": decisive,
        # A fixed run (--repetitions, --quick) does exactly what it says unless asked.
        "warmup_rounds": int(opts["warmup"] if opts["warmup"] is not None else not fixed),
    }


def _announce(plan: Plan) -> str:
    """Before starting: how long the run will take, and why."""
    warm = "one warm-up round (kept apart, not a sample), then " if plan.warmup_rounds else ""
    if plan.decisive:
        budget = (plan.time_budget_s or DEFAULT_BUDGET_S) / 60
        return (
            f"{warm}{plan.repetitions} rounds, then more (up to "
            f"{plan.max_repetitions_or_default}) until every kind of work has a winner or a "
            f"tie ruling out differences above 5 %; no new round once the {budget:.0f} min "
            "budget would be passed (--time-budget SECONDS; --repetitions N or --quick for a "
            "fixed run)"
        )
    if plan.target_ci_pct is not None:
        limit = f", within {plan.time_budget_s / 60:.0f} min" if plan.time_budget_s else ""
        return (
            f"{warm}{plan.repetitions} rounds, then more (up to "
            f"{plan.max_repetitions_or_default}{limit}) while a task's 95 % CI is wider than "
            f"±{plan.target_ci_pct:g} %"
        )
    return f"{warm}{plan.repetitions} rounds, fixed (--repetitions or --quick)"


def _with_drivers(plan: Plan) -> Plan:
    """Each filesystem through its best driver here (or the one named), guests' references added."""
    from fsarena.filesystems.drivers import plan_names

    return plan.model_copy(update={"filesystems": plan_names(plan.filesystems, plan.table())})


@main.command()
@click.option(
    "--suite", default=None, help=f"Built-in suite or .toml file (default: {DEFAULT_SUITE})."
)
@click.option("--fs", "fs_list", default=None, help="Comma-separated filesystems, e.g. ext4,xfs.")
@click.option(
    "--repetitions", "-n", type=int, default=None, help="Repetitions (default: the suite's)."
)
@click.option(
    "--command",
    "commands",
    multiple=True,
    help="Your command, timed on each filesystem (sh -c, cwd on it); repeatable.",
)
@click.option("--prepare", default=None, help="Untimed command run before each --command.")
@click.option(
    "--data", default=None, help="Your directory (read-only) in place of the suite's trees."
)
@click.option(
    "--scale", type=NUMBER, default=None, help="Dataset size factor, e.g. 0.02 for a quick run."
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
    "--task-timeout", type=NUMBER, default=3600.0, show_default=True, help="Seconds per task."
)
@click.option(
    "--target-ci",
    type=NUMBER,
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
    type=NUMBER,
    default=None,
    help="No new repetition once this many seconds would be exceeded "
    "(default run: 600; with --target-ci: none).",
)
@click.option(
    "--quick",
    is_flag=True,
    help="The suite's repetitions once each, no warm-up, no adaptive rounds: a first look.",
)
@click.option(
    "--warmup/--no-warmup",
    default=None,
    help="One warm-up round first, kept in the session, never a sample "
    "(default: on, off with --repetitions or --quick).",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress output, only the tables.")
@click.option(
    "--machine",
    default=None,
    help="Emulate a machine's memory, CPU and disk limits: a built-in "
    "(`fsarena list machines`), a [machines.NAME] of the suite, or a .toml file.",
)
@click.option(
    "--age",
    default=None,
    metavar="PROFILE",
    help="Also run every filesystem aged: fill, fill-50, fill-95, churn, or a .toml "
    "profile (see README: aged filesystems); reported beside the fresh ones.",
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
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.pass_context
def run(ctx: click.Context, /, **opts: Any) -> None:
    """Run a comparison: every task on every filesystem, repeated, saved after each measurement.

    \b
    Exit codes: 0 every planned run measured; 1 only part measured (some runs
    failed or were skipped); 2 bad input (nothing run) or an error that stopped
    the run; 3 nothing measured; 128+N stopped by signal N (the session is
    kept: --resume it).
    """
    from fsarena.run.launch import describe, prepare, require_ready

    plan, path, recorded = _new_or_resumed(ctx, opts)
    launch = prepare(plan, [str(path.parent)], opts["destroy"])
    if opts["dry_run"]:
        for line in describe(launch, Path(opts["results_dir"])):
            click.echo(line)
        return
    if os.geteuid() != 0:
        raise FsarenaError("fsarena run needs root (mkfs, mount, losetup): run it with sudo")
    require_ready(launch)
    if not opts["quiet"]:
        from fsarena.run.launch import estimate

        click.echo(f"fsarena: this run: {_announce(plan)}", err=True)
        click.echo(f"fsarena: time: {estimate(plan, Path(opts['results_dir']))}", err=True)
    session = _session_for(launch, path, recorded)
    _execute(launch, session, path, opts["quiet"])
    from fsarena.report import render, write

    click.echo(render(session, opts["fmt"]), nl=False)
    click.echo(f"\nsession saved: {path}", err=True)
    html_path = path.with_suffix(".html")
    write(session, "html", html_path)
    click.echo(f"HTML report: {html_path}", err=True)
    _import_into_default_store(path, opts["results_dir"])
    sys.exit(EXIT_CODES.get(session.status, 0))


def _session_for(launch: Any, path: Path, recorded: Any) -> Any:
    """A new session, or the resumed one after checking nothing it depends on changed."""
    from fsarena.run.preflight import host_facts, tool_versions
    from fsarena.run.resume import check_unchanged
    from fsarena.run.runner import new_session
    from fsarena.session.records import TargetRecord

    plan = launch.plan
    fresh = new_session(plan, host_facts(plan.workdir), tool_versions(plan.profiles()))
    for name, why in launch.unavailable.items():
        click.echo(f"fsarena: {name} skipped: {why}", err=True)
    for note in launch.notes:
        click.echo(f"fsarena: warning: {note}", err=True)
        fresh.warn("plan", note)
    if launch.device is not None:
        click.echo(f"fsarena: destroying all data on {launch.device.describe()}", err=True)
        fresh.target = TargetRecord.model_validate(launch.device.to_dict())
    if recorded is None:
        return fresh
    check_unchanged(recorded, fresh, path)
    kept = len(recorded.runs)
    click.echo(f"fsarena: resuming {path} ({kept} runs recorded)", err=True)
    recorded.warn("resumed", f"resumed at {dt.datetime.now(dt.UTC).isoformat(timespec='seconds')}")
    return recorded


def _execute(launch: Any, session: Any, path: Path, quiet: bool) -> None:
    """The run itself, under the work directory's lock, stopped cleanly by a signal."""
    from fsarena.cli.progress import RunProgress
    from fsarena.machines.run import executor_for
    from fsarena.measure.ledger import Ledger, leftovers
    from fsarena.run.runner import Runner

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
    from fsarena.measure.ledger import cleanup as undo_all

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
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
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
    from fsarena.crashtest.workload import select
    from fsarena.filesystems.profiles import resolve
    from fsarena.plan.core import _fresh_seed
    from fsarena.run.crashtest import run_crashtest

    names = fs_names(fs_list)
    profiles = resolve(names) if names is not None else list(PROFILES.values())
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
    from fsarena.report import render

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
