"""A failed guest boot is told by the line that explains it, from real captured console logs."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsarena.guest.console import explain

LOGS = Path(__file__).parents[1] / "fixtures" / "guest-console"
PANIC_INIT = "Kernel panic - not syncing: Attempted to kill init!"


@pytest.mark.parametrize(
    ("log", "cause"),
    [
        # The checkout's venv hidden by a tmpfs over /tmp (issue 11): init's exec fails.
        (
            "uml-venv-hidden.log",
            "/var/tmp/tmpxqv6cst4/run/init: 9: exec: "
            "/tmp/i11a-clone.n4wV/fsarena/.venv/bin/python: not found "
            f"(then: {PANIC_INIT} exitcode=0x00007f00)",
        ),
        # An interpreter that has no fsarena.
        (
            "uml-agent-not-importable.log",
            "/usr/bin/python3: Error while finding module specification for "
            "'fsarena.guest.agent' (ModuleNotFoundError: No module named 'fsarena') "
            f"(then: {PANIC_INIT} exitcode=0x00000100)",
        ),
        # The agent died with a traceback: its last line, not the stack dump after the panic.
        (
            "uml-agent-traceback.log",
            "FileNotFoundError: [Errno 2] No such file or directory: "
            f"'/nonexistent/config.json' (then: {PANIC_INIT} exitcode=0x00000100)",
        ),
        # The kernel could not start init at all: the panic says why itself.
        (
            "uml-init-missing.log",
            "Kernel panic - not syncing: Requested init /var/tmp/tmpu7oz0zso/run/init "
            "failed (error -2).",
        ),
    ],
)
def test_the_line_that_explains_a_failed_boot_is_quoted(log: str, cause: str) -> None:
    assert explain((LOGS / log).read_text()) == cause


def test_without_a_panic_the_last_line_naming_an_error_is_quoted() -> None:
    # In the form of qemu's console (printk timestamps) when the initramfs cannot reach the
    # host's root; written here, not captured: qemu is not installed on the test machine.
    log = (
        "[    0.000000] Linux version 6.1.0-28-amd64\n"
        "fsarena initramfs: cannot load 9pnet_virtio\n"
        "mount: mounting hostroot on /newroot failed: No such device\n"
        "[    1.523000] reboot: Power down\n"
    )
    assert explain(log) == "fsarena initramfs: cannot load 9pnet_virtio"


def test_boot_noise_and_stack_dumps_are_never_the_cause() -> None:
    log = (LOGS / "uml-agent-traceback.log").read_text()
    noise_only = "\n".join(x for x in log.splitlines()[:3])  # SELinux, mmapper_init
    assert explain(noise_only) == ""
    assert explain("") == ""
