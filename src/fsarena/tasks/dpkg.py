"""Package installation: the real dpkg unpacks .deb files into a root on the test filesystem.

Two variants, as Debian's own measurements compare them (an install 1.8x
slower with dpkg's default than with --force-unsafe-io): `dpkg_unpack`,
dpkg's default (it fsyncs every file before renaming it into place), and
`dpkg_unpack_unsafe_io` (`--force-unsafe-io`: no fsync per file). Untimed
first: an empty dpkg database under the root (`var/lib/dpkg/{info,updates,
triggers}`, an empty `status`). Timed: `dpkg --root=R --force-depends
--force-script-chrootless --unpack DEBS...`, syncfs included, so both
variants end with everything on the device and differ only in how they got
there. The packages are the debs dataset (fsarena.datasets.debs). Verified:
`dpkg --root=R -V` checks every unpacked file against the packages' md5sums;
its only accepted complaints are conffiles, which an unpack leaves as
FILE.dpkg-new until configuration (each is checked to exist).
"""

from __future__ import annotations

from fsarena.measure.collect import Command
from fsarena.tasks.base import REAL_USER_SYS, Check, Task, TaskContext, Tool

DATASET = "debs"


class DpkgUnpack(Task):
    """`dpkg --root=R --force-depends --force-script-chrootless --unpack DEBS`, dpkg's default.

    dpkg fsyncs each file before its rename; syncfs ends the timed region.
    """

    tools = (Tool("dpkg", "dpkg"),)

    name = "dpkg_unpack"
    kind = "packages_containers"
    writes = True
    datasets = (DATASET,)
    columns = REAL_USER_SYS
    root_dir = "dpkg-root"
    options: tuple[str, ...] = ()

    def _root(self, ctx: TaskContext) -> str:
        return ctx.path(self.root_dir)

    def prepare(self, ctx: TaskContext) -> None:
        admin = f"{self._root(ctx)}/var/lib/dpkg"
        for sub in ("info", "updates", "triggers"):
            ctx.executor.make_dir(f"{admin}/{sub}")
        ctx.executor.write_file(f"{admin}/status", b"")

    def _debs(self, ctx: TaskContext) -> list[str]:
        source = ctx.dataset(DATASET)
        return [f"{source.root}/{f.path}" for f in source.manifest.files]

    def commands(self, ctx: TaskContext) -> list[Command]:
        argv = (
            "dpkg",
            f"--root={self._root(ctx)}",
            "--force-depends",
            "--force-script-chrootless",
            *self.options,
            "--unpack",
            *self._debs(ctx),
        )
        return [Command(argv)]

    def verify(self, ctx: TaskContext) -> list[Check]:
        root = self._root(ctx)
        report = ctx.executor.output(("dpkg", f"--root={root}", "-V")).splitlines()
        bad = [line for line in report if not line.startswith("missing   c ")]
        conffiles = [line.split(" c ", 1)[1].strip() for line in report if line not in bad]
        bad += [
            f"no {c}.dpkg-new" for c in conffiles if not ctx.executor.exists(f"{root}{c}.dpkg-new")
        ]
        count = 'cat "$1"/var/lib/dpkg/info/*.md5sums | wc -l'
        listed = ctx.executor.output(("sh", "-c", count, "sh", root))
        detail = f"{listed.strip()} files checked against md5sums, {len(conffiles)} conffiles"
        return [Check("unpacked files match md5sums", not bad, "; ".join(bad[:5]) or detail)]


class DpkgUnpackUnsafeIo(DpkgUnpack):
    """The same unpack with `--force-unsafe-io`: no fsync per file, syncfs at the end.

    Unpacked into another root, so the default variant's files stay beside it.
    """

    name = "dpkg_unpack_unsafe_io"
    root_dir = "dpkg-root-unsafe-io"
    options = ("--force-unsafe-io",)


TASKS = (DpkgUnpack, DpkgUnpackUnsafeIo)
