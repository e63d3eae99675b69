"""The spare image: a retired loop image is reset to a new image's state and taken by the next.

Real files and the real `fallocate` (no root needed: the images are plain files).
Where the temporary directory's filesystem cannot zero a range (a tmpfs), retiring
deletes the image, as every teardown did before: both ways are checked.
"""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest

from fsarena.host.executor import SPARE_IMAGE, RealExecutor
from fsarena.host.ledger import Entry, Ledger

SIZE = 8 << 20


def _zero_range_works(where: Path) -> bool:
    probe = where / "probe"
    probe.write_bytes(b"x" * 8192)
    done = subprocess.run(
        ["fallocate", "--zero-range", "--length", "8192", str(probe)],
        capture_output=True,
        check=False,
    )
    probe.unlink()
    return done.returncode == 0


def _allocated(path: Path) -> int:
    return os.stat(path).st_blocks * 512


def _used(ex: RealExecutor, path: Path) -> None:
    """What a filesystem leaves in an image: data here and there."""
    with open(path, "r+b") as f:
        for offset in (0, SIZE // 3, SIZE - 4096):
            f.seek(offset)
            f.write(os.urandom(4096))


def test_a_retired_image_is_the_next_targets_new_image(tmp_path: Path) -> None:
    if not _zero_range_works(tmp_path):
        pytest.skip("this filesystem cannot zero a range: see the deleting test below")
    book = Ledger(str(tmp_path))
    ex = RealExecutor(ledger=book)
    images = tmp_path / "images"
    first = images / "ext4-r1.img"
    ex.create_image(str(first), SIZE)
    _used(ex, first)
    ex.retire_image(str(first))
    spare = images / SPARE_IMAGE
    assert not first.exists() and spare.exists()
    # The ledger names the spare, so `fsarena cleanup` removes it after a crash.
    assert book.entries() == [Entry("image", str(spare))]
    second = images / "xfs-r1.img"
    ex.create_image(str(second), SIZE)
    assert not spare.exists()
    assert book.entries() == [Entry("image", str(second))]
    # As create_image makes a new one: its size, every block allocated, all zeros.
    assert second.stat().st_size == SIZE
    assert _allocated(second) >= SIZE
    assert second.read_bytes() == bytes(SIZE)
    ex.retire_image(str(second))
    ex.remove_spare_image()
    assert list(images.iterdir()) == [] and book.entries() == []


def test_a_spare_of_another_size_is_deleted_not_kept_beside_a_new_image(tmp_path: Path) -> None:
    if not _zero_range_works(tmp_path):
        pytest.skip("this filesystem cannot zero a range: nothing is kept")
    ex = RealExecutor(ledger=Ledger(str(tmp_path)))
    images = tmp_path / "images"
    ex.create_image(str(images / "a.img"), SIZE)
    ex.retire_image(str(images / "a.img"))
    ex.create_image(str(images / "b.img"), 2 * SIZE)
    # Never more images at once than before: the odd-sized spare went first.
    assert sorted(p.name for p in images.iterdir()) == ["b.img"]
    assert (images / "b.img").stat().st_size == 2 * SIZE


def test_retiring_never_replaces_a_spare_it_did_not_make(tmp_path: Path) -> None:
    ex = RealExecutor(ledger=Ledger(str(tmp_path)))
    images = tmp_path / "images"
    images.mkdir()
    theirs = images / SPARE_IMAGE
    theirs.write_bytes(b"an earlier run's file")
    ex.create_image(str(images / "a.img"), SIZE)
    ex.retire_image(str(images / "a.img"))
    assert theirs.read_bytes() == b"an earlier run's file"  # untouched
    assert not (images / "a.img").exists()  # deleted instead
    assert ex.spare is None
    ex.remove_spare_image()
    assert theirs.exists()


def test_retiring_deletes_where_the_host_cannot_zero_a_range(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fallocate that refuses --zero-range, as on a tmpfs.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "fallocate"
    fake.write_text(
        '#!/bin/sh\ncase "$*" in *--zero-range*) echo "fallocate: not supported" >&2; exit 1;;\n'
        'esac\nexec /usr/bin/fallocate "$@"\n'
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    book = Ledger(str(tmp_path))
    ex = RealExecutor(ledger=book)
    image = tmp_path / "images" / "a.img"
    ex.create_image(str(image), SIZE)
    ex.retire_image(str(image))
    assert not image.exists() and ex.spare is None and book.entries() == []


def _with_spare(tmp_path: Path, background: bool) -> tuple[RealExecutor, Ledger, Path]:
    if not _zero_range_works(tmp_path):
        pytest.skip("this filesystem cannot zero a range: no spare is kept")
    book = Ledger(str(tmp_path))
    ex = RealExecutor(ledger=book, background_removal=background)
    image = tmp_path / "images" / "a.img"
    ex.create_image(str(image), SIZE)
    _used(ex, image)
    ex.retire_image(str(image))
    return ex, book, tmp_path / "images" / SPARE_IMAGE


def _held_unlink(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """os.unlink held until the returned event is set: the deletion waits in its thread."""
    release = threading.Event()
    unlink = os.unlink

    def held(path: str) -> None:
        assert release.wait(10), "the test never let the deletion go on"
        unlink(path)

    monkeypatch.setattr(os, "unlink", held)
    return release


def test_the_spare_deleted_in_the_background_stays_in_the_ledger_until_settled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The run's end starts the deletion (0.5 s of freed blocks on a used image) and goes
    # on with its reports; until settle() has seen the file gone, the ledger names it, so
    # a crash in between leaves it to `fsarena cleanup`, never unrecorded.
    ex, book, spare = _with_spare(tmp_path, background=True)
    release = _held_unlink(monkeypatch)
    ex.remove_spare_image()  # returns at once: the deletion waits in its thread
    assert spare.exists() and book.entries() == [Entry("image", str(spare))]
    release.set()
    ex.settle()
    assert not spare.exists() and book.entries() == []
    ex.settle()  # nothing left to wait for: a no-op


def test_a_spare_that_could_not_be_deleted_stays_in_the_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ex, book, spare = _with_spare(tmp_path, background=True)

    def refused(path: str) -> None:
        raise PermissionError(1, "Operation not permitted", path)

    monkeypatch.setattr(os, "unlink", refused)
    ex.remove_spare_image()
    ex.settle()
    assert spare.exists() and book.entries() == [Entry("image", str(spare))]


def test_without_background_removal_the_spare_is_gone_when_the_call_returns(
    tmp_path: Path,
) -> None:
    # Every executor but the CLI run's (machines.run.executor_for): nobody settles them.
    ex, book, spare = _with_spare(tmp_path, background=False)
    ex.remove_spare_image()
    assert not spare.exists() and book.entries() == []


def test_a_stop_while_settling_waits_for_the_deletion_then_is_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ctrl-C during the reports: the run's executor settles as its block unwinds. The
    # stop must not cut the wait short, or the ledger would name a file already gone
    # (or about to be): it is raised once the deletion is seen done and untracked.
    import signal

    from fsarena.interrupt import Stop

    ex, book, spare = _with_spare(tmp_path, background=True)
    release = _held_unlink(monkeypatch)
    ex.remove_spare_image()
    threading.Timer(0.1, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    threading.Timer(0.4, release.set).start()
    with Stop().installed(), pytest.raises(KeyboardInterrupt):
        ex.settle()
    assert not spare.exists() and book.entries() == []
