"""Faults as data: a failed run's error text gets a code and a plain reason."""

from __future__ import annotations

import pytest

from fsarena.run.faults import explain


@pytest.mark.parametrize(
    ("error", "code"),
    [
        ("exit code 1: cp: error writing '/m/iso1/image.iso': No space left on device", "enospc"),
        ("timed out after 30 s", "timeout"),
        ("command not found: mkfs.jfs; run `fsarena check`", "missing-tool"),
        ("filesystem unavailable: the running kernel has no jfs", "unsupported"),
        ("exit code 32: mount: /m: unknown filesystem type 'jfs'.", "unsupported"),
        ("exit code 32: mount: /m: wrong fs type, bad option", "mount"),
        ("verification failed: copy of tree intact: missing: d001/f1.pdf", "verify"),
        ("exit code 2: find: '/m/tree1': No such file or directory", "exit"),
        ("something nobody foresaw", "error"),
    ],
)
def test_codes(error: str, code: str) -> None:
    got, text = explain(error)
    assert got == code
    assert text.endswith(error), "the tool's own words are kept"


def test_enospc_says_what_to_do() -> None:
    _, text = explain("exit code 1: cp: No space left on device")
    assert text.startswith("ENOSPC: the target is too small") and "--image-size" in text
