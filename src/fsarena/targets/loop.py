"""Loop-image targets: a preallocated file per filesystem, direct I/O asked, never left behind."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from fsarena.errors import FsarenaError
from fsarena.host.executor import Executor
from fsarena.interrupt import whole


@dataclass
class LoopTarget:
    """An image attached as a loop device; safe: it can destroy nothing but itself.

    Preallocated on the host and discard turned off (RealExecutor.create_image,
    keep_allocated); direct I/O is asked of losetup, and what the kernel granted is
    read back before every timed run (measure.core.read_loop_state), never assumed.
    """

    image: str
    size_bytes: int
    device: str | None = None
    restore_from: str | None = None  # an aged filesystem's snapshot, copied in place of mkfs
    created: bool = False  # the image exists because this target made it
    # Retire the image at teardown (Host.retire_image) rather than delete it: only for a
    # caller that removes the spare at its end (the Runner, after its last round).
    recycle: bool = False

    kind = "loop-image"

    def setup(self, executor: Executor) -> str:
        """The image made (or restored) and attached; a stop meanwhile leaves nothing that
        teardown does not remove (create_image removes what it made itself)."""
        if self.restore_from is None:
            with whole():  # made and ours at once: a stop between the two left it behind
                executor.create_image(self.image, self.size_bytes)  # refuses an existing file
                self.created = True
        else:
            executor.make_dir(str(Path(self.image).parent))
            if executor.exists(self.image):
                raise FsarenaError(
                    f"{self.image} exists and this run did not make it; remove it or "
                    "choose another --workdir"
                )
            with whole():  # recorded and ours at once: teardown deletes a half-made copy
                executor.track("image", self.image)  # `fsarena cleanup` removes it after a crash
                self.created = True
            executor.copy_image(self.restore_from, self.image)
            # Its holes allocated too, as a new image's are (create_image): the aged
            # repetition's timed writes must not allocate on the host either. Where the
            # host cannot, the runs' read-back (loop_allocated_pct) shows the holes.
            with contextlib.suppress(FsarenaError):
                executor.call(("fallocate", "--length", str(self.size_bytes), self.image))
        self.created = True
        try:
            self.device = executor.attach_loop(self.image)
        except BaseException:
            self.teardown(executor)
            raise
        return self.device

    def teardown(self, executor: Executor) -> None:
        """Detach and retire what setup made (never an earlier run's image); callable again.

        With recycle, a made image is retired: reset to a new image's state and kept for
        the next target of its size (Host.retire_image), cheaper than deleting it and
        allocating another. Otherwise, or restored (an aged snapshot's copy), deleted.
        """
        if self.device is not None:
            executor.detach_loop(self.device)
            self.device = None
        if self.created:
            if self.recycle and self.restore_from is None:
                executor.retire_image(self.image)
            else:
                executor.remove_path(self.image)
            self.created = False

    def describe(self) -> dict[str, object]:
        return {"kind": self.kind, "size_bytes": self.size_bytes}
