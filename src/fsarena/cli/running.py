"""`fsarena run`: its options, the plan (new or resumed), the run under a lock, the exit code."""

from __future__ import annotations

import datetime as dt
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from fsarena.cli.args import (
    NUMBER,
    complete_filesystems,
    complete_suites,
    format_option,
    fs_names,
    require_measured,
    weights,
)
from fsarena.cli.base import DEFAULT_RESULTS, EXIT_CODES, fail, left_in
from fsarena.cli.executing import (
    claim_session,
    execute,
    require_results_dirs,
    results_lines,
    session_for,
    write_reports,
)
from fsarena.cli.store import add_to_default_store
from fsarena.errors import FsarenaError
from fsarena.plan import DEFAULT_SUITE, DEFAULT_WORKDIR, REPLAY_TIMINGS

if TYPE_CHECKING:  # the plan's machinery loads when `run` runs, not for --help
    from collections.abc import Callable

    from fsarena.interrupt import Stop
    from fsarena.plan.model import Plan
    from fsarena.run.launch import Launch
    from fsarena.session.file import Session


@dataclass
class RunOptions:
    """`fsarena run`'s options (and tune's), typed: click's values as parsed, one field each.

    A flag added to `run` is a field here, or `RunOptions.of` refuses to start.
    """

    suite: str | None
    fs_list: str | None
    repetitions: int | None
    commands: tuple[str, ...]
    prepare: str | None
    data: str | None
    replay: str | None
    replay_timing: str
    pg_replay: str | None
    pg_base: str | None
    scale: float | None
    seed: int | None
    workdir: str
    results_dir: str
    output: str | None
    force: bool
    source: str
    task_timeout: float
    weigh: str | None
    workload: str | None
    target_ci: float | None
    max_repetitions: int | None
    time_budget: float | None
    quick: bool
    warmup: bool | None
    quiet: bool
    machine: str | None
    age: str | None
    age_repo: str | None
    image_size: str | None
    device: str | None
    destroy: str | None
    dry_run: bool
    resume_path: Path | None
    fmt: str
    # `fsarena tune`: its own options, and the kinds of work its sweep is for
    tune: bool = False
    options: str | None = None
    race: bool = True
    kinds: list[str] | None = None
    # Learned on the way: what the option probe refused, and the sweep in words
    refused: dict[tuple[str, str], str] = field(default_factory=dict)
    not_swept: list[str] = field(default_factory=list)
    swept_options: str = ""

    @classmethod
    def of(cls, given: dict[str, Any]) -> RunOptions:
        return cls(**given)


