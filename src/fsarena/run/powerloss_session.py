"""`fsarena powerloss`: the negative control, then each filesystem, saved as a session.

The session is an ordinary one (task `powerloss`, kind `safety`): one run per
filesystem with its figures in Run.values and every crash state in
Run.details, the control as a run of its own, filesystems the host cannot
test as skipped runs with the reason. It is saved after every filesystem.
"""

from __future__ import annotations

from pathlib import Path

from fsarena.filesystems.profiles import POWERLOSS_CONTROL, FilesystemProfile
from fsarena.interrupt import checkpoint
from fsarena.plan.model import Plan
from fsarena.powerloss.engine import (
    ControlFailed,
    Options,
    Progress,
    control_figures,
    control_refusal,
    run_control,
    scratch,
    test_filesystem,
    testable,
)
from fsarena.powerloss.recorder import image_size
from fsarena.powerloss.results import PowerlossDetails, filesystem_values
from fsarena.run.events import now
from fsarena.run.new_session import new_session
from fsarena.run.preflight import host_facts, tool_versions
from fsarena.session.file import Run, Session, save
from fsarena.session.records import ProfileRecord

TASK = "powerloss"


def make_session(profiles: list[FilesystemProfile], options: Options, workdir: Path) -> Session:
    plan = Plan(
        suite="crashtest",  # stored: older sessions and stores name it so (PlanRecord.crashtest)
        filesystems=[p.name for p in profiles],
        tasks=[TASK],
        repetitions=1,
        scale=1.0,
        seed=options.seed,
        workdir=str(workdir),
    )
    tools = tool_versions([*profiles, POWERLOSS_CONTROL])
    session = new_session(plan, host_facts(str(workdir)), tools)
    session.plan.filesystems = [POWERLOSS_CONTROL.name, *plan.filesystems]
    session.plan.crashtest = {
        "states_cap": options.states_cap,
        "seed": options.seed,
        "workloads": {w.name: w.description for w in options.workloads},
        "control": POWERLOSS_CONTROL.name,
    }
    for p in [POWERLOSS_CONTROL, *profiles]:
        session.profiles_as_run[p.name] = ProfileRecord.model_validate(
            {**p.to_dict(), "image_size_bytes": image_size(p)}
        )
    return session


def run_powerloss(
    profiles: list[FilesystemProfile],
    options: Options,
    workdir: Path,
    path: Path,
    progress: Progress,
) -> Session:
    """Run everything, saving after each filesystem; ControlFailed when the control lost nothing."""
    session = make_session(profiles, options, workdir)
    save(session, path)
    try:
        for profile in profiles:
            reason = testable(profile)
            if reason:
                _skip(session, profile, reason, path)
        with scratch(workdir) as area:
            progress(f"negative control: {POWERLOSS_CONTROL.name} (must lose fsync'ed data)")
            control = run_control(area, options, progress)
            details = PowerlossDetails(
                filesystem=POWERLOSS_CONTROL.name,
                seed=options.seed,
                states_cap=options.states_cap,
                workloads=[control],
                control=control_figures(control),
            )
            _record(session, path, _run(POWERLOSS_CONTROL.name, details, now()))
            refusal = control_refusal(control)
            if refusal:
                session.warn("control-failed", refusal)
                raise ControlFailed(f"{refusal}; the raw outcomes are in {path}")
            for profile in profiles:
                if not testable(profile):
                    started = now()
                    details = test_filesystem(profile, area, options, progress)
                    details.control = control_figures(control)
                    _record(session, path, _run(profile.name, details, started))
        checkpoint()  # a signal whose exception was lost ends the run as one raised
        session.status = "complete"
    except KeyboardInterrupt:
        session.status = "interrupted"
        raise
    except BaseException:
        session.status = "failed"
        raise
    finally:
        session.finished_at = now()
        save(session, path)
    return session


def _run(filesystem: str, details: PowerlossDetails, started: str) -> Run:
    values = filesystem_values(details.workloads)
    errors = [f"{w.workload}: {w.status}: {w.error}" for w in details.workloads if w.error]
    return Run(
        filesystem=filesystem,
        task=TASK,
        repetition=1,
        started_at=started,
        status="ok" if values else "failed",
        error="; ".join(errors),
        values=values,
        details=details.model_dump(mode="json"),
    )


def _skip(session: Session, profile: FilesystemProfile, reason: str, path: Path) -> None:
    message = f"{profile.name} is not testable here: {reason}"
    session.warn("filesystem-not-testable", message)
    _record(
        session,
        path,
        Run(
            filesystem=profile.name,
            task=TASK,
            repetition=1,
            started_at=now(),
            status="skipped",
            error=f"not testable here: {reason}",
        ),
    )


def _record(session: Session, path: Path, run: Run) -> None:
    session.runs.append(run)
    save(session, path)
