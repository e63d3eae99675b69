"""Around a run: its session (new or resumed), the lock and signals, the reports after it."""

from __future__ import annotations

import datetime as dt
import errno
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from fsarena.cli.base import fail
from fsarena.errors import FsarenaError

if TYPE_CHECKING:  # imported where used: `fsarena --help` loads none of the run's modules
    from collections.abc import Callable

    from fsarena.host.ledger import Ledger, WorkdirUnwritable
    from fsarena.interrupt import Stop
    from fsarena.plan.model import Plan
    from fsarena.run.launch import Launch
    from fsarena.run.scope import SessionUnsaved
    from fsarena.session.file import Session


def write_reports(session: Session, path: Path, fmt: str) -> list[str]:
    """The report on stdout and the HTML beside the session; their time saved with it.

    The session is saved before this (the runner's last save): what cannot be written
    now is returned, as "what: why", for the one line that says what was kept.
    """
    from fsarena.report import build, render_comparison, write
    from fsarena.session.file import save

    started = time.monotonic()
    comparison = build(session)  # once, for both reports
    click.echo(render_comparison(comparison, fmt), nl=False)
    click.echo(f"\nsession saved: {path}", err=True)
    html_path = path.with_suffix(".html")
    lost = []
    try:
        write(session, "html", html_path, comparison)
        click.echo(f"HTML report: {html_path}", err=True)
    except OSError as exc:
        lost.append(f"HTML not written: {_why(exc)}")
    except FsarenaError as exc:  # something fsarena did not write appeared there meanwhile
        lost.append(f"HTML not written: {exc}")
    # What the next run keeps of its budget for this (run/estimate.py: report_reserve).
    session.timing.report_s = time.monotonic() - started
    try:
        save(session, path)
    except OSError as exc:  # the file keeps the runner's last save: every measurement
        lost.append(f"the reports' time not added to it: {_why(exc)}")
    return lost


def _why(exc: OSError) -> str:
    """An OS error in words a user acts on: ENOSPC is "disk full"."""
    words = {errno.ENOSPC: "disk full", errno.EDQUOT: "disk quota exceeded"}
    reason = words.get(exc.errno or 0, exc.strerror or str(exc))
    return f"{reason} ({exc.filename})" if exc.filename else reason


def _planned_runs(plan: Plan) -> int:
    """The most runs the plan can make: every round it may take, and the warm-up."""
    rounds = plan.stopping.ceiling
    return len(plan.sequences()) * len(plan.tasks) * (rounds + plan.warmup_rounds)


def _results_dirs(path: Path, results_dir: str) -> list[str]:
    """Where the session and its reports go, and where the store goes (often one directory)."""
    return list(dict.fromkeys([str(path.parent), results_dir]))


def require_results_dirs(plan: Plan, path: Path, results_dir: str) -> None:
    """Before anything is measured: the session, its reports and the store will fit."""
    from fsarena.run.preflight import check_results_dir

    for directory in _results_dirs(path, results_dir):
        found = check_results_dir(directory, _planned_runs(plan), probe=True)
        if not found.ok:
            raise FsarenaError(f"not ready to run: {found.name}: {found.detail}; fix: {found.fix}")


def claim_session(session: Session, path: Path, output: str | None, force: bool) -> Path:
    """The session's own file, saved once before the run: a new name, never another's file."""
    from fsarena.session.file import create, require_derived_free, save

    try:
        if output and force:
            require_derived_free(path)  # --force names the session file, not what is beside it
            save(session, path)  # replacing the file was asked for
            return path
        return create(session, path, rename=not output)
    except OSError as exc:
        raise FsarenaError(
            f"cannot save the session as {path}: {exc.strerror}; give a writable "
            "--results-dir (or --output)"
        ) from None


def results_lines(plan: Plan, path: Path, results_dir: str) -> list[str]:
    """The dry run's word on the results directories (asked of the kernel, nothing made)."""
    from fsarena.run.preflight import check_results_dir

    lines = []
    for directory in _results_dirs(path, results_dir):
        found = check_results_dir(directory, _planned_runs(plan), probe=False)
        short = "" if found.ok else f": NOT READY, a run would refuse to start (fix: {found.fix})"
        lines.append(f"results: {found.detail}{short}")
    return lines


