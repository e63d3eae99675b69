"""Faults as data: what a failed run's error text means, as a short code and a plain reason.

A failed task is recorded on its run, never raised: the run keeps the tool's
own words (its stderr's last lines) and gains a code a report can group by and
a sentence that says what happened and what to do. Patterns are the messages
of coreutils, util-linux and the mkfs tools (C locale, which fsarena sets for
its children); an unknown message keeps the code "error".
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fault:
    code: str
    patterns: tuple[str, ...]  # lower-case substrings of the error text
    reason: str  # what it means and what to do


# First match wins: the most specific causes come first.
FAULTS: tuple[Fault, ...] = (
    Fault(
        "enospc",
        ("no space left on device", "enospc"),
        "ENOSPC: the target is too small for the data; give a bigger --image-size "
        "(or device), or a smaller --scale",
    ),
    Fault(
        "timeout",
        ("timed out after",),
        "the task exceeded --task-timeout and was killed",
    ),
    Fault(
        "missing-tool",
        ("command not found", "not found: apt-get"),
        "a tool is missing; `fsarena check` says which package provides it",
    ),
    Fault(
        "unsupported",
        ("unknown filesystem type", "filesystem unavailable"),
        "this kernel or host cannot run the filesystem; `fsarena check` says why",
    ),
    # Before "mount": umount's own messages ("umount: /w/mnt/ext4: target is busy.")
    # contain "mount: ", and a failed unmount is not a failed mount.
    Fault(
        "umount",
        ("`umount ", "umount: "),
        "unmounting the filesystem failed: a process still used it",
    ),
    Fault(
        "mount",
        ("`mount ", "mount: ", "wrong fs type", "mounted"),
        "mounting the filesystem failed",
    ),
    # A memory cgroup fsarena sized (bonnie++'s RAM rule, fio's and PostgreSQL's page
    # cache): the limit is the scale's, so a larger --scale gives it room.
    Fault(
        "oom",
        ("out-of-memory killer",),
        "the kernel's out-of-memory killer stopped the task in the memory cgroup fsarena "
        "gave it; run with a larger --scale",
    ),
    Fault("verify", ("verification failed",), "the task ran but its result was wrong"),
    Fault("exit", ("exit code",), "the task's command exited with an error"),
)


def classify(error: str) -> Fault | None:
    """The known fault an error text describes, if any."""
    text = error.lower()
    for fault in FAULTS:
        if any(p in text for p in fault.patterns):
            return fault
    return None


def unexplained(error: str, code: str) -> str:
    """The error text without the reason explain() put before it (the tool's own words)."""
    reason = next((f.reason for f in FAULTS if f.code == code), "")
    return error.removeprefix(f"{reason}: ") if reason else error


def explain(error: str) -> tuple[str, str]:
    """(code, error text prefixed with its plain reason) for a failed run."""
    fault = classify(error)
    if fault is None:
        return "error", error
    return fault.code, f"{fault.reason}: {error}"
