"""Article D's big files: two films (815 MiB and 692 MiB, incompressible) copied and deleted.

The article copied Elephants Dream and Big Buck Bunny onto the test
filesystem and deleted each; fsarena generates two incompressible files of
the same sizes (video does not compress), copies each from the source
(`cp` + syncfs, verified by checksum) and deletes each (`rm -f` + syncfs).
"""

from __future__ import annotations

from typing import ClassVar

from fsarena.measure.collect import Command
from fsarena.tasks.base import (
    CP,
    REAL_USER_SYS,
    Check,
    Task,
    TaskContext,
    verify_absent,
    verify_copy,
)

FILMS_DIR = "films"


class _Film(Task):
    kind = "large_files"
    writes = True
    film: ClassVar[str]

    def target(self, ctx: TaskContext) -> str:
        return ctx.path(FILMS_DIR, self.film)

    def file(self, ctx: TaskContext) -> str:
        (entry,) = ctx.dataset(self.film).manifest.files
        return entry.path


class _FilmCopy(_Film):
    columns = REAL_USER_SYS
    payload = "write"

    def prepare(self, ctx: TaskContext) -> None:
        ctx.executor.make_dir(self.target(ctx))

    def commands(self, ctx: TaskContext) -> list[Command]:
        src = f"{ctx.dataset(self.film).root}/{self.file(ctx)}"
        return [Command((*CP, src, self.target(ctx) + "/"))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [verify_copy(ctx, self.film, self.target(ctx))]

    def payload_bytes(self, ctx: TaskContext) -> int:
        return ctx.dataset(self.film).manifest.total_bytes


class _FilmDelete(_Film):
    columns = REAL_USER_SYS

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(("rm", "-f", ctx.path(FILMS_DIR, self.film, self.file(ctx))))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [verify_absent(ctx, ctx.path(FILMS_DIR, self.film, self.file(ctx)))]


class Film1Copy(_FilmCopy):
    """Copy the first film (Elephants Dream, 815 MiB at scale 1) onto the test filesystem."""

    name = "film1_copy"
    film = "film1"
    datasets = ("film1",)


class Film2Copy(_FilmCopy):
    """Copy the second film (Big Buck Bunny, 692 MiB at scale 1) onto the test filesystem."""

    name = "film2_copy"
    film = "film2"
    datasets = ("film2",)


class Film1Delete(_FilmDelete):
    """Delete the first film (`rm -f`), syncfs included."""

    name = "film1_delete"
    film = "film1"
    datasets = ("film1",)


class Film2Delete(_FilmDelete):
    """Delete the second film (`rm -f`), syncfs included."""

    name = "film2_delete"
    film = "film2"
    datasets = ("film2",)


TASKS = (Film1Copy, Film2Copy, Film1Delete, Film2Delete)