def session_for(launch: Launch, path: Path, recorded: Session | None) -> Session:
    """A new session, or the resumed one after checking nothing it depends on changed."""
    from fsarena.run.new_session import new_session
    from fsarena.run.preflight import host_facts, tool_versions
    from fsarena.run.resume import check_unchanged
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
    launch: Launch,
    session: Session,
    path: Path,
    quiet: bool,
    reserve_s: float,
    first: bool,
    stop: Stop,
    then: Callable[[], list[str]] = list,
) -> list[str]:
    """The run itself, under the work directory's lock, stopped cleanly by a signal (stop's);
    then `then` (the reports: what it returns, what they could not write), while the
    executor ends what it left running in the background (the spare image's deletion)."""
    from fsarena.cli.progress import RunProgress
    from fsarena.host.cleanup import claims
    from fsarena.host.ledger import Ledger, WorkdirUnwritable
    from fsarena.interrupt import checkpoint
    from fsarena.machines.run import executor_for
    from fsarena.run.launch import refuse_leftovers, workdir_lock
    from fsarena.run.runner import Runner
    from fsarena.run.scope import SessionUnsaved

    plan = launch.plan
    ledger = Ledger(plan.workdir)
    with workdir_lock(plan.workdir), stop.installed():
        found = claims(plan.workdir)
        refuse_leftovers(found)  # again, under the lock the run now holds
        for item in found.foreign:
            if item.advice:  # the work directory's own filesystem needs no word
                click.echo(f"fsarena: note: not fsarena's, left alone: {item}", err=True)
        ledger.mark_children()
        os.environ["LC_MESSAGES"] = "C"  # tools' errors in English, as faults.py reads them
        progress = RunProgress(plan, sys.stderr, "quiet" if quiet else "auto")

        def say(line: str) -> None:
            if not quiet:
                click.echo(f"fsarena: {line}", err=True)

        try:
            checkpoint()  # a stop held while the run was planned (in a finaliser)
            with executor_for(plan, ledger, session, say) as executor:
                runner = Runner(
                    plan, executor, session, path, launch.source_kind, progress,
                    unavailable=launch.unavailable, reserve_s=reserve_s,
                    first_estimate=first or None,
                )  # fmt: skip
                with progress:
                    runner.run()
                return then()
        except KeyboardInterrupt:
            fail(_interrupted(session, path, stop.name, ledger), stop.exit_code)
        except SessionUnsaved as exc:
            fail(_unsaved(exc, ledger))
        except WorkdirUnwritable as exc:
            fail(_workdir_unwritable(exc, session, path, ledger))
        finally:
            _report_leftovers(ledger, plan.workdir)


def _interrupted(session: Session, path: Path, name: str, ledger: Ledger) -> str:
    kept = sum(r.status == "ok" for r in session.runs)
    state = _left(ledger)
    if not path.exists():  # stopped before the first save (e.g. while probing a machine)
        return f"interrupted by {name} before anything was measured; {state}; start it again"
    return (
        f"interrupted by {name}; {kept} measurements kept in {path}; {state}; "
        f"continue with `fsarena run --resume {path}`"
    )


def _unsaved(exc: SessionUnsaved, ledger: Ledger) -> str:
    """A results directory that filled (or went read-only) mid-run: what the file kept."""
    return (
        f"the session could not be saved: {_why(exc.error)}; {exc.path} keeps its last "
        f"save ({exc.kept_runs} measurements); {_left(ledger)}; make room in {exc.path.parent}, "
        f"then continue with `fsarena run --resume {exc.path}`"
    )


def _workdir_unwritable(
    exc: WorkdirUnwritable, session: Session, path: Path, ledger: Ledger
) -> str:
    """A work directory that filled (or went read-only) mid-run: what was kept, what to do."""
    kept = sum(r.status == "ok" for r in session.runs)
    failed = f": {_why(exc.error)}" if exc.error is not None else ""
    fix = "make it writable" if "read-only" in exc.why else f"make room in {exc.workdir}"
    return (
        f"{exc.why}{failed}; {kept} measurements kept in {path}; {_left(ledger)}; {fix}, "
        f"then continue with `fsarena run --resume {path}`"
    )


def _left(ledger: Ledger) -> str:
    """What the run's teardown could not undo, in its own words (the ledger's truth)."""
    left = ", ".join(str(e) for e in ledger.entries())
    return f"left behind: {left}" if left else "nothing left mounted or attached"


def _report_leftovers(ledger: Ledger, workdir: str) -> None:
    ledger.flush()  # a state file the full work directory could not take, now it can
    entries = ledger.entries()
    if entries:
        click.echo(
            f"fsarena: warning: could not undo {', '.join(str(e) for e in entries)}; "
            f"run `fsarena cleanup --workdir {workdir}`",
            err=True,
        )
