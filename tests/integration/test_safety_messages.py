"""Messages of failed helpers say why (issue 24, finding 7): the kernel's reason, no usage text."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsarena.errors import FsarenaError
from fsarena.host.executor import RealExecutor


@pytest.fixture
def blank_loop(workdir: Path) -> Iterator[str]:
    """A loop device on a zeroed image: no filesystem on it."""
    image = workdir / "blank.img"
    subprocess.run(["truncate", "-s", "64M", str(image)], check=True)
    device = subprocess.run(
        ["losetup", "--find", "--show", str(image)], check=True, capture_output=True, text=True
    ).stdout.strip()
    yield device
    subprocess.run(["losetup", "-d", device], check=False)


def test_a_failed_mount_shows_the_kernels_reason(workdir: Path, blank_loop: str) -> None:
    mnt = workdir / "mnt"
    mnt.mkdir()
    with pytest.raises(FsarenaError) as failed:
        RealExecutor().call(["mount", "-t", "ext4", blank_loop, str(mnt)])
    name = Path(blank_loop).name
    assert f"the kernel said: EXT4-fs ({name}): VFS: Can't find ext4 filesystem" in str(
        failed.value
    )


def test_a_usage_text_is_not_the_message(blank_loop: str) -> None:
    with pytest.raises(FsarenaError) as failed:
        RealExecutor().call(["mkfs.xfs", "-Z", blank_loop])
    message = str(failed.value)
    assert "unknown option -Z" in message and "Usage" not in message and "/*" not in message
