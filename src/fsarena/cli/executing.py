"""Around a run: its session (new or resumed), the lock and signals, the reports after it."""

from __future__ import annotations

import datetime as dt
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from fsarena.cli.base import fail

if TYPE_CHECKING:  # imported where used: `fsarena --help` loads none of the run's modules
    from fsarena.measure.ledger import Ledger
    from fsarena.run.launch import Launch
    from fsarena.session.file import Session


def write_reports(session: Session, path: Path, fmt: str) -> None:
    """The report on stdout and the HTML beside the session; their time saved with it."""
    from fsarena.report import build, render_comparison, write
    from fsarena.session.file import save

    started = time.monotonic()
    comparison = build(session)  # once, for both reports
    click.echo(render_comparison(comparison, fmt), nl=False)
    click.echo(f"\nsession saved: {path}", err=True)
    html_path = path.with_suffix(".html")
    write(session, "html", html_path, comparison)
    click.echo(f"HTML report: {html_path}", err=True)
    # What the next run keeps of its budget for this (run/estimate.py: report_reserve).
    session.timing.report_s = time.monotonic() - started
    save(session, path)


def session_for(launch: Launch, path: Path, recorded: Session | None) -> Session:
    """A new session, or the resumed one after checking nothing it depends on changed."""
    from fsarena.run.preflight import host_facts, tool_versions
    from fsarena.run.resume import check_unchanged
    from fsarena.run.sessions import new_session
    from fsarena.session.records import TargetRecord

    plan = launch.plan
    tasks = [plan.task_class(name) for name in plan.tasks]
    fresh = new_session(plan, host_facts(plan.workdir), tool_versions(plan.profiles(), tasks))
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


def execute(
    launch: Launch, session: Session, path: Path, quiet: bool, reserve_s: float, first: bool
) -> None:
    """The run itself, under the work directory's lock, stopped cleanly by a signal."""
    from fsarena.cli.progress import RunProgress
    from fsarena.machines.run import executor_for
    from fsarena.measure.ledger import Ledger, leftovers
    from fsarena.run.launch import Stop, workdir_lock
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
                    unavailable=launch.unavailable, reserve_s=reserve_s,
                    first_estimate=first or None,
                )  # fmt: skip
                with progress:
                    runner.run()
        except KeyboardInterrupt:
            fail(_interrupted(session, path, stop.name, ledger), stop.exit_code)
        finally:
            _report_leftovers(ledger, plan.workdir)


def _interrupted(session: Session, path: Path, name: str, ledger: Ledger) -> str:
    kept = sum(r.status == "ok" for r in session.runs)
    left = ", ".join(str(e) for e in ledger.entries())
    state = f"left behind: {left}" if left else "nothing left mounted or attached"
    if not path.exists():  # stopped before the first save (e.g. while probing a machine)
        return f"interrupted by {name} before anything was measured; {state}; start it again"
    return (
        f"interrupted by {name}; {kept} measurements kept in {path}; {state}; "
        f"continue with `fsarena run --resume {path}`"
    )


def _report_leftovers(ledger: Ledger, workdir: str) -> None:
    entries = ledger.entries()
    if entries:
        click.echo(
            f"fsarena: warning: could not undo {', '.join(str(e) for e in entries)}; "
            f"run `fsarena cleanup --workdir {workdir}`",
            err=True,
        )
