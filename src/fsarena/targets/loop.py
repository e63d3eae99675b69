"""Loop-image targets: a sparse file per filesystem, attached with direct I/O, always removed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fsarena.errors import FsarenaError
from fsarena.measure.executor import Executor


@dataclass
class LoopTarget:
    """A sparse image attached as a loop device; safe: it can destroy nothing but itself."""

    image: str
    size_bytes: int
    device: str | None = None
    restore_from: str | None = None  # an aged filesystem's snapshot, copied in place of mkfs
    created: bool = False  # the image exists because this target made it

    kind = "loop-image"

    def setup(self, executor: Executor) -> str:
        if self.restore_from is None:
            executor.create_image(self.image, self.size_bytes)  # refuses an existing file
        else:
            executor.make_dir(str(Path(self.image).parent))
            if executor.exists(self.image):
                raise FsarenaError(
                    f"{self.image} exists and this run did not make it; remove it or "
                    "choose another --workdir"
                )
            executor.track("image", self.image)  # `fsarena cleanup` removes it after a crash
            executor.copy_image(self.restore_from, self.image)
        self.created = True
        try:
            self.device = executor.attach_loop(self.image)
        except BaseException:
            self.teardown(executor)
            raise
        return self.device

    def teardown(self, executor: Executor) -> None:
        """Detach and delete what setup made (never an earlier run's image); callable again."""
        if self.device is not None:
            executor.detach_loop(self.device)
            self.device = None
        if self.created:
            executor.remove_path(self.image)
            self.created = False

    def describe(self) -> dict[str, object]:
        return {"kind": self.kind, "size_bytes": self.size_bytes, "direct_io": True}
