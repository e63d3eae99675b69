"""`fsarena fleet run` and `fsarena fleet report`: one plan on many hosts, compared per host."""

from __future__ import annotations

import datetime as dt
import signal
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from fsarena import build_identity
from fsarena.cli.args import format_option, output_options, refuse_existing
from fsarena.cli.base import DEFAULT_RESULTS, fail, on_stop
from fsarena.cli.store import import_into_default_store
from fsarena.plan import DEFAULT_SUITE


@click.group()
def fleet() -> None:
    """The same comparison on many hosts (Ansible), and the report across them."""


@fleet.command("report")
@click.argument(
    "session_paths", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path)
)
@click.option(
    "--baseline", default=None, help="Each host's reference filesystem (default: the plan's first)."
)
@click.option("--metric", default="wall_s", show_default=True, help="The metric compared.")
@format_option("fleet")
@output_options()
@click.option(
    "--allow-same-machine", is_flag=True, help="Merge sessions that share a machine-id (tests)."
)
def fleet_report(
    session_paths: tuple[Path, ...],
    baseline: str | None,
    metric: str,
    fmt: str,
    output: Path | None,
    force: bool,
    allow_same_machine: bool,
) -> None:
    """Hosts x filesystems: each filesystem's ratio to the baseline on the same host."""
    from fsarena.cli.reports import write_text
    from fsarena.fleet.merge import build, load_hosts
    from fsarena.fleet.render import render

    refuse_existing(output, "fleet report", force)
    on_stop(lambda: "no file half-written: each is written whole, or not at all")
    hosts, warnings = load_hosts(list(session_paths), allow_same_machine)
    text = render(build(hosts, baseline, metric, warnings), fmt)
    if output is None:
        click.echo(text, nl=False)
        return
    write_text(output, text, "fleet report", force)
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
@format_option("fleet")
@click.option("--allow-same-machine", is_flag=True, help="Hosts may share a machine-id (tests).")
def fleet_run(**opts: Any) -> None:
    """Run the same plan on every host of an Ansible inventory; fetch and compare the sessions."""
    import random

    from fsarena.fleet.run import FleetRun, StopRequests, execute

    seed = opts["seed"] if opts["seed"] is not None else random.randrange(2**31)
    args = ["--suite", opts["suite"], "--seed", str(seed)]
    for flag, key in (("--fs", "fs_list"), ("-n", "repetitions"), ("--scale", "scale"),
                      ("--task-timeout", "task_timeout")):  # fmt: skip
        if opts[key] is not None:
            args += [flag, str(opts[key])]
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    fetch = Path(opts["results_dir"], f"fleet-{stamp}")
    run = FleetRun(opts["inventory"], args, fetch, build_identity(),
                   opts["limit"], opts["forks"], opts["become"])  # fmt: skip
    with StopRequests().installed() as stop:
        execute(run, lambda line: click.echo(f"fsarena: {line}", err=True), stop)
    if run.stopped_by:
        _fleet_stopped(run, fetch)
    _fleet_summary(run, fetch, opts)


def _fleet_stopped(run: Any, fetch: Path) -> NoReturn:
    """The one line after a stop signal, and the exit code of an interrupted run (128 + N)."""
    from fsarena.session.file import session_files

    name = signal.Signals(run.stopped_by).name
    fetched = [p.name for p in session_files(fetch)]
    kept = f"{len(fetched)} sessions as far as they got ({', '.join(fetched)}) in {fetch}" if (
        fetched) else f"no session fetched into {fetch}"  # fmt: skip
    if run.stop_s is None:
        fail(f"interrupted ({name}) before any host was contacted; {kept}", 128 + run.stopped_by)
    if run.stop_failed:
        fail(f"interrupted ({name}); stop or cleanup failed on {', '.join(run.stop_failed)}: run "
             f"`fsarena cleanup --workdir` there; {kept}", 128 + run.stopped_by)  # fmt: skip
    fail(f"interrupted ({name}); every host's run stopped and cleaned up; {kept}",
         128 + run.stopped_by)  # fmt: skip


def _fleet_summary(run: Any, fetch: Path, opts: dict[str, Any]) -> None:
    from fsarena.fleet.merge import build, load_hosts
    from fsarena.fleet.render import render
    from fsarena.session.file import session_files

    click.echo(f"fsarena: fleet wall time {run.wall_s:.1f} s", err=True)
    for name, host in sorted(run.hosts.items()):
        first = f"{host.first_task_s:.1f} s" if host.first_task_s is not None else "never"
        state = f"FAILED: {host.failed}" if host.failed else "ok"
        click.echo(f"fsarena: {name}: first task after {first}; {state}", err=True)
    sessions = session_files(fetch)
    for path in sessions:
        import_into_default_store(path, opts["results_dir"])
    if len(sessions) < 2:
        fail(f"only {len(sessions)} host sessions fetched into {fetch}: no fleet to compare", 1)
    hosts, warnings = load_hosts(sessions, opts["allow_same_machine"])
    report = build(hosts, opts["baseline"], "wall_s", warnings)
    click.echo(render(report, opts["fmt"]), nl=False)
    if any(h.failed for h in run.hosts.values()):
        sys.exit(1)


# What the playbooks run on each host (fleet/host.py): not for users, hidden from --help.


@fleet.command("host-run", hidden=True, context_settings={"ignore_unknown_options": True})
@click.option("--results", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--stamp", required=True, help="The fleet run this run belongs to.")
@click.argument("argv", nargs=-1, required=True, type=click.UNPROCESSED)
def fleet_host_run(results: Path, stamp: str, argv: tuple[str, ...]) -> None:
    """`fsarena ARGV`, recorded in RESULTS/fleet.pid with its start time for a stop to check."""
    from fsarena.fleet.host import run_recorded

    sys.exit(run_recorded(results, stamp, list(argv)))


@fleet.command("host-stop", hidden=True)
@click.option("--results", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--stamp", required=True, help="The fleet run to stop.")
@click.option("--wait", "wait_s", type=float, default=120.0, show_default=True)
def fleet_host_stop(results: Path, stamp: str, wait_s: float) -> None:
    """Stop the run RESULTS/fleet.pid records, only if its start time proves it is that run."""
    from fsarena.fleet.host import stop_recorded

    outcome = stop_recorded(results, stamp, wait_s)
    click.echo(outcome.to_json())
    sys.exit(0 if outcome.stopped else 1)
