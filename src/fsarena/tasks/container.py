"""Container images: podman's storage on the test filesystem: load, copy-up, remove.

What a container host spends its disk time on (podman #8516: 69 s of a
73 s pull go to layer extraction after the download). Debian's podman runs
rootful with `--root` on the test filesystem, the overlay storage driver,
cgroupfs and file events (no systemd needed), and its run root outside the
test filesystem. The image is built offline, untimed, in the scratch
directory: a docker-archive whose layers are the data of the debs dataset's
packages (`dpkg-deb --fsys-tarfile`, one layer per package), so its content
is real. Timed: `podman load` (every layer unpacked into overlay storage);
then, on a container made and mounted untimed, `chmod u+w` of a seeded 10 %
of its files, which makes overlayfs copy each one up whole; then
`podman rm` and `podman rmi -a`. Verified: the image is listed after the
load, `podman diff` names every changed file, and no image or container is
left. Filesystems overlayfs cannot use as upper layer are skipped with the
profile's reason. Where podman cannot run, umoci does the same work on the
same layers (fsarena.tasks.images), and every run says which engine ran.
"""

from __future__ import annotations

import hashlib
import json
import random

from fsarena.errors import FsarenaError
from fsarena.measure.collect import Command
from fsarena.tasks import images
from fsarena.tasks.base import REAL_USER_SYS, Check, Task, TaskContext, Tool

DATASET = "debs"
STORE = "containers"
IMAGE = "localhost/fsarena-layers:1"
CONTAINER = "fsarena-copyup"
CHANGED_SHARE = 0.10
SEED = 16


def podman(ctx: TaskContext, *args: str) -> tuple[str, ...]:
    return (
        "podman",
        "--root", ctx.path(STORE),
        "--runroot", _runroot(ctx),
        "--storage-driver", "overlay",
        "--cgroup-manager", "cgroupfs",
        "--events-backend", "file",
        *args,
    )  # fmt: skip


def _runroot(ctx: TaskContext) -> str:
    """podman's run state, outside the test filesystem, one per work directory and filesystem.

    podman refuses a run root longer than 50 characters, so it is a short name
    under /run (a tmpfs), removed by container_remove and before a fresh store.
    """
    key = hashlib.sha256(f"{ctx.scratch} {ctx.profile.name}".encode()).hexdigest()[:12]
    return f"/run/fsarena-podman-{key}"


def _fresh_runroot(ctx: TaskContext) -> None:
    """A new store (a fresh mkfs) must not meet the run state of the previous one."""
    if not ctx.executor.exists(ctx.path(STORE)):
        ctx.executor.remove_path(_runroot(ctx))


def _archive(ctx: TaskContext) -> str:
    """The docker-archive, built untimed in scratch from the packages' data (once per dataset)."""
    debs = ctx.dataset(DATASET)
    folder = f"{ctx.scratch}/image-{debs.manifest.digest()[:16]}"
    archive = f"{folder}.tar"
    if ctx.executor.exists(archive):
        return archive
    ctx.executor.remove_path(folder)
    ctx.executor.make_dir(folder)
    layers = images.build_layers(ctx, folder)
    manifest = [{"Config": "config.json", "RepoTags": [IMAGE], "Layers": [n for n, _ in layers]}]
    config = images.image_config([f"sha256:{digest}" for _, digest in layers])
    ctx.executor.write_file(f"{folder}/config.json", config)
    ctx.executor.write_file(f"{folder}/manifest.json", json.dumps(manifest).encode())
    ctx.executor.call(("tar", "-C", folder, "-cf", archive, "."))
    ctx.executor.remove_path(folder)
    return archive


class _Container(Task):
    tools = (
        Tool("podman", "podman"),
        Tool("umoci", "umoci"),
        Tool("tar", "tar"),
    )
    _engine: images.Engine
    _archive: str
    _chosen: list[str]
    _merged: str
    kind = "packages_containers"
    writes = True
    datasets = (DATASET,)
    columns = REAL_USER_SYS

    def unsupported(self, ctx: TaskContext) -> str:
        return ctx.profile.overlay_upper_unsupported

    def prepare(self, ctx: TaskContext) -> None:
        self._engine = images.engine(ctx)
        if self._podman:
            _fresh_runroot(ctx)

    @property
    def _podman(self) -> bool:
        return self._engine.name == "podman"

    def ensure_image(self, ctx: TaskContext) -> None:
        if not self._podman:
            images.ensure_loaded(ctx)
        elif not _listed(ctx, "images"):
            ctx.executor.call(podman(ctx, "load", "-q", "-i", _archive(ctx)))

    def checks(self, ok: bool, name: str, detail: str) -> list[Check]:
        """The task's check, and which engine ran (the reports say it)."""
        return [Check(name, ok, detail), self._engine.check()]


