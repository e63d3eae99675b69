"""The command line's entry point: the `fsarena` group, check, list, cleanup, powerloss."""

from __future__ import annotations

import datetime as dt
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from fsarena.cli.args import (
    NUMBER,
    complete_filesystems,
    complete_suites,
    force_option,
    format_option,
    fs_names,
    refuse_existing,
)
from fsarena.cli.base import DEFAULT_RESULTS, Group, alias, fail, left_in, on_stop
from fsarena.cli.capture import capture
from fsarena.cli.fleet import fleet
from fsarena.cli.reports import compare, report
from fsarena.cli.running import run, tune
from fsarena.cli.share import share
from fsarena.cli.store import store
from fsarena.errors import FsarenaError
from fsarena.plan import DEFAULT_SUITE, DEFAULT_WORKDIR

if TYPE_CHECKING:
    from fsarena.host.cleanup import Foreign

# The commands' machinery (pydantic models, the plan, the runner, the tasks) is imported
# in the command that needs it: `fsarena --help` stays light (issue 13: <= 0.2 s, 40 MB).


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=lambda ctx, _param, value: _version(ctx) if value else None,
    help="Show the version and build (commit, or digest of the files) and exit.",
)
def main() -> None:
    """Compare Linux filesystems with real-world tasks, measured honestly."""


def _version(ctx: click.Context) -> None:
    # The build, not only the number: a fleet installs fsarena where this line differs.
    from fsarena import build_identity

    click.echo(f"fsarena, version {build_identity()}")
    ctx.exit()


# ---------------------------------------------------------------- check


@main.command()
@click.option("--workdir", default=DEFAULT_WORKDIR, show_default=True, help="Where loop images go.")
@click.option(
    "--fs",
    "fs_list",
    default=None,
    shell_complete=complete_filesystems,
    help="Filesystems to check (default: all known).",
)
@click.option(
    "--suite",
    default=DEFAULT_SUITE,
    show_default=True,
    shell_complete=complete_suites,
    help="Suite whose space to check.",
)
@click.option("--scale", type=NUMBER, default=None, help="Dataset size factor of the run.")
@click.option("--device", default=None, help="A block device to check (nothing is written).")
def check(
    workdir: str, fs_list: str | None, suite: str, scale: float | None, device: str | None
) -> None:
    """Preflight: every requirement of a run, and the command that fixes what is missing."""
    from fsarena.filesystems.profiles import PROFILES
    from fsarena.filesystems.variants import guest_kernels_of, resolve
    from fsarena.plan.floors import require_proportional
    from fsarena.plan.model import make_plan
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
    # --fs NAME: boot again the guests its drivers use, whatever an earlier boot found.
    again = {g for p in profiles for g in guest_kernels_of(p)} if names else set()
    results = preflight(workdir, need, profiles, boot=True, again=again)
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
    "what",
    type=click.Choice(["filesystems", "tasks", "suites", "machines", "options"]),
    default="filesystems",
)
@click.option(
    "--fs", "fs_list", default=None, help="With `options`: only these filesystems' options."
)
@click.option(
    "--probe",
    is_flag=True,
    help="With `options`: try each on a small image here (root): available, or why not.",
)
@click.option(
    "--workdir",
    default=DEFAULT_WORKDIR,
    show_default=True,
    help="Where small images go: --probe's, and a guest kernel's boot test.",
)
def list_(what: str, fs_list: str | None, probe: bool, workdir: str) -> None:
    """List known filesystems (and whether they run here), tasks, suites, machines, or the
    mkfs and mount options worth weighing per filesystem (what each trades, and its source)."""
    if probe and what != "options":
        raise FsarenaError("--probe tries options: `fsarena list options --probe`")
    if what == "filesystems":
        _list_filesystems(workdir)
    elif what == "options":
        _list_options(fs_names(fs_list), _probed(fs_list, workdir) if probe else None)
    elif what == "tasks":
        from fsarena.tasks import TASKS

        for name, task in TASKS.items():
            click.echo(f"{name:20} [{task.kind}] {task.describe()}")
    elif what == "machines":
        from fsarena.plan.machines import builtin_machines

        for name, machine in builtin_machines().items():
            click.echo(f"{name:16} {machine.summary()}  [{machine.article}]")
    else:
        from fsarena.plan.suite import builtin_suites

        for name, suite in builtin_suites().items():
            click.echo(f"{name:16} {suite.article}: {suite.description}")


