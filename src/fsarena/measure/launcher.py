"""The command's own rusage, as the native launcher fsarena-timeit reports it.

A child forked from fsarena's Python process inherits its memory high-water
mark, so wait4's ru_maxrss for it is fsarena's. The launcher (native/timeit.c)
is forked instead; it forks and execs the command, waits for it, and writes the
command's wall time, rusage and exit status as one JSON line to a file it was
given as a close-on-exec fd. Standard library only (the guest agent imports it).
"""

from __future__ import annotations

import errno
import json
import os
import resource
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from fsarena.errors import FsarenaError
from fsarena.measure.native import find_native_tool

__all__ = ["Rusage", "find_native_tool", "launch", "outcome"]


@dataclass(frozen=True)
class Rusage:
    user_s: float = 0.0
    sys_s: float = 0.0
    minor_faults: int = 0
    major_faults: int = 0
    max_rss_kib: int | None = 0  # None once any command's is unknown
    wall_s: float | None = 0.0  # the launcher's, per command; None once any is unknown

    def add(self, ru: Rusage | None) -> Rusage:
        if ru is None:
            return self
        rss = (
            None
            if self.max_rss_kib is None or ru.max_rss_kib is None
            else max(self.max_rss_kib, ru.max_rss_kib)
        )
        wall = None if self.wall_s is None or ru.wall_s is None else self.wall_s + ru.wall_s
        return Rusage(
            self.user_s + ru.user_s,
            self.sys_s + ru.sys_s,
            self.minor_faults + ru.minor_faults,
            self.major_faults + ru.major_faults,
            rss,
            wall,
        )


def launch(argv: Sequence[str]) -> tuple[list[str], IO[bytes] | None]:
    """The argv that starts a command (through the launcher when it is built), and its report.

    The report file's fd must be passed to the child (subprocess pass_fds).
    """
    launcher = find_native_tool("timeit")
    if launcher is None:
        return list(argv), None
    report = tempfile.TemporaryFile()  # noqa: SIM115 (closed by the caller)
    return [launcher, str(report.fileno()), *argv], report


def _from_launcher(program: str, report: IO[bytes]) -> tuple[int, Rusage] | None:
    """The command's exit code and rusage as the launcher reported them; None: no report."""
    report.seek(0)
    line = report.read().strip()
    if not line:  # the launcher was killed (a timeout) before the command ended
        return None
    data = json.loads(line)
    err = int(data["exec_errno"])
    if err == errno.ENOENT:
        raise FsarenaError(f"command not found: {program}; run `fsarena check`")
    if err:
        raise FsarenaError(f"cannot execute {program}: {os.strerror(err)}")
    usage = Rusage(
        float(data["user_s"]),
        float(data["sys_s"]),
        int(data["minor_faults"]),
        int(data["major_faults"]),
        int(data["max_rss_kib"]),  # Linux: KiB
        float(data["wall_s"]),
    )
    return int(data["exit_code"]), usage


def outcome(
    program: str, report: IO[bytes] | None, status: int, ru: resource.struct_rusage
) -> tuple[int, Rusage]:
    """Exit code and rusage of one command from the launcher's report, or from wait4 itself.

    wait4's own max RSS is never used: the process it reaped was forked from fsarena
    and carries fsarena's high-water mark. Without a report, max RSS is unknown.
    """
    reported = _from_launcher(program, report) if report is not None else None
    if reported is not None:
        return reported
    usage = Rusage(ru.ru_utime, ru.ru_stime, ru.ru_minflt, ru.ru_majflt, None, None)
    return os.waitstatus_to_exitcode(status), usage