def _listed(ctx: TaskContext, what: str) -> list[str]:
    """Images or containers (all) podman knows in the test filesystem's store."""
    extra = ("-a",) if what == "ps" else ()
    return ctx.executor.output(podman(ctx, what, *extra, "-q")).split()


class ContainerLoad(_Container):
    """`podman load -i IMAGE.tar` into storage on the test filesystem, syncfs included.

    Every layer (one per package of the debs dataset) is unpacked by podman's
    overlay driver (with umoci: the OCI layout copied in and `umoci unpack`ed).
    Verified: the image is listed.
    """

    name = "container_load"

    def prepare(self, ctx: TaskContext) -> None:
        super().prepare(ctx)
        self._archive = _archive(ctx) if self._podman else images.layout(ctx)
        if not self._podman:
            images.fresh_store(ctx)

    def commands(self, ctx: TaskContext) -> list[Command]:
        if not self._podman:
            return images.load_commands(ctx, self._archive)
        return [Command(podman(ctx, "load", "-q", "-i", self._archive))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        found = _listed(ctx, "images") if self._podman else images.loaded(ctx)
        return self.checks(len(found) == 1, "image loaded", f"{len(found)} image(s) listed")


class ContainerCopyUp(_Container):
    """`chmod u+w` of a seeded 10 % of a container's files: overlayfs copies each one up.

    Untimed first: `podman create` and `podman mount` of the image (with umoci: an
    overlayfs mount over the unpacked bundle). Timed: the chmod of the chosen
    files through the container's merged directory, syncfs included. Verified:
    `podman diff` (with umoci: the upper directory) names every chosen file.
    """

    name = "container_copyup"

    def prepare(self, ctx: TaskContext) -> None:
        super().prepare(ctx)
        self.ensure_image(ctx)
        if self._podman:
            ctx.executor.call(podman(ctx, "create", "-q", "--name", CONTAINER, IMAGE))
            merged = ctx.executor.output(podman(ctx, "mount", CONTAINER)).strip()
        else:
            merged = images.mount_container(ctx)
        files = ctx.executor.output(("find", merged, "-type", "f")).splitlines()
        if not files:
            raise FsarenaError("the container image holds no files to change")
        rng = random.Random(SEED)
        chosen = rng.sample(sorted(files), max(1, round(len(files) * CHANGED_SHARE)))
        self._chosen = chosen
        self._merged = merged

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(("chmod", "u+w", *self._chosen))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        if self._podman:
            diff = ctx.executor.output(podman(ctx, "diff", CONTAINER)).splitlines()
            changed = {line.split(None, 1)[1] for line in diff if line.startswith("C ")}
        else:
            changed = images.copied_up(ctx)
        wanted = {p.removeprefix(self._merged) for p in self._chosen}
        missing = sorted(wanted - changed)
        detail = f"{len(wanted)} files copied up" if not missing else f"not changed: {missing[:3]}"
        return self.checks(not missing, "files copied up", detail)

    def cleanup(self, ctx: TaskContext) -> None:
        if not hasattr(self, "_engine"):
            return
        if not self._podman:
            images.unmount(ctx)
        elif CONTAINER in ctx.executor.output(podman(ctx, "ps", "-a", "--format", "{{.Names}}")):
            ctx.executor.call(podman(ctx, "umount", CONTAINER))


class ContainerRemove(_Container):
    """`podman rm -a` then `podman rmi -a`: containers, layers and image removed, syncfs included.

    With umoci: the container's upper and work directories, the bundle and the
    layout deleted. Verified: no container and no image left in the store.
    """

    name = "container_remove"

    def prepare(self, ctx: TaskContext) -> None:
        super().prepare(ctx)
        self.ensure_image(ctx)

    def commands(self, ctx: TaskContext) -> list[Command]:
        if not self._podman:
            return images.remove_commands(ctx)
        return [Command(podman(ctx, "rm", "-a", "-f")), Command(podman(ctx, "rmi", "-a"))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        left = _listed(ctx, "ps") + _listed(ctx, "images") if self._podman else images.left(ctx)
        detail = f"{len(left)} left" if left else "nothing left"
        return self.checks(not left, "store emptied", detail)

    def cleanup(self, ctx: TaskContext) -> None:
        if hasattr(self, "_engine") and self._podman:
            ctx.executor.remove_path(_runroot(ctx))


TASKS = (ContainerLoad, ContainerCopyUp, ContainerRemove)