# Options that make the plan: a resumed session brings its own.
PLAN_OPTIONS = (
    "suite", "fs_list", "repetitions", "scale", "seed", "workdir", "source",
    "task_timeout", "image_size", "device", "output", "target_ci", "max_repetitions",
    "time_budget", "machine", "quick", "warmup", "age", "commands", "prepare", "data", "force",
    "weigh", "workload", "replay", "replay_timing", "pg_replay", "pg_base",
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


def _new_or_resumed(ctx: click.Context, o: RunOptions) -> tuple[Plan, Path, Any]:
    """The plan and session path of a new run, or those of the session to resume."""
    from fsarena.plan.floors import require_proportional
    from fsarena.plan.model import make_plan
    from fsarena.plan.suite import parse_size
    from fsarena.run.resume import plan_of, resumable

    if o.resume_path is not None:
        _reject_plan_options(ctx)
        from click.core import ParameterSource

        if ctx.get_parameter_source("results_dir") is not ParameterSource.COMMANDLINE:
            # Its store and the sessions its estimate learns from are beside it, not in
            # the current directory's results/.
            o.results_dir = str(Path(o.resume_path).parent)
        recorded = resumable(o.resume_path)
        return plan_of(recorded, o.resume_path), o.resume_path, recorded
    from fsarena.plan.yours import user_suite

    suite = user_suite(
        o.suite,
        o.commands,
        o.prepare,
        o.data,
        o.replay,
        o.replay_timing or "both",
        o.pg_replay,
        o.pg_base,
    )
    names = fs_names(o.fs_list)
    tuned: dict[str, Any] = {}
    if o.tune:
        suite, names, o.not_swept, groups, o.swept_options = _swept(
            suite, names, o.options, o.refused, o.kinds
        )
        tuned = {"tune": groups, "race": o.race}
    plan = _with_drivers(
        make_plan(
            suite,
            names,
            o.repetitions,
            o.scale,
            o.seed,
            os.path.abspath(o.workdir),
            source=o.source,
            task_timeout_s=o.task_timeout,
            image_size_bytes=parse_size(o.image_size) if o.image_size else None,
            device=o.device,
            machine=o.machine,
            **_repetition_mode(o, _sets_repetitions(suite)),
            age=o.age,
            weights=weights(o.weigh, o.workload),
            age_repo=o.age_repo,
            **tuned,
        ),
        o.quiet,
        o.dry_run,
    )
    require_proportional(plan)
    measured = {plan.task_class(name).kind for name in plan.tasks}
    require_measured(plan.weights if o.weigh or o.workload else None,
                     o.weigh, measured, "the plan")  # fmt: skip
    plan = _sweep_budget(plan, o) if o.tune else plan
    if o.output:
        return plan, _output(o.output, o.force), None
    # A proposal: the name is claimed when the session is first saved (session.file.create).
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return plan, Path(o.results_dir, f"fsarena-{stamp}-{plan.suite}.json"), None


def _output(output: str, force: bool) -> Path:
    """--output: never another session file (unless --force), never beside the user's
    files where its report would go."""
    from fsarena.session.file import refusal, require_derived_free

    path = Path(output)
    if path.exists() and not force:
        raise FsarenaError(refusal(path, "session file"))
    require_derived_free(path)
    return path


def _swept(
    suite: Any, names: list[str] | None, options: str | None, refused: Any, kinds: Any
) -> tuple[Any, list[str], list[str], dict[str, list[str]], str]:
    """`fsarena tune`: the suite with each filesystem's configurations as variants, the
    options left out (refused by the probe), each with why, the sweep's groups, and what
    the default sweep chose in words ("" when --options named them)."""
    from fsarena.filesystems.options import options_for
    from fsarena.plan.tuning import sweep

    if not names:
        raise FsarenaError(
            "tune sweeps the options of the filesystems named with --fs, e.g. --fs btrfs"
        )
    swept = sweep(suite, names, fs_names(options, "--options"), refused, kinds)
    said = ""
    if options is None:  # the default sweep: say what it chose, and what else there is
        chosen = set(swept.options.values())
        others = [o.name for fs in names for o in options_for(fs) if o not in chosen]
        said = (
            f"options: one per setting, for the kinds of work this workload weighs "
            f"({', '.join(kinds)}): {', '.join(o.name for o in swept.options.values())}; "
            f"not swept: {', '.join(others) or 'none'} (--options NAME,... or --options all)"
        )
    # Each filesystem's defaults, then its configurations (analysis.tuned, analysis.race).
    groups: dict[str, list[str]] = {}
    for name in swept.filesystems:
        if name in names:
            groups[name] = [name]
        elif groups:
            groups[list(groups)[-1]].append(name)
    return swept.suite, swept.filesystems, swept.left_out, groups, said


def _say_swept(o: RunOptions, plan: Plan) -> None:
    """tune: what the sweep left out (the probe refused it) and the configurations raced."""
    for why in o.not_swept:
        click.echo(f"fsarena: not swept: {why}", err=True)
    if o.swept_options:  # the default sweep: what it chose, and what else there is
        click.echo(f"fsarena: {o.swept_options}", err=True)
    click.echo(f"fsarena: configurations: {', '.join(plan.filesystems)}", err=True)


def _workload_kinds(o: RunOptions) -> list[str]:
    """The kinds of work a sweep is for: those the workload weighs (--weigh, --workload,
    the suite's [weights]), else every workload kind of the suite's tasks (facts and
    demonstrations weigh nothing by default: analysis.answer)."""
    from fsarena.analysis.answer import FACT_KINDS, NEVER_WEIGHED
    from fsarena.plan.suite import load_suite
    from fsarena.plan.yours import user_suite
    from fsarena.tasks import task_class

    suite = user_suite(o.suite, o.commands, o.prepare, o.data)
    suite = load_suite(suite) if isinstance(suite, str) else suite
    given = weights(o.weigh, o.workload) or suite.weights
    if given:
        return [k for k, w in given.items() if w > 0]
    kinds = [task_class(t, suite.commands).kind for t in suite.tasks]
    return list(dict.fromkeys(k for k in kinds if k not in (*FACT_KINDS, *NEVER_WEIGHED)))


def _sweep_budget(plan: Plan, o: RunOptions) -> Plan:
    """A decisive sweep's rounds and time: what BUDGET_RUNS runs of the defaults alone
    hold, shared by the configurations (plan.tuning.rounds_within), unless given."""
    from fsarena.plan.tuning import BUDGET_RUNS, rounds_within
    from fsarena.stopping import DEFAULT_BUDGET_S, rounds_words

    if not plan.stopping.eliminates:
        return plan
    update: dict[str, Any] = {}
    swept, configurations = len(plan.tune), len(plan.filesystems)
    fit = rounds_within(BUDGET_RUNS, plan.repetitions, swept, configurations)
    if o.max_repetitions is None:
        update["max_repetitions"] = max(plan.repetitions, fit)
    if o.time_budget is None:
        update["time_budget_s"] = BUDGET_RUNS * DEFAULT_BUDGET_S
    plan = plan.model_copy(update=update)
    sequences = plan.planned_sequences()
    held = BUDGET_RUNS * (1 + plan.repetitions) * swept
    if fit < plan.repetitions:
        words = (
            f"its {configurations} configurations need {sequences} sequences for the warm-up "
            f"and {rounds_words(plan.repetitions)}, more than {BUDGET_RUNS} runs of the defaults "
            f"alone ({held}): it will take longer; fewer options (--options) fit"
        )
    else:
        words = (
            f"{BUDGET_RUNS} runs of the defaults alone ({held} sequences), shared by "
            f"{configurations} configurations: the warm-up round on the defaults, then up to "
            f"{rounds_words(plan.stopping.ceiling)} ({len(plan.warmup_sequences())} + "
            f"{plan.stopping.ceiling} x {configurations} sequences), fewer "
            "sequences a round once configurations are eliminated"
        )
    click.echo(f"fsarena: the sweep's budget: {words}", err=True)
    return plan


def _sets_repetitions(suite: Any) -> bool:
    """A user's suite file that states its repetitions means them, as --repetitions does."""
    from fsarena.plan.suite import builtin_suites, load_suite

    if isinstance(suite, str):
        if suite in builtin_suites():
            return False
        suite = load_suite(suite)
    return suite.name not in builtin_suites() and "repetitions" in suite.model_fields_set


def _repetition_mode(o: RunOptions, suite_fixed: bool = False) -> dict[str, Any]:
    """The stopping rule's fields for the flags as typed (fsarena.stopping.from_flags)."""
    from fsarena.stopping import from_flags

    return from_flags(
        o.quick,
        o.repetitions,
        o.target_ci,
        o.max_repetitions,
        o.time_budget,
        o.warmup,
        suite_fixed,
    )


def _announce(plan: Plan) -> str:
    """Before starting: how long the run will take, and why (the stopping rule's own words)."""
    return plan.stopping.announce(plan.scale)


def _with_drivers(plan: Plan, quiet: bool, dry_run: bool) -> Plan:
    """Each filesystem through its best driver here (or the one named), guests' references added.

    A guest kernel not yet known to boot here is booted first (beside the work directory,
    once: guest.boots keeps the answer); where a filesystem needs a guest kernel and none
    boots, the qemu guest is installed (not in a dry run: it says so); a guest driver
    named explicitly that cannot run here is refused before anything is made; a
    filesystem run elsewhere than its first driver says why.
    """
    from fsarena.filesystems.drivers import (
        plan_names,
        refuse_unbootable,
        wanting_a_guest,
        why_chosen,
    )
    from fsarena.run.preflight import existing_parent

    near = existing_parent(plan.workdir) if os.geteuid() == 0 else None
    names = plan_names(plan.filesystems, plan.table(), near)
    if near and (wanting := wanting_a_guest(plan.filesystems, plan.table())):

        def say(line: str) -> None:
            click.echo(f"fsarena: {line}", err=True)

        need = f"{', '.join(wanting)} need{'s' if len(wanting) == 1 else ''} a guest kernel"
        if dry_run:
            say(f"{need} and none boots here: a real run installs the qemu guest first")
        else:
            from fsarena.guest.install import install_and_boot

            say(f"{need} and none boots here: installing the qemu guest (fsarena setup-guest)")
            install_and_boot(near, say)
            names = plan_names(plan.filesystems, plan.table(), near)
    refuse_unbootable(plan.filesystems, plan.table())
    for typed in [] if quiet else plan.filesystems:
        if why := why_chosen(typed, plan.table()):
            click.echo(f"fsarena: {why}", err=True)
    return plan.model_copy(update={"filesystems": names})


@click.command()
@click.option(
    "--suite",
    default=None,
    shell_complete=complete_suites,
    help=f"Built-in suite or .toml file (default: {DEFAULT_SUITE}).",
)
@click.option(
    "--fs",
    "fs_list",
    default=None,
    shell_complete=complete_filesystems,
    help="Comma-separated filesystems, e.g. ext4,xfs.",
)
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
    "--data",
    default=None,
    help="Your directory (read-only) in place of the suite's trees; with --command and no "
    "--suite, copied onto each filesystem as data/ (verified), the command's cwd.",
)
@click.option(
    "--replay",
    default=None,
    metavar="TRACE",
    help="Replay a trace `fsarena capture` wrote on each filesystem (its initial tree made "
    "first, untimed), as fast as possible and at its traced pace.",
)
@click.option(
    "--replay-timing",
    type=click.Choice(list(REPLAY_TIMINGS)),
    default="both",
    show_default=True,
    help="With --replay or --pg-replay: as fast as possible (capacity), at the traced or "
    "logged pace (latency), or both.",
)
@click.option(
    "--pg-replay",
    default=None,
    metavar="LOG",
    help="Replay a PostgreSQL statement log (log_statement = 'all', docs/replay.md) with "
    "pgreplay on a real server restored from --pg-base on each filesystem.",
)
@click.option(
    "--pg-base",
    default=None,
    metavar="BACKUP",
    help="With --pg-replay: the base backup (pg_basebackup -D DIR -X stream, plain or tar) "
    "taken just before the log begins.",
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
@click.option(
    "--output",
    "-o",
    default=None,
    help="Session file path (default: a new name in --results-dir); never an existing file.",
)
@click.option(
    "--force", is_flag=True, help="Replace the --output file if it exists (its session is lost)."
)
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
    "--weigh",
    default=None,
    metavar="KIND=W,...",
    help="How much each kind of work matters to you (databases=3,large_files=1); the "
    "recommendation weighs only these. Default: the suite's weights.",
)
@click.option(
    "--workload",
    default=None,
    help="A named workload's weights: database, mail, fileserver, vm, desktop.",
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
    "--age-repo",
    default=None,
    metavar="PATH",
    help="Git replay (and the git tasks) from this local git repository's real history: "
    "its newest commits on HEAD's first-parent line (--age git-replay unless given).",
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
@format_option("report")
@click.pass_context
def run(ctx: click.Context, /, **given: Any) -> None:
    """Run a comparison: every task on every filesystem, repeated, saved as it goes.

    \b
    Exit codes: 0 every planned run measured; 1 only part measured (some runs
    failed or were skipped); 2 bad input (nothing run) or an error that stopped
    the run; 3 nothing measured; 128+N stopped by signal N (the session is
    kept: --resume it).
    """
    from fsarena.interrupt import Stop

    o = RunOptions.of(given)
    stop = Stop()

    def reports(session: Session, path: Path) -> list[str]:
        """The reports and the store, once the run ended: what they could not write."""
        try:  # until the end: a SIGTERM here killed the run outright, mid-report
            lost = write_reports(session, path, o.fmt)
            if why := add_to_default_store(path, o.results_dir):
                lost.append(f"not added to the store: {why}")
        except KeyboardInterrupt:
            fail(
                f"interrupted by {stop.name} while writing the reports; every measurement "
                f"is saved in {path}: `fsarena report {path}` writes them",
                stop.exit_code,
            )
        return lost

    # From the start, not from the run's first step: a shell's background job starts with
    # SIGINT ignored, and a Ctrl-C (or kill -INT) before the run began was lost: it went on.
    with stop.installed():
        try:
            done = _launch_and_execute(ctx, o, stop, reports)
        except KeyboardInterrupt:
            fail(_stopped_before(stop.name, o.workdir), stop.exit_code)
        if done is None:  # --dry-run
            return
        session, path, lost = done
    code = EXIT_CODES.get(session.status, 0)
    if lost:  # every measurement is in the file; say what else is missing
        fail(f"session saved: {path}; {'; '.join(lost)}", code or 1)
    sys.exit(code)


def _launch_and_execute(
    ctx: click.Context,
    o: RunOptions,
    stop: Stop,
    reports: Callable[[Session, Path], list[str]],
) -> tuple[Session, Path, list[str]] | None:
    """Everything up to and including the run and its reports: the session, its file and
    what the reports could not write (None: a dry run)."""
    from fsarena.run.launch import describe, prepare, require_ready, workdir_lock

    plan, path, recorded = _new_or_resumed(ctx, o)  # every flag checked, the suite read
    launch = prepare(plan, [str(path.parent)], o.destroy)
    if o.dry_run:
        if o.tune:
            _say_swept(o, plan)
        lines = describe(launch, Path(o.results_dir))
        for line in [*lines[:-1], *results_lines(plan, path, o.results_dir), lines[-1]]:
            click.echo(line)
        return None
    if os.geteuid() != 0:
        raise FsarenaError("fsarena run needs root (mkfs, mount, losetup): run it with sudo")
    require_results_dirs(plan, path, o.results_dir)
    require_ready(launch)
    if o.tune:  # the options tried here, once everything typed is known good
        plan, path, launch = _probed_sweep(ctx, o, (plan, path, launch))
    from fsarena.run.estimate import NO_ESTIMATE, estimate, report_reserve

    probed = None
    if not o.quiet:
        from fsarena.run.agingprobe import probe_at_launch

        click.echo(f"fsarena: this run: {_announce(plan)}", err=True)
        say = lambda line: click.echo(f"fsarena: {line}", err=True)  # noqa: E731
        probed = probe_at_launch(plan, say, workdir_lock)
    told = estimate(plan, Path(o.results_dir), probed)
    first = told.startswith(NO_ESTIMATE)
    if first:
        told += "; a rough first-run estimate follows the device's ceiling, measured first"
    if not o.quiet:
        click.echo(f"fsarena: time: {told}", err=True)
    session = session_for(launch, path, recorded)
    for why in o.not_swept:  # tune: what the probe refused, in the report
        session.warn("option_unavailable", f"not swept: {why}")
    if probed is not None:  # a later run's probe is compared with it (run/estimate.py)
        session.timing.aging_probe_fs, session.timing.aging_probe_bytes_per_s = probed.key
    if recorded is None:
        path = claim_session(session, path, o.output, o.force)
    reserve = report_reserve(Path(o.results_dir)) if plan.time_budget_s else 0.0
    # The reports are written before the run's executor ends: the spare image's deletion
    # (0.5 s of the host's work) runs beside them (RealExecutor.remove_spare_image).
    then = lambda: reports(session, path)  # noqa: E731
    lost = execute(launch, session, path, o.quiet, reserve, first, stop, then)
    return session, path, lost


def _probed_sweep(
    ctx: click.Context, o: RunOptions, planned: tuple[Plan, Path, Launch]
) -> tuple[Plan, Path, Launch]:
    """tune: every option tried here (under the run's stop handler); the plan made again
    without what this kernel or mkfs refused, and the sweep said."""
    from fsarena.run.launch import prepare

    o.refused = _probe(o)
    if o.refused:
        plan, path, _ = _new_or_resumed(ctx, o)
        planned = plan, path, prepare(plan, [str(path.parent)], o.destroy)
    _say_swept(o, planned[0])
    return planned


def _stopped_before(name: str, workdir: str) -> str:
    """A stop signal before the run's own steps (planning, the aging probe, the lock)."""
    return f"interrupted by {name} before anything was measured; {left_in(workdir)}; start it again"


@click.command(
    params=[
        *(p for p in run.params if p.name != "resume_path"),
        click.Option(
            ["--options"],
            default=None,
            help="These options of the table (comma-separated names as `fsarena list "
            "options` shows them), or `all`; default: one per setting, among those meant "
            "for the kinds of work the workload weighs.",
        ),
        click.Option(
            ["--race/--no-race"],
            default=True,
            help="Eliminate between rounds the configurations shown behind the best, as "
            "every decisive run does (the defaults are never eliminated), or measure every "
            "configuration in every round (--no-race: a full sweep).",
        ),
    ]
)
@click.pass_context
def tune(ctx: click.Context, /, **given: Any) -> None:
    """Which settings: the --fs filesystems' defaults against their options.

    Each option swept (by default one per setting, among those the options table
    means for the kinds of work your workload weighs; --options to choose) becomes
    one configuration, run beside the filesystem's defaults as a variant of the
    suite, in the same rounds, eliminated between rounds once shown behind, and
    judged by the same answer: use a configuration, or keep the defaults, with
    each configuration's time and space beside the defaults'. The sweep shares a
    budget of three runs of the defaults alone. Each option is first tried on a
    small image (mkfs, mount, chattr): one this kernel or mkfs refuses is left out
    and said, with the tool's own words. Resume with `fsarena run --resume
    SESSION`. Exit codes as `fsarena run`.
    """
    kinds = _workload_kinds(RunOptions.of({**given, "resume_path": None}))
    ctx.invoke(run, tune=True, kinds=kinds, resume_path=None, **given)


def _probe(o: RunOptions) -> dict[tuple[str, str], str]:
    """Before the sweep: every option tried here (run.optionprobe); the refused ones, why."""
    from fsarena.plan.tuning import picked_options
    from fsarena.run.optionprobe import probe_here

    names = fs_names(o.fs_list) or []
    wanted = picked_options(names, fs_names(o.options, "--options"), o.kinds)
    if not o.quiet:
        click.echo(f"fsarena: trying {len(wanted)} options on small images first", err=True)
    probed = probe_here(os.path.abspath(o.workdir), wanted)
    for p in probed:
        if not o.quiet or not p.available:
            click.echo(f"fsarena: {p.line()}", err=True)
    return {(p.fs, p.option): p.reason for p in probed if not p.available}