def _probed(fs_list: str | None, workdir: str) -> dict[tuple[str, str], str]:
    """Every listed option tried here: (filesystem, option) -> "" if available, else why."""
    from fsarena.filesystems.options import ANY_FS, options_for, table
    from fsarena.run.optionprobe import probe_here

    if os.geteuid() != 0:
        raise FsarenaError("--probe makes small images, mkfs and mounts: run it as root (sudo)")
    on_stop(lambda: f"no option listed; {left_in(workdir)}")
    from fsarena.filesystems.drivers import choose

    chosen = fs_names(fs_list) or list(dict.fromkeys(o.fs for o in table() if o.fs != ANY_FS))
    wanted = [(fs, o) for fs in chosen for o in options_for(fs)]
    kernel = {fs for fs in chosen if (s := choose(fs)).available and s.profile.driver == "kernel"}
    probed = probe_here(os.path.abspath(workdir), [(fs, o) for fs, o in wanted if fs in kernel])
    found = {(p.fs, p.option): p.reason for p in probed}
    for fs, o in wanted:  # a guest's filesystem is not this kernel's to try
        found.setdefault((fs, o.name), f"not probed: {fs} does not run in this kernel here")
    return found


def _list_options(
    names: list[str] | None, probed: dict[tuple[str, str], str] | None = None
) -> None:
    """Each filesystem's options: name, what it sets, since when, what it trades, source;
    with probed, whether this kernel and mkfs took it, or the refusal's own words."""
    import shutil
    import textwrap

    from fsarena.filesystems.options import ANY_FS, options_for, table
    from fsarena.kinds import KINDS

    width = min(shutil.get_terminal_size((80, 24)).columns, 100)
    chosen = names or list(dict.fromkeys(o.fs for o in table() if o.fs != ANY_FS))
    found = {fs: options_for(fs) for fs in chosen}  # an unknown name fails before any line
    for fs, options in found.items():
        click.echo(fs)
        for o in options:
            sets = [f"mount -o {','.join(o.mount)}"] if o.mount else []
            sets += [f"mkfs {' '.join(o.mkfs)}"] if o.mkfs else []
            sets += [f"chattr {o.directory} on the data directory"] if o.directory else []
            since = f"Linux {o.since}" + (f", {o.mkfs_since}" if o.mkfs_since else "")
            kinds = ", ".join(KINDS.get(k, k) for k in o.kinds)
            click.echo(f"  {o.name} [{o.group}]: {'; '.join(sets)}; since {since}")
            lines = [o.trades, f"affects {kinds}", f"source: {o.source}"]
            if probed is not None:
                why = probed.get((fs, o.name), "")
                lines.append(f"here: {'unavailable: ' + why if why else 'available'}")
            for line in lines:
                click.echo(
                    textwrap.fill(
                        line,
                        width,
                        initial_indent="      ",
                        subsequent_indent="      ",
                        break_on_hyphens=False,
                    )
                )
        click.echo("")


def _list_filesystems(workdir: str) -> None:
    """Each filesystem, its mkfs, and every driver: available here (* = default) or why not.

    A guest kernel is available once it has booted here: one not yet booted is booted
    now (as root), beside the work directory.
    """
    from fsarena.filesystems.drivers import choose, drivers_of, guest_unavailable, unavailable
    from fsarena.filesystems.profiles import PROFILES
    from fsarena.guest.boots import kept
    from fsarena.guest.kernels import GUESTS
    from fsarena.run.preflight import existing_parent

    near = existing_parent(os.path.abspath(workdir)) if os.geteuid() == 0 else None
    told: dict[str, str] = {}  # each guest kernel's reason, told once here and referred to below
    for name, kernel in GUESTS.items():
        why = guest_unavailable(name, near)
        said = f"as {told[why]}" if why in told else why
        told.setdefault(why, name)
        record = kept(name)
        state = f"not available: {said}" if why else f"available: {record.said() if record else ''}"
        click.echo(f"guest kernel {name:5} {kernel.label}: {state}")
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


# ---------------------------------------------------------------- cleanup


@main.command()
@click.option(
    "--workdir", default=DEFAULT_WORKDIR, show_default=True, help="The run's work directory."
)
def cleanup(workdir: str) -> None:
    """Undo what a killed run (kill -9, power cut) left: only what fsarena's ledger recorded.

    Mounts, loop devices, images and processes the work directory's ledger proves
    are fsarena's; anything else there is listed and left alone.
    """
    from fsarena.host.cleanup import claims, has_record, refusal
    from fsarena.host.cleanup import cleanup as undo_ours
    from fsarena.run.launch import workdir_lock

    workdir = os.path.abspath(workdir)
    if why := refusal(workdir):  # before anything, the lock file included, is made
        raise FsarenaError(f"refusing to clean up: {why}")
    if not Path(workdir).is_dir():
        click.echo(f"nothing to clean: {workdir} does not exist")
        return
    if os.geteuid() != 0:
        raise FsarenaError("fsarena cleanup needs root (umount, losetup): run it with sudo")
    if not has_record(workdir):  # no run ever used it: nothing here can be fsarena's
        _left_alone(claims(workdir).foreign)
        click.echo(f"nothing to clean in {workdir}: no fsarena run has used it")
        return
    on_stop(lambda: f"the cleanup is not finished: {left_in(workdir)}; run it again")
    try:
        with workdir_lock(workdir):
            report = undo_ours(workdir)
    except FsarenaError as exc:
        if "another fsarena run" not in str(exc):
            raise
        raise FsarenaError(
            f"a run is using {workdir}; it cleans up after itself (stop it with Ctrl-C)"
        ) from None
    for line in report.done:
        click.echo(f"removed: {line}")
    for line in report.failed:
        click.echo(f"FAILED: {line}", err=True)
    _left_alone(report.left_alone)
    summary = f"{len(report.done)} removed, {len(report.failed)} could not be removed"
    click.echo(summary if report.done or report.failed else f"nothing to clean in {workdir}")
    if report.failed:
        sys.exit(1)


def _left_alone(found: Sequence[Foreign]) -> None:
    for item in found:
        click.echo(f"left alone, not fsarena's: {item}")


# ---------------------------------------------------------------- setup-guest


@main.command("setup-guest")
@click.option(
    "--workdir", default=DEFAULT_WORKDIR, show_default=True, help="Where its boot test runs."
)
def setup_guest(workdir: str) -> None:
    """Install the qemu guest (qemu, busybox, Debian's kernel, unpacked) and boot it once.

    The guest kernel that boots on any x86-64 CPU, for filesystems the host kernel
    lacks where no other guest boots; `fsarena run` runs this itself when it needs
    it. Each step is said with its size before it runs.
    """
    from fsarena.guest.install import install_and_boot
    from fsarena.run.preflight import existing_parent

    say = lambda line: click.echo(f"fsarena: {line}", err=True)  # noqa: E731
    record = install_and_boot(existing_parent(os.path.abspath(workdir)), say)
    if not record.booted:
        fail(f"the qemu guest was installed but {record.said()}", 1)


# ---------------------------------------------------------------- powerloss


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
@force_option
@format_option("report")
def powerloss(
    fs_list: str | None,
    states: int | None,
    workloads: str | None,
    seed: int | None,
    workdir: str,
    results_dir: str,
    output: str | None,
    force: bool,
    fmt: str,
) -> None:
    """Power-loss safety: cut the power at hundreds of points, count what survives."""
    from fsarena.filesystems.profiles import PROFILES
    from fsarena.filesystems.variants import resolve
    from fsarena.interrupt import Stop
    from fsarena.plan.model import fresh_seed
    from fsarena.powerloss.engine import DEFAULT_STATES, Options
    from fsarena.powerloss.workload import select
    from fsarena.run.launch import workdir_lock
    from fsarena.run.powerloss_session import run_powerloss
    from fsarena.session.file import claim, require_derived_free
    from fsarena.session.outputs import derived

    names = fs_names(fs_list)
    profiles = resolve(names) if names is not None else list(PROFILES.values())
    chosen = select(workloads.split(",") if workloads else None)
    if os.geteuid() != 0:
        raise FsarenaError("fsarena powerloss needs root (mkfs, mount, losetup, FUSE): use sudo")
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = Path(output) if output else Path(results_dir, f"fsarena-{stamp}-powerloss.json")
    refuse_existing(path if output else None, "session file", force)
    if not (output and force):
        path = claim(path, rename=not output)  # never another run's file (same second)
    else:
        require_derived_free(path)  # --force names the session file, not its crash states

    options = Options(
        states_cap=states or DEFAULT_STATES,
        seed=seed if seed is not None else fresh_seed(),
        workloads=tuple(chosen),
        save_to=derived(path, "-states"),
    )
    workdir = os.path.abspath(workdir)
    stop = Stop()
    try:
        with workdir_lock(workdir), stop.installed():
            session = run_powerloss(
                profiles,
                options,
                Path(workdir),
                path,
                lambda line: click.echo(f"== {line}", err=True),
            )
    except KeyboardInterrupt:
        if path.exists() and not path.stat().st_size:  # claimed, never saved in
            path.unlink()
        kept = f"results so far kept in {path}" if path.exists() else "nothing was saved"
        fail(f"interrupted by {stop.name}; {kept}; {left_in(workdir)}", stop.exit_code)
    finally:
        if path.exists() and not path.stat().st_size:  # claimed, never saved in
            path.unlink()
    from fsarena.report import render

    click.echo(render(session, fmt), nl=False)
    click.echo(f"\nsession saved: {path}", err=True)
    if any(r.status == "failed" for r in session.runs):
        sys.exit(1)


# The commands kept in modules of their own, listed by `fsarena --help` with the rest.
for _command in (run, tune, capture, report, compare, store, fleet, share):
    main.add_command(_command)
# Old spellings keep working, hidden: `crashtest` was the power-loss test's name until
# issue 27 gave the feature one word, the one a sysadmin searches for.
main.add_command(alias(powerloss, "crashtest"))
